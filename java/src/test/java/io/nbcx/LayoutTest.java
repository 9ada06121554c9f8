package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Derived layouts (io.nbcx.Layout) in collectives, against a sequential
 * reference: the reference packs and unpacks a layout value by value in
 * Java; every byte of a buffer a layout does not cover (gaps, padding,
 * room before a negative displacement) must keep its guard value.
 */
class LayoutTest {
    static final double G = -99.5; // guard of double arrays
    static final int GI = -7;      // guard of int arrays
    static final byte GB = 0x5A;   // guard of direct buffers

    /** The values of n elements of l (one type: double) from array origin, in signature order. */
    static double[] pack(Layout l, double[] a, int origin, int n) {
        double[] v = new double[n * (int) (l.size / 8)];
        int k = 0;
        for (int e = 0; e < n; e++)
            for (int b = 0; b < l.disp.length; b++)
                for (long i = 0; i < l.len[b] / 8; i++)
                    v[k++] = a[(int) (origin + (e * l.extent + l.disp[b]) / 8 + i)];
        return v;
    }

    static void unpack(Layout l, double[] a, int origin, int n, double[] v) {
        int k = 0;
        for (int e = 0; e < n; e++)
            for (int b = 0; b < l.disp.length; b++)
                for (long i = 0; i < l.len[b] / 8; i++)
                    a[(int) (origin + (e * l.extent + l.disp[b]) / 8 + i)] = v[k++];
    }

    static double[] filled(int n) {
        double[] a = new double[n];
        Arrays.fill(a, G);
        return a;
    }

    /** Rank r's matrix value (i, j). */
    static double m(int r, int i, int j) {
        return r * 1000 + i * 10 + j + 0.25;
    }

    static void body(Communicator comm) {
        int r = comm.rank(), p = comm.size(), root = p - 1;
        final int R = 4, C = 5;

        // 1. bcast of column 2 of a row-major R x C matrix (vector, gaps between values).
        {
            Layout col = Layout.vector(R, 1, C, Datatype.DOUBLE);
            assertEquals(8 * ((R - 1) * C + 1), col.extent());
            double[] a = filled(R * C);
            if (r == root) for (int i = 0; i < R; i++) for (int j = 0; j < C; j++) a[i * C + j] = m(r, i, j);
            comm.ibcast(Buf.of(a, col, 2, 1), root).await();
            for (int i = 0; i < R; i++)
                for (int j = 0; j < C; j++)
                    assertEquals(r == root || j == 2 ? m(root, i, j) : G, a[i * C + j], "bcast (" + i + "," + j + ")");
        }

        // 2. gather rows into columns: root's R x p matrix, element j = column j (resized to one value).
        {
            double[] mine = new double[R];
            for (int i = 0; i < R; i++) mine[i] = m(r, i, 0);
            double[] t = filled(R * p + 3);
            Layout col = Layout.vector(R, 1, p, Datatype.DOUBLE).resized(1);
            comm.igather(Buf.of(mine), r == root ? Buf.of(t, col, 1, p) : null, root).await();
            if (r == root) {
                double[] want = filled(R * p + 3);
                for (int j = 0; j < p; j++) for (int i = 0; i < R; i++) want[1 + i * p + j] = m(j, i, 0);
                assertArrayEquals(want, t, "gather into columns");
            }
        }

        // 3. allreduce of an indexed int layout with a negative displacement and gaps.
        {
            Layout l = Layout.indexed(new int[] {2, 1, 3}, new int[] {-3, 0, 4}, Datatype.INT);
            assertEquals(-12, l.lowerBound());
            assertEquals(10 * 4, l.extent());
            int n = 2, origin = 3, len = origin + 7 + (n - 1) * 10 + 2;
            int[] s = new int[len], out = new int[len];
            Arrays.fill(s, GI);
            Arrays.fill(out, GI);
            int[] pos = new int[n * 6];
            int k = 0;
            for (int e = 0; e < n; e++)
                for (int d : new int[] {-3, -2, 0, 4, 5, 6}) pos[k++] = origin + e * 10 + d;
            for (int q = 0; q < pos.length; q++) s[pos[q]] = (r + 1) * (q + 1);
            comm.iallreduce(Buf.of(s, l, origin, n), Buf.of(out, l, origin, n), Op.SUM).await();
            int[] want = new int[len];
            Arrays.fill(want, GI);
            for (int q = 0; q < pos.length; q++) want[pos[q]] = (q + 1) * p * (p + 1) / 2;
            assertArrayEquals(want, out, "allreduce on an indexed layout");
        }

        // 4. alltoall: a plain send, a receive buffer of every other pair of values (vector with gaps).
        {
            int blk = 2;
            double[] s = new double[p * blk * 2];
            for (int i = 0; i < s.length; i++) s[i] = r * 100 + i;
            Layout pairs = Layout.vector(2, 1, 3, Datatype.DOUBLE); // values at 0 and 3: extent 4
            double[] out = filled(p * 2 * 4 + 2);
            comm.ialltoall(Buf.of(s), Buf.of(out, pairs, 1, p * 2)).await();
            double[] recv = new double[p * blk * 2];
            for (int q = 0; q < p; q++)
                for (int i = 0; i < blk * 2; i++) recv[q * blk * 2 + i] = q * 100 + r * blk * 2 + i;
            double[] want = filled(out.length);
            unpack(pairs, want, 1, p * 2, recv);
            assertArrayEquals(want, out, "alltoall into a vector layout");
            assertArrayEquals(recv, pack(pairs, out, 1, p * 2));
        }

        // 5. gatherv and scatterv with counts and displacements in layout elements.
        {
            Layout two = Layout.indexed(new int[] {1, 1}, new int[] {0, 2}, Datatype.DOUBLE); // extent 3
            int[] counts = new int[p], displs = new int[p];
            int at = 0;
            for (int q = 0; q < p; q++) {
                counts[q] = q % 2 + 1;
                displs[q] = at + 1; // a layout element left out between blocks
                at += counts[q] + 1;
            }
            double[] mine = new double[counts[r] * 2];
            for (int i = 0; i < mine.length; i++) mine[i] = r * 10 + i;
            double[] g = filled(at * 3);
            comm.igatherv(Buf.of(mine), r == root ? Buf.of(g, two, 0, at) : null, counts, displs, root).await();
            if (r == root) {
                double[] want = filled(at * 3);
                for (int q = 0; q < p; q++) {
                    double[] v = new double[counts[q] * 2];
                    for (int i = 0; i < v.length; i++) v[i] = q * 10 + i;
                    unpack(two, want, displs[q] * 3, counts[q], v);
                }
                assertArrayEquals(want, g, "gatherv into a layout");
            }
            // back again: scatterv from the layout buffer
            double[] back = filled(counts[r] * 2);
            comm.iscatterv(r == root ? Buf.of(g, two, 0, at) : null, counts, displs, Buf.of(back), root).await();
            assertArrayEquals(mine, back, "scatterv from a layout");
        }

        // 6. a struct {int; double; short} over direct buffers (moves as bytes), padding untouched.
        {
            Layout st = Layout.struct(new int[] {1, 1, 1}, new int[] {0, 8, 16},
                    new Datatype[] {Datatype.INT, Datatype.DOUBLE, Datatype.SHORT});
            assertEquals(24, st.extent());
            assertEquals(14, st.size());
            assertNull(st.type());
            ByteBuffer s = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
            ByteBuffer o = ByteBuffer.allocateDirect(8 + 24 * p).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 24; i++) s.put(i, GB);
            for (int i = 0; i < o.capacity(); i++) o.put(i, GB);
            s.putInt(0, r + 1).putDouble(8, r * 0.5).putShort(16, (short) (-r));
            comm.iallgather(Buf.of(s, st, 0, 1), Buf.of(o, st, 8, p)).await();
            for (int q = 0; q < p; q++) {
                int b = 8 + 24 * q;
                assertEquals(q + 1, o.getInt(b));
                assertEquals(q * 0.5, o.getDouble(b + 8));
                assertEquals((short) -q, o.getShort(b + 16));
                for (int i : new int[] {4, 5, 6, 7, 18, 19, 20, 21, 22, 23}) assertEquals(GB, o.get(b + i), "padding");
            }
            for (int i = 0; i < 8; i++) assertEquals(GB, o.get(i), "before the origin");
            // the same data as plain bytes: a struct element is 14 bytes of its signature
            byte[] raw = new byte[14 * p];
            comm.iallgather(Buf.of(s, st, 0, 1), Buf.of(raw)).await();
            ByteBuffer rb = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
            for (int q = 0; q < p; q++) {
                assertEquals(q + 1, rb.getInt(14 * q));
                assertEquals(q * 0.5, rb.getDouble(14 * q + 4));
                assertEquals((short) -q, rb.getShort(14 * q + 12));
            }
            NbcxException x = assertThrows(NbcxException.class,
                    () -> comm.iallreduce(Buf.of(s, st, 0, 1), Buf.of(o, st, 8, 1), Op.SUM));
            assertEquals(NbcxException.ERR_OP, x.code());
        }

        // 7. scatter from a layout, and a direct buffer with a vector layout (staged, not in place).
        {
            Layout ev = Layout.vector(3, 1, 2, Datatype.LONG); // every other long
            long[] src = new long[6 * p];
            Arrays.fill(src, GI);
            for (int i = 0; i < 3 * p; i++) src[2 * i] = 1000L * i + r;
            ByteBuffer d = ByteBuffer.allocateDirect(8 * 6).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 6; i++) d.putLong(8 * i, GI);
            comm.iscatter(r == root ? Buf.of(src, ev.resized(6), 0, p) : null, Buf.of(d, ev, 0, 1), root)
                    .await();
            for (int i = 0; i < 6; i++)
                assertEquals(i % 2 == 0 ? 1000L * (3 * r + i / 2) + root : GI, d.getLong(8 * i), "scatter " + i);
        }

        // 8. a persistent reduce on a column layout, restarted with new inputs.
        {
            Layout col = Layout.vector(R, 1, C, Datatype.DOUBLE);
            double[] a = filled(R * C), out = filled(R * C);
            try (PersistentRequest pr = comm.reduceInit(Buf.of(a, col, 1, 1), Buf.of(out, col, 3, 1), Op.MAX,
                    root)) {
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < R; i++) a[i * C + 1] = m(r, i, round);
                    pr.start();
                    pr.await();
                    if (r == root)
                        for (int i = 0; i < R; i++)
                            for (int j = 0; j < C; j++)
                                assertEquals(j == 3 ? m(p - 1, i, round) : G, out[i * C + j], "reduce_init");
                }
            }
        }

        // 9. a future: allgatherv of a layout completed by nbcx's callback.
        {
            Layout l = Layout.indexed(new int[] {2}, new int[] {1}, Datatype.DOUBLE).resized(3);
            int[] counts = new int[p], displs = new int[p];
            for (int q = 0; q < p; q++) {
                counts[q] = 1;
                displs[q] = p - 1 - q; // reversed
            }
            double[] mine = {r + 0.5, r + 0.75};
            double[] out = filled(3 * p);
            comm.iallgatherv(Buf.of(mine), Buf.of(out, l, 0, p), counts, displs).toFuture().join();
            for (int q = 0; q < p; q++) {
                int e = p - 1 - q;
                assertEquals(G, out[3 * e]);
                assertEquals(q + 0.5, out[3 * e + 1]);
                assertEquals(q + 0.75, out[3 * e + 2]);
            }
        }
    }

    @ParameterizedTest(name = "layouts on {0} thread ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void collectives(int n) {
        Nbcx.threads(n, LayoutTest::body);
    }

    @Test
    void badLayouts() {
        BadArgumentsTest.code(NbcxException.ERR_ARG,
                () -> Layout.vector(3, 2, 1, Datatype.INT)); // overlapping blocks
        BadArgumentsTest.code(NbcxException.ERR_COUNT, () -> Layout.vector(0, 1, 1, Datatype.INT));
        BadArgumentsTest.code(NbcxException.ERR_TYPE, () -> Layout.indexed(new int[] {0}, new int[] {3}, Datatype.INT));
        BadArgumentsTest.code(NbcxException.ERR_ARG, () -> Layout.struct(new int[] {1, 1}, new int[] {0, 2},
                new Datatype[] {Datatype.INT, Datatype.DOUBLE})); // misaligned double
        Layout neg = Layout.indexed(new int[] {1, 1}, new int[] {-2, 1}, Datatype.INT);
        BadArgumentsTest.code(NbcxException.ERR_BUFFER, () -> Buf.of(new int[8], neg, 1, 1)); // before the array
        BadArgumentsTest.code(NbcxException.ERR_BUFFER, () -> Buf.of(new int[8], neg, 2, 3)); // past its end
        assertEquals(6, Buf.of(new int[12], neg, 2, 3).count());
        BadArgumentsTest.code(NbcxException.ERR_TYPE, () -> Buf.of(new double[8], neg, 2, 1)); // not a double layout
        BadArgumentsTest.code(NbcxException.ERR_BUFFER,
                () -> Buf.of(ByteBuffer.allocateDirect(16), neg, 2, 2)); // 2 elements need 20 bytes
        Nbcx.threads(2, comm -> {
            Layout two = Layout.vector(2, 1, 2, Datatype.INT);
            int[] a = new int[12];
            // 3 ints do not fill whole elements of a 2-int layout
            BadArgumentsTest.code(NbcxException.ERR_COUNT,
                    () -> comm.iallgather(Buf.of(new int[3]), Buf.of(a, two, 0, 3)));
            BadArgumentsTest.code(NbcxException.ERR_COUNT, () -> comm.ireduceScatter(Buf.of(new int[4]),
                    Buf.of(a, two, 0, 1), new int[] {Integer.MAX_VALUE / 2 + 1, 1}, Op.SUM)); // 2^31 values
            BadArgumentsTest.code(NbcxException.ERR_TYPE, () -> comm.ialltoallw(Buf.of(a, two, 0, 2),
                    new int[] {1, 1}, new int[] {0, 0}, new Datatype[] {Datatype.INT, Datatype.INT},
                    Buf.of(new int[4]), new int[] {1, 1}, new int[] {0, 4},
                    new Datatype[] {Datatype.INT, Datatype.INT}));
            try (Schedule sc = comm.schedule()) {
                BadArgumentsTest.code(NbcxException.ERR_TYPE, () -> sc.send(Buf.of(a, two, 0, 1), 1 - comm.rank(), 0));
            }
            comm.ibarrier().await();
        });
    }
}
