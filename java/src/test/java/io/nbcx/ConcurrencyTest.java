package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** 4 Java threads, each running its own set of thread ranks (its own communicators). */
class ConcurrencyTest {
    @Test
    void fourJavaThreadsEachOnItsOwnCommunicator() throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int tag = t;
                fs.add(ex.submit(() -> Nbcx.threads(3, comm -> {
                    int p = comm.size();
                    for (int k = 0; k < 50; k++) {
                        long[] x = {tag * 1_000_000L + k * 1000 + comm.rank()}, s = new long[1];
                        int[] bc = new int[8];
                        if (comm.rank() == k % p) java.util.Arrays.fill(bc, tag * 100 + k);
                        Request a = comm.iallreduce(Buf.of(x), Buf.of(s), Op.SUM);
                        Request b = comm.ibcast(Buf.of(bc), k % p);
                        Request.waitAll(a, b);
                        assertEquals(p * (tag * 1_000_000L + k * 1000) + p * (p - 1) / 2, s[0]);
                        for (int v : bc) assertEquals(tag * 100 + k, v);
                    }
                })));
            }
            for (Future<?> f : fs) f.get(120, TimeUnit.SECONDS);
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void severalThreadsOfOneRankShareItsCommunicator() {
        // Each rank waits for its requests from another Java thread.
        Nbcx.threads(4, comm -> {
            int[] x = {comm.rank()}, s = new int[1];
            Request r = comm.iallreduce(Buf.of(x), Buf.of(s), Op.SUM);
            Thread t = new Thread(r::await);
            t.start();
            t.join();
            assertTrue(r.test());
            assertEquals(6, s[0]);
        });
    }
}
