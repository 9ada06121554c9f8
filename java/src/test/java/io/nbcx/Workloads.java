package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Every collective on thread ranks, checked against a sequential Java
 * reference. Shared by the tests and the leak check (which loops them).
 */
final class Workloads {
    private Workloads() {}

    static final String[] OPS = {"barrier", "bcast", "reduce", "allreduce", "allreduce_inplace",
        "allreduce_userop", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
        "alltoall", "alltoallv", "scan", "exscan", "reduce_scatter_block", "direct_bcast",
        "direct_allreduce", "direct_alltoall", "types", "reduce_scatter"};

    static final int N = 5;   // elements per block
    static final int OFF = 2; // offset of the window in arrays (guard elements around it)
    static final int GUARD = -7;

    /** Rank r's i-th input element. */
    static int v(int r, int i) {
        return r * 100 + i * 7 + 3;
    }

    static int[] input(int r, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = v(r, i);
        return a;
    }

    /** An array of n elements in a window at OFF, GUARD around it. */
    static int[] guarded(int n) {
        int[] a = new int[n + 2 * OFF];
        Arrays.fill(a, GUARD);
        return a;
    }

    static int[] window(int[] a, int n) {
        return Arrays.copyOfRange(a, OFF, OFF + n);
    }

    static void checkGuards(int[] a, int n) {
        for (int i = 0; i < OFF; i++) {
            assertEquals(GUARD, a[i], "guard before the window");
            assertEquals(GUARD, a[a.length - 1 - i], "guard after the window");
        }
    }

    /** Block sizes of the v-collectives: rank i has i % 3 + 1 elements (rank 1 of 3+: none). */
    static int vcount(int i) {
        return i % 4 == 1 ? 0 : i % 3 + 1;
    }

    static void run(String op, int n) {
        Nbcx.threads(n, comm -> body(op, comm));
    }

    static void body(String op, Communicator comm) {
        int r = comm.rank(), p = comm.size();
        int root = p - 1 - (p / 3);
        switch (op) {
            case "barrier": {
                comm.ibarrier().await();
                break;
            }
            case "bcast": {
                int[] b = guarded(N);
                if (r == root) System.arraycopy(input(r, N), 0, b, OFF, N);
                comm.ibcast(Buf.of(b, OFF, N), root).await();
                assertArrayEquals(input(root, N), window(b, N));
                checkGuards(b, N);
                break;
            }
            case "reduce": {
                double[] s = new double[N], out = new double[N];
                for (int i = 0; i < N; i++) s[i] = v(r, i) * 0.5;
                comm.ireduce(Buf.of(s), r == root ? Buf.of(out) : null, Op.SUM, root).await();
                if (r == root) {
                    double[] want = new double[N];
                    for (int q = 0; q < p; q++) for (int i = 0; i < N; i++) want[i] += v(q, i) * 0.5;
                    assertArrayEquals(want, out, 1e-9);
                }
                break;
            }
            case "allreduce": {
                int[] out = guarded(N);
                comm.iallreduce(Buf.of(input(r, N)), Buf.of(out, OFF, N), Op.MAX).await();
                assertArrayEquals(input(p - 1, N), window(out, N));
                checkGuards(out, N);
                long[] ls = {r + 1L, 1L << 40}, lo = new long[2];
                comm.iallreduce(Buf.of(ls), Buf.of(lo), Op.SUM).await();
                assertArrayEquals(new long[] {(long) p * (p + 1) / 2, (long) p << 40}, lo);
                break;
            }
            case "allreduce_inplace": {
                int[] b = input(r, N);
                comm.iallreduce(Buf.IN_PLACE, Buf.of(b), Op.SUM).await();
                int[] want = new int[N];
                for (int q = 0; q < p; q++) for (int i = 0; i < N; i++) want[i] += v(q, i);
                assertArrayEquals(want, b);
                break;
            }
            case "allreduce_userop": {
                // Not commutative: "keep the left operand" gives rank 0's vector.
                try (Op first = Op.create((in, inout, cnt, t) -> {
                    for (int i = 0; i < cnt; i++) inout.putInt(4 * i, in.getInt(4 * i));
                }, false); Op sum = Op.ofInt(Integer::sum)) {
                    int[] out = new int[N];
                    comm.iallreduce(Buf.of(input(r, N)), Buf.of(out), first).await();
                    assertArrayEquals(input(0, N), out);
                    int[] s = new int[N];
                    comm.iallreduce(Buf.of(input(r, N)), Buf.of(s), sum).await();
                    int[] want = new int[N];
                    for (int q = 0; q < p; q++) for (int i = 0; i < N; i++) want[i] += v(q, i);
                    assertArrayEquals(want, s);
                }
                break;
            }
            case "gather": {
                int[] out = r == root ? guarded(N * p) : null;
                comm.igather(Buf.of(input(r, N)), r == root ? Buf.of(out, OFF, N * p) : null, root).await();
                if (r == root) {
                    for (int q = 0; q < p; q++)
                        assertArrayEquals(input(q, N), Arrays.copyOfRange(out, OFF + q * N, OFF + (q + 1) * N));
                    checkGuards(out, N * p);
                }
                break;
            }
            case "gatherv": {
                // Blocks in reverse rank order with a gap of 1 after each.
                int[] counts = new int[p], displs = new int[p];
                int pos = 0;
                for (int q = p - 1; q >= 0; q--) {
                    counts[q] = vcount(q);
                    displs[q] = pos;
                    pos += counts[q] + 1;
                }
                int[] out = r == root ? guarded(pos) : null;
                if (r == root) Arrays.fill(out, GUARD);
                comm.igatherv(Buf.of(input(r, vcount(r))), r == root ? Buf.of(out, OFF, pos) : null,
                        r == root ? counts : null, r == root ? displs : null, root).await();
                if (r == root) {
                    int[] want = new int[pos];
                    Arrays.fill(want, GUARD);
                    for (int q = 0; q < p; q++) System.arraycopy(input(q, counts[q]), 0, want, displs[q], counts[q]);
                    assertArrayEquals(want, window(out, pos));
                    checkGuards(out, pos);
                }
                break;
            }
            case "scatter": {
                int[] src = null;
                if (r == root) {
                    src = new int[N * p];
                    for (int q = 0; q < p; q++) System.arraycopy(input(q, N), 0, src, q * N, N);
                }
                int[] out = guarded(N);
                comm.iscatter(r == root ? Buf.of(src) : null, Buf.of(out, OFF, N), root).await();
                assertArrayEquals(input(r, N), window(out, N));
                checkGuards(out, N);
                break;
            }
            case "scatterv": {
                int[] counts = new int[p], displs = new int[p];
                int pos = 0;
                for (int q = 0; q < p; q++) {
                    counts[q] = vcount(q);
                    displs[q] = pos;
                    pos += counts[q] + 2;
                }
                int[] src = null;
                if (r == root) {
                    src = new int[pos];
                    for (int q = 0; q < p; q++) System.arraycopy(input(q, counts[q]), 0, src, displs[q], counts[q]);
                }
                int[] out = guarded(vcount(r));
                comm.iscatterv(r == root ? Buf.of(src) : null, counts, displs, Buf.of(out, OFF, vcount(r)), root)
                        .await();
                assertArrayEquals(input(r, vcount(r)), window(out, vcount(r)));
                checkGuards(out, vcount(r));
                break;
            }
            case "allgather": {
                int[] out = guarded(N * p);
                comm.iallgather(Buf.of(input(r, N)), Buf.of(out, OFF, N * p)).await();
                for (int q = 0; q < p; q++)
                    assertArrayEquals(input(q, N), Arrays.copyOfRange(out, OFF + q * N, OFF + (q + 1) * N));
                checkGuards(out, N * p);
                // In place: each rank's block already in its slot.
                int[] b = new int[N * p];
                System.arraycopy(input(r, N), 0, b, r * N, N);
                comm.iallgather(Buf.IN_PLACE, Buf.of(b)).await();
                for (int q = 0; q < p; q++) assertArrayEquals(input(q, N), Arrays.copyOfRange(b, q * N, (q + 1) * N));
                break;
            }
            case "allgatherv": {
                int[] counts = new int[p], displs = new int[p];
                int pos = 0;
                for (int q = 0; q < p; q++) {
                    counts[q] = vcount(q);
                    displs[q] = pos + 1;
                    pos += counts[q] + 1;
                }
                int[] out = guarded(pos);
                Arrays.fill(out, GUARD);
                comm.iallgatherv(Buf.of(input(r, vcount(r))), Buf.of(out, OFF, pos), counts, displs).await();
                int[] want = new int[pos];
                Arrays.fill(want, GUARD);
                for (int q = 0; q < p; q++) System.arraycopy(input(q, counts[q]), 0, want, displs[q], counts[q]);
                assertArrayEquals(want, window(out, pos));
                checkGuards(out, pos);
                break;
            }
            case "alltoall": {
                // Block j of rank r's input goes to rank j.
                int[] s = input(r, N * p);
                int[] out = guarded(N * p);
                comm.ialltoall(Buf.of(s), Buf.of(out, OFF, N * p)).await();
                for (int q = 0; q < p; q++)
                    assertArrayEquals(Arrays.copyOfRange(input(q, N * p), r * N, (r + 1) * N),
                            Arrays.copyOfRange(out, OFF + q * N, OFF + (q + 1) * N));
                checkGuards(out, N * p);
                break;
            }
            case "alltoallv": {
                // Rank r sends (r + j) % 3 elements to rank j, from a packed buffer.
                int[] sc = new int[p], sd = new int[p], rc = new int[p], rd = new int[p];
                int spos = 0, rpos = 0;
                for (int j = 0; j < p; j++) {
                    sc[j] = (r + j) % 3;
                    sd[j] = spos;
                    spos += sc[j];
                    rc[j] = (j + r) % 3;
                    rd[j] = rpos + 1; // gaps on the receive side
                    rpos += rc[j] + 1;
                }
                int[] s = input(r, spos);
                int[] out = guarded(rpos);
                Arrays.fill(out, GUARD);
                comm.ialltoallv(Buf.of(s), sc, sd, Buf.of(out, OFF, rpos), rc, rd).await();
                int[] want = new int[rpos];
                Arrays.fill(want, GUARD);
                for (int j = 0; j < p; j++) {
                    // Rank j's send displacement for rank r:
                    int d = 0;
                    for (int k = 0; k < r; k++) d += (j + k) % 3;
                    System.arraycopy(input(j, d + rc[j]), d, want, rd[j], rc[j]);
                }
                assertArrayEquals(want, window(out, rpos));
                checkGuards(out, rpos);
                break;
            }
            case "scan": {
                long[] s = new long[N], out = new long[N];
                for (int i = 0; i < N; i++) s[i] = v(r, i);
                comm.iscan(Buf.of(s), Buf.of(out), Op.SUM).await();
                long[] want = new long[N];
                for (int q = 0; q <= r; q++) for (int i = 0; i < N; i++) want[i] += v(q, i);
                assertArrayEquals(want, out);
                break;
            }
            case "exscan": {
                int[] out = guarded(N);
                comm.iexscan(Buf.of(input(r, N)), Buf.of(out, OFF, N), Op.SUM).await();
                int[] want = new int[N];
                if (r == 0) Arrays.fill(want, GUARD); // rank 0's buffer is left alone
                for (int q = 0; q < r; q++) for (int i = 0; i < N; i++) want[i] += v(q, i);
                assertArrayEquals(want, window(out, N));
                checkGuards(out, N);
                break;
            }
            case "reduce_scatter_block": {
                int[] s = input(r, N * p);
                int[] out = guarded(N);
                comm.ireduceScatterBlock(Buf.of(s), Buf.of(out, OFF, N), Op.SUM).await();
                int[] want = new int[N];
                for (int q = 0; q < p; q++) for (int i = 0; i < N; i++) want[i] += v(q, r * N + i);
                assertArrayEquals(want, window(out, N));
                checkGuards(out, N);
                break;
            }
            case "reduce_scatter": {
                int[] counts = new int[p];
                int total = 0;
                for (int q = 0; q < p; q++) total += counts[q] = vcount(q);
                int before = 0;
                for (int q = 0; q < r; q++) before += counts[q];
                int[] out = guarded(counts[r]);
                comm.ireduceScatter(Buf.of(input(r, total)), Buf.of(out, OFF, counts[r]), counts, Op.SUM).await();
                int[] want = new int[counts[r]];
                for (int q = 0; q < p; q++) for (int i = 0; i < counts[r]; i++) want[i] += v(q, before + i);
                assertArrayEquals(want, window(out, counts[r]));
                checkGuards(out, counts[r]);
                // In place, persistent: the whole input in recv, the result at its start.
                int[] io = new int[total];
                try (PersistentRequest pr = comm.reduceScatterInit(Buf.IN_PLACE, Buf.of(io), counts, Op.SUM)) {
                    for (int k = 0; k < 3; k++) {
                        for (int i = 0; i < total; i++) io[i] = v(r, i) + k;
                        pr.start().await();
                        for (int i = 0; i < counts[r]; i++) assertEquals(want[i] + p * k, io[i]);
                    }
                }
                break;
            }
            case "direct_bcast": {
                Buf b = Buf.allocateDirect(Datatype.DOUBLE, 1000);
                ByteBuffer bb = b.byteBuffer();
                if (r == root) for (int i = 0; i < 1000; i++) bb.putDouble(8 * i, i * 1.5 + root);
                comm.ibcast(b, root).await();
                for (int i = 0; i < 1000; i++) assertEquals(i * 1.5 + root, bb.getDouble(8 * i));
                break;
            }
            case "direct_allreduce": {
                Buf s = Buf.allocateDirect(Datatype.INT, N + 3), o = Buf.allocateDirect(Datatype.INT, N + 3);
                for (int i = 0; i < N; i++) s.byteBuffer().putInt(4 * (3 + i), v(r, i));
                comm.iallreduce(Buf.of(s.byteBuffer(), Datatype.INT, 3, N), Buf.of(o.byteBuffer(), Datatype.INT, 3, N),
                        Op.SUM).await();
                for (int i = 0; i < N; i++) {
                    int want = 0;
                    for (int q = 0; q < p; q++) want += v(q, i);
                    assertEquals(want, o.byteBuffer().getInt(4 * (3 + i)));
                }
                break;
            }
            case "direct_alltoall": {
                Buf s = Buf.allocateDirect(Datatype.LONG, N * p), o = Buf.allocateDirect(Datatype.LONG, N * p);
                for (int i = 0; i < N * p; i++) s.byteBuffer().putLong(8 * i, v(r, i));
                comm.ialltoall(s, o).await();
                for (int q = 0; q < p; q++)
                    for (int i = 0; i < N; i++) assertEquals(v(q, r * N + i), o.byteBuffer().getLong(8 * (q * N + i)));
                break;
            }
            case "types": {
                // Every primitive type through bcast (arrays) and a reduction.
                byte[] b = new byte[3];
                boolean[] z = new boolean[3];
                short[] sh = new short[3];
                char[] ch = new char[3];
                float[] f = new float[3];
                if (r == root) {
                    b = new byte[] {-1, 2, 127};
                    z = new boolean[] {true, false, true};
                    sh = new short[] {-300, 0, 300};
                    ch = new char[] {'n', 'b', '\u00e9'};
                    f = new float[] {1.5f, -2.25f, 3e10f};
                }
                Request.waitAll(comm.ibcast(Buf.of(b), root), comm.ibcast(Buf.of(z), root),
                        comm.ibcast(Buf.of(sh), root), comm.ibcast(Buf.of(ch), root), comm.ibcast(Buf.of(f), root));
                assertArrayEquals(new byte[] {-1, 2, 127}, b);
                assertArrayEquals(new boolean[] {true, false, true}, z);
                assertArrayEquals(new short[] {-300, 0, 300}, sh);
                assertArrayEquals(new char[] {'n', 'b', '\u00e9'}, ch);
                assertArrayEquals(new float[] {1.5f, -2.25f, 3e10f}, f);
                boolean[] mine = {r == 0, r == p - 1, false}, any = new boolean[3];
                short[] smin = {(short) (-r)}, so = new short[1];
                char[] cmax = {(char) ('a' + r)}, co = new char[1];
                byte[] bx = {(byte) (1 << (r % 8))}, bo = new byte[1];
                float[] fs = {r + 0.5f}, fo = new float[1];
                Request.waitAll(comm.iallreduce(Buf.of(mine), Buf.of(any), Op.LOR),
                        comm.iallreduce(Buf.of(smin), Buf.of(so), Op.MIN),
                        comm.iallreduce(Buf.of(cmax), Buf.of(co), Op.MAX),
                        comm.iallreduce(Buf.of(bx), Buf.of(bo), Op.BOR),
                        comm.iallreduce(Buf.of(fs), Buf.of(fo), Op.SUM));
                assertArrayEquals(new boolean[] {true, true, false}, any);
                assertEquals((short) (1 - p), so[0]);
                assertEquals((char) ('a' + p - 1), co[0]);
                int bits = 0;
                for (int q = 0; q < p; q++) bits |= 1 << (q % 8);
                assertEquals((byte) bits, bo[0]);
                assertEquals(p * p / 2.0f, fo[0], 1e-3f);
                break;
            }
            default:
                throw new IllegalArgumentException(op);
        }
    }
}
