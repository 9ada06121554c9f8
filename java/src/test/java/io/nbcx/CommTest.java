package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Communicators made from others: dup (each of 4 Java threads of every
 * rank on its own duplicate of one world, at the same time), split with
 * uneven colours, UNDEFINED and reversed keys (and a split of a split),
 * dup keeping the topology, close while nothing is in flight and the
 * ERR_BUSY exception while something is. MpiCheck runs {@link #body} on
 * MPI ranks.
 */
class CommTest {
    static final int THREADS = 4, ROUNDS = 30;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void dupSplitFree(int n) {
        Nbcx.threads(n, CommTest::body);
    }

    static void body(Communicator comm) throws Exception {
        dupPerThread(comm, THREADS);
        splitUneven(comm);
        dupKeepsTopology(comm);
        freeBusy(comm);
    }

    /** threads Java threads per rank, thread t on its own dup t, all at once. */
    static void dupPerThread(Communicator comm, int threads) throws Exception {
        int p = comm.size(), me = comm.rank();
        List<Communicator> dups = new ArrayList<>();
        for (int t = 0; t < threads; t++) dups.add(comm.dup());
        for (Communicator d : dups) {
            assertEquals(p, d.size());
            assertEquals(me, d.rank());
            assertEquals(comm.transport(), d.transport());
        }
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> ths = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int tt = t;
            Communicator d = dups.get(t);
            Thread th = new Thread(() -> {
                try {
                    for (int k = 0; k < ROUNDS; k++) {
                        long[] x = {1000L * tt + me + k}, y = new long[1];
                        d.iallreduce(Buf.of(x), Buf.of(y), Op.SUM).await();
                        assertEquals(1000L * tt * p + (long) p * (p - 1) / 2 + (long) k * p, y[0]);
                        int[] b = {k % p == me ? tt * 7 + k : -1};
                        d.ibcast(Buf.of(b), k % p).await();
                        assertEquals(tt * 7 + k, b[0]);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "dup-" + t);
            ths.add(th);
            th.start();
        }
        for (Thread th : ths) th.join();
        if (!errors.isEmpty()) throw new AssertionError("a thread failed", errors.get(0));
        for (Communicator d : dups) d.close();
        for (Communicator d : dups) assertTrue(d.isClosed());
    }

    /** Colour 0 for rank % 3 == 0, 1 for rank % 3 == 1, UNDEFINED else; keys reverse the order. */
    static int colorOf(int r) {
        return r % 3 == 2 ? Communicator.UNDEFINED : r % 3;
    }

    static void splitUneven(Communicator comm) {
        int p = comm.size(), me = comm.rank();
        Communicator s = comm.split(colorOf(me), -me);
        if (colorOf(me) == Communicator.UNDEFINED) {
            assertNull(s);
        } else {
            List<Integer> members = new ArrayList<>();
            for (int r = p - 1; r >= 0; r--) if (colorOf(r) == colorOf(me)) members.add(r);
            assertEquals(members.size(), s.size());
            assertEquals(members.indexOf(me), s.rank());
            int[] all = new int[s.size()];
            s.iallgather(Buf.of(new int[] {me}), Buf.of(all)).await();
            assertArrayEquals(members.stream().mapToInt(Integer::intValue).toArray(), all);
            // A split of the split: everyone alone (colour = its new rank).
            Communicator alone = s.split(s.rank(), 0);
            assertEquals(1, alone.size());
            assertEquals(0, alone.rank());
            long[] x = {me}, y = new long[1];
            alone.iallreduce(Buf.of(x), Buf.of(y), Op.SUM).await();
            assertEquals(me, y[0]);
            alone.close();
            s.close();
        }
        // Same colour, equal keys: ranks keep their order.
        Communicator same = comm.split(7, 0);
        assertEquals(p, same.size());
        assertEquals(me, same.rank());
        same.close();
        comm.ibarrier().await();
    }

    static void dupKeepsTopology(Communicator comm) {
        int p = comm.size();
        comm.setCart(new int[] {p}, new boolean[] {true});
        Communicator d = comm.dup();
        assertArrayEquals(comm.neighbors()[0], d.neighbors()[0]);
        assertArrayEquals(comm.neighbors()[1], d.neighbors()[1]);
        int[] got = new int[2];
        d.ineighborAllgather(Buf.of(new int[] {d.rank()}), Buf.of(got)).await();
        assertArrayEquals(new int[] {(d.rank() + p - 1) % p, (d.rank() + 1) % p}, got);
        d.close();
        Communicator s = comm.split(0, 0); // split keeps none
        assertEquals(0, s.neighbors()[0].length);
        s.close();
    }

    static void freeBusy(Communicator comm) {
        int me = comm.rank();
        Communicator d = comm.dup();
        long[] x = {me + 1}, y = new long[1];
        if (me == 0) {
            // In flight (the others have not started theirs): close refuses.
            Request r = d.iallreduce(Buf.of(x), Buf.of(y), Op.SUM);
            NbcxException e = assertThrows(NbcxException.class, d::close);
            assertEquals(NbcxException.ERR_BUSY, e.code());
            assertFalse(d.isClosed());
            comm.ibarrier().await();
            r.await();
        } else {
            comm.ibarrier().await();
            d.iallreduce(Buf.of(x), Buf.of(y), Op.SUM).await();
        }
        int p = comm.size();
        assertEquals((long) p * (p + 1) / 2, y[0]);
        // An open persistent request keeps it busy too, until closed.
        PersistentRequest pr = d.barrierInit();
        assertEquals(NbcxException.ERR_BUSY, assertThrows(NbcxException.class, d::close).code());
        pr.start().await();
        pr.close();
        d.close();
        assertTrue(d.isClosed());
        d.close(); // idempotent
        assertEquals(NbcxException.ERR_COMM,
                assertThrows(NbcxException.class, () -> d.ibarrier()).code());
        assertEquals(NbcxException.ERR_COMM, assertThrows(NbcxException.class, d::dup).code());
    }

    @Test
    void badColorAndLeftOpen() {
        Communicator[] kept = new Communicator[1];
        Nbcx.threads(2, comm -> {
            assertEquals(NbcxException.ERR_ARG, assertThrows(NbcxException.class, () -> comm.split(-3, 0)).code());
            Communicator d = comm.dup();
            if (comm.rank() == 0) kept[0] = d;
            // left open: closed with the body's communicator
        });
        assertTrue(kept[0].isClosed());
    }
}
