package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** toFuture(): completed without test/await, composable, errors included. */
class FutureTest {
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 8})
    void futuresComplete(int n) {
        Nbcx.threads(n, FutureTest::futuresBody);
    }

    static void futuresBody(Communicator comm) throws Exception {
        {
            int p = comm.size();
            List<CompletableFuture<Integer>> fs = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                int[] x = {k}, out = new int[1];
                // The result is read in a dependent stage: the array holds it by then.
                fs.add(comm.iallreduce(Buf.of(x), Buf.of(out), Op.SUM).toFuture().thenApply(v -> out[0]));
            }
            CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            for (int k = 0; k < 10; k++) assertEquals(k * p, fs.get(k).join());

            // Chained: a collective started from a completion stage.
            double[] a = {comm.rank()}, b = new double[1];
            CompletableFuture<Double> chain = comm.ibarrier().toFuture()
                    .thenCompose(v -> comm.iallreduce(Buf.of(a), Buf.of(b), Op.MAX).toFuture())
                    .thenApply(v -> b[0]);
            assertEquals(p - 1.0, chain.get(60, TimeUnit.SECONDS));

            // Same future twice; a completed request's future is already done.
            Request r = comm.ibarrier();
            assertSame(r.toFuture(), r.toFuture());
            r.await();
            assertTrue(r.toFuture().isDone());

            // Persistent: a new future for every start.
            int[] x = {1}, y = new int[1];
            try (PersistentRequest pr = comm.allreduceInit(Buf.of(x), Buf.of(y), Op.SUM)) {
                for (int k = 0; k < 5; k++) {
                    x[0] = k;
                    pr.start().toFuture().get(60, TimeUnit.SECONDS);
                    assertEquals(k * p, y[0]);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 3})
    void failingUserOpFailsTheFuture(int n) {
        Nbcx.threads(n, comm -> {
            try (Op bad = Op.create((in, inout, c, t) -> { throw new IllegalStateException("boom"); }, true)) {
                int[] x = {1}, y = new int[1];
                CompletableFuture<Void> f = comm.iallreduce(Buf.of(x), Buf.of(y), bad).toFuture();
                if (comm.size() > 1) {
                    // Only ranks that apply the operation see the failure.
                    try {
                        f.join();
                    } catch (CompletionException e) {
                        assertInstanceOf(NbcxException.class, e.getCause());
                        assertEquals(NbcxException.ERR_OP, ((NbcxException) e.getCause()).code());
                    }
                } else {
                    f.handle((v, e) -> null).join(); // one rank: nothing to reduce
                }
            }
        });
    }
}
