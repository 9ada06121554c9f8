package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * CompletableFuture composition over nbcx's completion callback: thenCompose
 * chains of collectives (each link started from the previous link's
 * completion, on the thread nbcx calls back), against a sequential
 * reference, and where the stages ran (never the ranks' own threads while
 * they block in get(), except caller mode's driver).
 */
class ComposeTest {
    static final int LINKS = 12;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void thenComposeChains(int n) {
        Nbcx.threads(n, ComposeTest::chainBody);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 3})
    void persistentChain(int n) {
        Nbcx.threads(n, comm -> {
            int p = comm.size();
            long[] x = new long[1], y = new long[1];
            try (PersistentRequest pr = comm.allreduceInit(Buf.of(x), Buf.of(y), Op.SUM)) {
                CompletableFuture<Long> f = CompletableFuture.completedFuture(0L);
                for (int k = 0; k < LINKS; k++) {
                    int kk = k;
                    f = f.thenCompose(acc -> {
                        x[0] = acc + kk; // every rank holds the same acc
                        return pr.start().toFuture().thenApply(v -> y[0]);
                    });
                }
                long acc = 0;
                for (int k = 0; k < LINKS; k++) acc = (acc + k) * p;
                assertEquals(acc, f.get(60, TimeUnit.SECONDS));
                assertFalse(pr.isActive());
            }
        });
    }

    /**
     * A thenCompose chain over the new operations, on a duplicate with a
     * ring topology: a neighbour allgather, then a user schedule (each rank
     * sends a weighted sum to the right), then an allgather, each link
     * started from the previous one's completion (fails when the schedule
     * sends to the left instead).
     */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void neighbourScheduleChain(int n) {
        Nbcx.threads(n, ComposeTest::newOpsChainBody);
    }

    static void newOpsChainBody(Communicator world) throws Exception {
        try (Communicator comm = world.dup()) {
            int p = comm.size(), me = comm.rank();
            comm.setCart(new int[] {p}, new boolean[] {true});
            long[] x = new long[1], nb = new long[2], got = new long[1], all = new long[p];
            CompletableFuture<Long> f = CompletableFuture.completedFuture(0L);
            for (int k = 0; k < 6; k++) {
                int kk = k;
                f = f.thenCompose(acc -> {
                    x[0] = acc + me + kk;
                    return comm.ineighborAllgather(Buf.of(x), Buf.of(nb)).toFuture();
                }).thenCompose(v -> {
                    x[0] = 2 * nb[0] + nb[1]; // twice the left's + the right's
                    try (Schedule s = comm.schedule()) {
                        s.recv(Buf.of(got), (me - 1 + p) % p, kk);
                        s.send(Buf.of(x), (me + 1) % p, kk);
                        return s.start().toFuture();
                    }
                }).thenCompose(v -> comm.iallgather(Buf.of(got), Buf.of(all)).toFuture().thenApply(w -> {
                    long a = 0;
                    for (int r = 0; r < p; r++) a += (r + 1) * all[r];
                    return a;
                }));
            }
            // Sequential reference: every rank's value, round by round.
            long acc = 0;
            for (int k = 0; k < 6; k++) {
                long[] xs = new long[p], ys = new long[p];
                for (int r = 0; r < p; r++) xs[r] = acc + r + k;
                for (int r = 0; r < p; r++) ys[r] = 2 * xs[(r - 1 + p) % p] + xs[(r + 1) % p];
                long sum = 0;
                for (int r = 0; r < p; r++) sum += (r + 1) * ys[(r - 1 + p) % p];
                acc = sum;
            }
            assertEquals(acc, f.get(60, TimeUnit.SECONDS));
        }
    }

    static void chainBody(Communicator comm) throws Exception {
        int p = comm.size(), me = comm.rank();
        // acc_{k+1} = sum over ranks of (acc_k + rank + k): an allreduce per
        // link, alternating with a bcast from rank k % p and a barrier.
        long[] in = new long[4], out = new long[4], b = new long[4];
        AtomicInteger stages = new AtomicInteger();
        CompletableFuture<Long> f = CompletableFuture.completedFuture(0L);
        for (int k = 0; k < LINKS; k++) {
            int kk = k;
            f = f.thenCompose(acc -> {
                for (int i = 0; i < 4; i++) in[i] = acc + me + kk + i;
                return comm.iallreduce(Buf.of(in), Buf.of(out), Op.SUM).toFuture();
            }).thenCompose(v -> {
                stages.incrementAndGet();
                int root = kk % p;
                if (me == root) System.arraycopy(out, 0, b, 0, 4);
                else java.util.Arrays.fill(b, -1);
                return comm.ibcast(Buf.of(b), root).toFuture();
            }).thenCompose(v -> comm.ibarrier().toFuture().thenApply(w -> {
                for (int i = 0; i < 4; i++) assertEquals(b[0] + (long) i * p, b[i]);
                return b[0];
            }));
        }
        long acc = 0;
        for (int k = 0; k < LINKS; k++) acc = acc * p + (long) p * (p - 1) / 2 + (long) p * k;
        assertEquals(acc, f.get(60, TimeUnit.SECONDS));
        assertEquals(LINKS, stages.get());

        // A future asked for after completion is done at once; twice the same.
        Request r = comm.ibarrier();
        r.await();
        assertTrue(r.toFuture().isDone());

        // Many futures in flight at once, composed with allOf.
        int m = 32;
        long[][] xs = new long[m][1], ys = new long[m][1];
        CompletableFuture<?>[] fs = new CompletableFuture<?>[m];
        for (int i = 0; i < m; i++) {
            xs[i][0] = i + me;
            fs[i] = comm.iallreduce(Buf.of(xs[i]), Buf.of(ys[i]), Op.MAX).toFuture();
        }
        CompletableFuture.allOf(fs).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < m; i++) assertEquals(i + p - 1, ys[i][0]);
    }
}
