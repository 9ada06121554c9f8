package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/**
 * What an operation costs the binding, counted rather than timed (docs/java.md,
 * "What each operation costs"): the bytes of native memory staged for array
 * windows (Request.STAGED_BYTES) and the JNI look-ups of direct buffers'
 * addresses (Buf.ADDRESS_LOOKUPS). An iscatter root stages its size() blocks,
 * not the rest of its array, and every other rank its one block; direct
 * buffers stage nothing and are looked up once per buffer, not once per
 * operation.
 */
class StagingCostTest {
    /** Bytes staged by body on every rank of p thread ranks, per rank (read after each body). */
    static long[] staged(int p, java.util.function.Consumer<Communicator> body) {
        long[] out = new long[p];
        java.util.concurrent.CyclicBarrier bar = new java.util.concurrent.CyclicBarrier(p);
        Nbcx.threads(p, comm -> {
            // One rank at a time: the counter is process-wide.
            for (int turn = 0; turn < p; turn++) {
                await(bar);
                if (turn == comm.rank()) {
                    long before = Request.STAGED_BYTES.sum();
                    body.accept(comm);
                    out[turn] = Request.STAGED_BYTES.sum() - before;
                }
            }
            await(bar);
        });
        return out;
    }

    static void await(java.util.concurrent.CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /**
     * Each rank starts its operation alone in its turn and completes it
     * in the last turn (the collective needs every rank). Returns the bytes
     * each rank's start staged.
     */
    static long[] startStaged(int p, java.util.function.Function<Communicator, Request> start) {
        long[] out = new long[p];
        Request[] reqs = new Request[p];
        java.util.concurrent.CyclicBarrier bar = new java.util.concurrent.CyclicBarrier(p);
        Nbcx.threads(p, comm -> {
            for (int turn = 0; turn < p; turn++) {
                await(bar);
                if (turn == comm.rank()) {
                    long before = Request.STAGED_BYTES.sum();
                    reqs[turn] = start.apply(comm);
                    out[turn] = Request.STAGED_BYTES.sum() - before;
                }
            }
            await(bar);
            reqs[comm.rank()].await();
        });
        return out;
    }

    @Test
    void scatterRootStagesItsBlocksOnly() {
        for (int p = 1; p <= 4; p++) {
            int block = 2048, size = p; // doubles: 16 KiB a block
            long[] got = startStaged(p, comm -> {
                // The root's window is larger than its blocks (3 spare
                // blocks: the scatter uses the first size() of them), at an
                // offset of 5 elements in an array larger still.
                double[] send = new double[5 + (size + 4) * block];
                for (int i = 0; i < send.length; i++) send[i] = i;
                Buf s = comm.rank() == 0 ? Buf.of(send, 5, (size + 3) * block) : null;
                return comm.iscatter(s, Buf.of(new double[block]), 0);
            });
            for (int r = 0; r < p; r++) {
                long want = (r == 0 ? (long) size * block * 8 : 0) + (long) block * 8;
                assertEquals(want, got[r], "iscatter on " + p + " ranks: bytes staged by rank " + r);
            }
        }
    }

    @Test
    void scatterResultFromTheWindow() {
        // The same shape, checked: rank r gets block r of the window, not of the array.
        for (int p = 1; p <= 4; p++) {
            int block = 3000;
            Nbcx.threads(p, comm -> {
                int n = comm.size();
                long[] send = new long[7 + (n + 2) * block];
                for (int i = 0; i < send.length; i++) send[i] = 1000L * i + 1;
                long[] recv = new long[block];
                comm.iscatter(comm.rank() == 0 ? Buf.of(send, 7, (n + 1) * block) : null, Buf.of(recv), 0).await();
                for (int i = 0; i < block; i++)
                    assertEquals(1000L * (7 + comm.rank() * block + i) + 1, recv[i], "rank " + comm.rank() + " element " + i);
            });
        }
    }

    @Test
    void otherRootedOperationsStageTheirWindows() {
        int p = 3, block = 5000; // ints: 20 KiB a block
        long[] bcast = startStaged(p, comm -> comm.ibcast(Buf.of(new int[block + 9], 4, block), 1));
        for (int r = 0; r < p; r++) assertEquals((long) block * 4, bcast[r], "ibcast: rank " + r);
        long[] gather = startStaged(p, comm -> comm.igather(Buf.of(new int[block]),
                comm.rank() == 2 ? Buf.of(new int[(p + 2) * block], block, p * block) : null, 2));
        for (int r = 0; r < p; r++)
            assertEquals((long) block * 4 * (r == 2 ? p + 1 : 1), gather[r], "igather: rank " + r);
    }

    @Test
    void directBuffersStageNothingAndAreLookedUpOnce() {
        int p = 2, block = 4096, ops = 50;
        long staged0 = Request.STAGED_BYTES.sum(), lookups0 = Buf.ADDRESS_LOOKUPS.get();
        Nbcx.threads(p, comm -> {
            Buf s = comm.rank() == 0 ? Buf.allocateDirect(Datatype.BYTE, block * comm.size()) : null;
            Buf r = Buf.allocateDirect(Datatype.BYTE, block);
            Buf b = Buf.allocateDirect(Datatype.BYTE, block);
            for (int k = 0; k < ops; k++) {
                comm.iscatter(s, r, 0).await();
                comm.ibcast(b, 0).await();
                comm.igather(r, s, 0).await();
            }
        });
        assertEquals(0, Request.STAGED_BYTES.sum() - staged0, "bytes staged for direct buffers");
        // Each buffer once at most (3 on the root, 2 elsewhere), never per operation.
        long lookups = Buf.ADDRESS_LOOKUPS.get() - lookups0;
        assertTrue(lookups <= 3 + 2 * (p - 1), "address look-ups for " + ops + " rounds of 3 operations: " + lookups);
        assertTrue(lookups >= 1, "the counter counts");
    }
}
