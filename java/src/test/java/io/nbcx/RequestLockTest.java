package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The request's own lock (Request.lock, no ReentrantLock): a second
 * thread that calls test, isActive and toFuture while the first is blocked
 * in await on the same request waits for the lock and sees the result
 * once the operation completes; nothing deadlocks.
 */
class RequestLockTest {
    @Test
    void otherThreadsWhileOneAwaits() {
        for (Progress m : new Progress[] {Progress.CALLER, Progress.THREAD, Progress.AUTO}) {
            Progress before = Nbcx.progress();
            Nbcx.progress(m);
            try {
                Nbcx.threads(2, RequestLockTest::body);
            } finally {
                Nbcx.progress(before);
            }
        }
    }

    static void body(Communicator comm) throws Exception {
        for (int round = 0; round < 20; round++) {
            int[] x = {comm.rank() + round}, y = new int[1];
            if (comm.rank() == 1) Thread.sleep(round % 4); // the root's await blocks a while
            Request r = comm.iallreduce(Buf.of(x), Buf.of(y), Op.SUM);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger sawDone = new AtomicInteger();
            Thread poker = new Thread(() -> {
                CompletableFuture<Void> f = r.toFuture();
                while (!stop.get()) {
                    if (r.test()) sawDone.incrementAndGet();
                    r.isActive();
                }
                f.join();
                if (r.test() && !r.isActive()) sawDone.incrementAndGet();
            });
            poker.start();
            r.await();
            assertEquals(2 * round + 1, y[0]);
            assertFalse(r.isActive());
            stop.set(true);
            poker.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(poker.isAlive(), "the second thread is stuck on the request's lock");
            assertTrue(sawDone.get() >= 1, "the second thread never saw the request complete");
        }
    }
}
