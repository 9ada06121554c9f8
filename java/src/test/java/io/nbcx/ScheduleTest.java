package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The schedule builder from Java: a chain broadcast in fragments (array
 * windows received into and sent from the same staged array; and a direct
 * buffer), a ring step built from send, receive into scratch, copy and
 * reduce nodes (a built-in and a user operation), callback nodes (a
 * computed chain, one that throws), futures of schedules,
 * and the errors (peer, tag, unknown node, a cycle, use after start), on
 * 1-5 thread ranks against sequential references. MpiCheck runs
 * {@link #body} on MPI ranks.
 */
class ScheduleTest {
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void userSchedules(int n) {
        Nbcx.threads(n, ScheduleTest::body);
    }

    static void chain(Communicator comm, Buf[] pieces, int root) {
        int p = comm.size(), me = comm.rank(), rel = (me - root + p) % p;
        try (Schedule s = comm.schedule()) {
            int prevSend = -1;
            for (int i = 0; i < pieces.length; i++) {
                int recv = rel > 0 ? s.recv(pieces[i], (me - 1 + p) % p, i) : -1;
                if (rel < p - 1) {
                    int send = s.send(pieces[i], (me + 1) % p, i);
                    if (recv >= 0) s.depend(recv, send);
                    if (prevSend >= 0) s.depend(prevSend, send);
                    prevSend = send;
                }
            }
            assertEquals(pieces.length * ((rel > 0 ? 1 : 0) + (rel < p - 1 ? 1 : 0)), s.size());
            s.start().await();
        }
    }

    /**
     * Callback nodes: a chain 0 -> 1 -> ... where each rank's callback
     * computes v = 2 * (what it received, or a seed) + rank between its
     * receive and its send (direct buffers); a callback that throws fails
     * the request with ERR_OP (its successor never runs).
     */
    static void callNodes(Communicator comm) throws Exception {
        int p = comm.size(), me = comm.rank(), m = 4;
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        try (Schedule s = comm.schedule()) {
            Buf in = s.scratch(Datatype.LONG, m), out = s.scratch(Datatype.LONG, m);
            int recv = me > 0 ? s.recv(in, me - 1, 7) : -1;
            int call = s.call(() -> {
                runs.incrementAndGet();
                for (int i = 0; i < m; i++) {
                    long prev = me > 0 ? in.byteBuffer().getLong(8 * i) : 10 + i;
                    out.byteBuffer().putLong(8 * i, 2 * prev + me);
                }
            });
            if (recv >= 0) s.depend(recv, call);
            if (me < p - 1) s.depend(call, s.send(out, me + 1, 7));
            s.start().await();
            for (int i = 0; i < m; i++) {
                long v = 10 + i;
                for (int k = 0; k <= me; k++) v = 2 * v + k;
                assertEquals(v, out.byteBuffer().getLong(8 * i), "callback chain element " + i);
            }
        }
        assertEquals(1, runs.get(), "the callback ran once");

        try (Schedule s = comm.schedule()) {
            assertEquals(NbcxException.ERR_ARG, assertThrows(NbcxException.class, () -> s.call(null)).code());
            int bad = s.call(() -> {
                throw new IllegalStateException("planted");
            });
            s.depend(bad, s.call(runs::incrementAndGet));
            Request r = s.start();
            NbcxException e = assertThrows(NbcxException.class, r::await);
            assertEquals(NbcxException.ERR_OP, e.code(), e.getMessage());
            assertTrue(e.getCause() instanceof IllegalStateException, String.valueOf(e.getCause()));
        }
        assertEquals(1, runs.get(), "the successor of a failed callback did not run");
        comm.ibarrier().await();
    }

    static void body(Communicator comm) throws Exception {
        int p = comm.size(), me = comm.rank();
        for (int root = 0; root < p; root += Math.max(1, p - 1)) {
            // 37 ints in fragments of 5 (the last one shorter), guards around.
            int n = 37, f = 5;
            int[] a = new int[n + 2];
            java.util.Arrays.fill(a, -7);
            for (int i = 0; i < n; i++) a[1 + i] = me == root ? i * 11 + root : -1;
            Buf[] pieces = new Buf[(n + f - 1) / f];
            for (int i = 0; i < pieces.length; i++) pieces[i] = Buf.of(a, 1 + i * f, Math.min(f, n - i * f));
            chain(comm, pieces, root);
            assertEquals(-7, a[0]);
            assertEquals(-7, a[n + 1]);
            for (int i = 0; i < n; i++) assertEquals(i * 11 + root, a[1 + i], "chain bcast element " + i);

            // The same with a direct buffer of doubles.
            Buf d = Buf.allocateDirect(Datatype.DOUBLE, n);
            for (int i = 0; i < n; i++) d.byteBuffer().putDouble(8 * i, me == root ? i * 0.5 : -1);
            Buf[] dp = new Buf[pieces.length];
            for (int i = 0; i < dp.length; i++)
                dp[i] = Buf.of(d.byteBuffer(), Datatype.DOUBLE, i * f, Math.min(f, n - i * f));
            chain(comm, dp, root);
            for (int i = 0; i < n; i++) assertEquals(i * 0.5, d.byteBuffer().getDouble(8 * i), "direct element " + i);
        }

        // A ring step: acc = mine (copy), then acc += left's (receive into
        // scratch, reduce); mine goes to the right. With a user operation
        // (max) on a second vector. The request as a future.
        int m = 6;
        long[] mine = new long[m], acc = new long[m], mx = new long[m];
        for (int i = 0; i < m; i++) mine[i] = 100L * me + i;
        int left = (me - 1 + p) % p, right = (me + 1) % p;
        try (Op max = Op.ofLong(Math::max); Schedule s = comm.schedule()) {
            Buf tmp = s.scratch(Datatype.LONG, m);
            int recv = s.recv(tmp, left, 3);
            s.send(Buf.of(mine), right, 3);
            int copy = s.copy(Buf.of(mine), Buf.of(acc));
            int copy2 = s.copy(Buf.of(mine), Buf.of(mx));
            int red = s.reduce(tmp, Buf.of(acc), Op.SUM);
            int red2 = s.reduce(tmp, Buf.of(mx), max);
            s.depend(recv, red);
            s.depend(copy, red);
            s.depend(recv, red2);
            s.depend(copy2, red2);
            s.start().toFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
        for (int i = 0; i < m; i++) {
            assertEquals(100L * me + 100L * left + 2 * i, acc[i], "ring sum " + i);
            assertEquals(Math.max(100L * me, 100L * left) + i, mx[i], "ring max " + i);
        }

        callNodes(comm);

        // Errors: nothing is started by a rejected node or a cycle.
        try (Communicator dup = comm.dup()) {
            Schedule s = dup.schedule();
            int[] x = new int[2];
            assertEquals(NbcxException.ERR_RANK, assertThrows(NbcxException.class, () -> s.send(Buf.of(x), p, 0)).code());
            assertEquals(NbcxException.ERR_TAG,
                    assertThrows(NbcxException.class, () -> s.send(Buf.of(x), 0, Schedule.TAG_MAX + 1)).code());
            assertEquals(NbcxException.ERR_NODE, assertThrows(NbcxException.class, () -> s.depend(0, 99)).code());
            assertEquals(NbcxException.ERR_TYPE,
                    assertThrows(NbcxException.class, () -> s.copy(Buf.of(x), Buf.of(new long[2]))).code());
            int c1 = s.copy(Buf.of(x, 0, 1), Buf.of(x, 1, 1)), c2 = s.copy(Buf.of(x, 1, 1), Buf.of(x, 0, 1));
            s.depend(c1, c2);
            s.depend(c2, c1);
            // An open schedule keeps its communicator busy.
            assertEquals(NbcxException.ERR_BUSY, assertThrows(NbcxException.class, dup::close).code());
            assertEquals(NbcxException.ERR_NODE, assertThrows(NbcxException.class, s::start).code());
            assertThrows(NbcxException.class, () -> s.copy(Buf.of(x), Buf.of(x))); // after start
            s.close();
            // An unstarted schedule closed: the communicator is free again.
            Schedule u = dup.schedule();
            u.send(Buf.of(x), 0, 0);
            u.close();
            dup.ibarrier().await();
        }
    }
}
