package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The five neighbourhood collectives (and their persistent forms) on a
 * periodic ring, a 2-D grid with a non-periodic dimension (PROC_NULL at the
 * borders) and a distributed graph with repeated edges and PROC_NULL
 * neighbours, on 1-5 thread ranks, against a sequential reference computed
 * from every rank's lists. MpiCheck runs the same bodies on MPI ranks.
 */
class NeighborTest {
    static final String[] TOPOS = {"ring", "grid", "graph"};
    static final int B = 3;        // elements per block
    static final int GUARD = -7;

    static Stream<Arguments> cases() {
        return Stream.of(TOPOS).flatMap(t -> Stream.of(1, 2, 3, 4, 5).map(n -> Arguments.of(t, n)));
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("cases")
    void neighbourhood(String topo, int n) {
        Nbcx.threads(n, comm -> body(topo, comm));
    }

    @org.junit.jupiter.api.Test
    void badArguments() {
        Nbcx.threads(2, comm -> {
            int[] a = new int[4], b = new int[4];
            // No topology: nbcx's code comes back, nothing started.
            NbcxException e = assertThrows(NbcxException.class,
                    () -> comm.ineighborAllgather(Buf.of(a, 0, 1), Buf.of(b)));
            assertEquals(NbcxException.ERR_TOPOLOGY, e.code());
            assertEquals(NbcxException.ERR_ARG,
                    assertThrows(NbcxException.class, () -> comm.setCart(new int[] {3}, null)).code());
            assertEquals(NbcxException.ERR_ARG,
                    assertThrows(NbcxException.class, () -> comm.setCart(new int[] {2, 0}, null)).code());
            assertEquals(NbcxException.ERR_RANK, assertThrows(NbcxException.class,
                    () -> comm.setNeighbors(new int[] {2}, new int[] {0})).code());
            comm.setCart(new int[] {2}, new boolean[] {true});
            // 2 neighbours: 3 elements do not divide into 2 blocks; 2 counts needed, not 1.
            assertEquals(NbcxException.ERR_COUNT, assertThrows(NbcxException.class,
                    () -> comm.ineighborAlltoall(Buf.of(a, 0, 3), Buf.of(b))).code());
            assertEquals(NbcxException.ERR_ARG, assertThrows(NbcxException.class,
                    () -> comm.ineighborAlltoallv(Buf.of(a), new int[] {1}, new int[] {0}, Buf.of(b),
                            new int[] {1, 1}, new int[] {0, 1})).code());
            // The receive buffer holds 4 ints, 2 blocks of 3 are needed.
            assertEquals(NbcxException.ERR_BUFFER, assertThrows(NbcxException.class,
                    () -> comm.ineighborAllgather(Buf.of(a, 0, 3), Buf.of(b))).code());
            comm.ibarrier().await();
        });
    }

    /** Element e of block j that rank r sends. */
    static int v(int r, int j, int e) {
        return 1000 * r + 10 * j + e + 1;
    }

    /** Count of alltoallv's block j sent by rank r (1..3). */
    static int cnt(int r, int j) {
        return (r + j) % 3 + 1;
    }

    /** Count of rank r's allgatherv contribution. */
    static int gcnt(int r) {
        return r % 3 + 1;
    }

    /**
     * A topology as every rank sees it: the lists of every rank and, for
     * block i of rank me's receive side, which rank sends it and from
     * which of its send blocks (null for PROC_NULL).
     */
    static final class Topo {
        final int[][] src, dst;
        final boolean cart;

        Topo(int[][] src, int[][] dst, boolean cart) {
            this.src = src;
            this.dst = dst;
            this.cart = cart;
        }

        int[] from(int me, int i) {
            int s = src[me][i];
            if (s == Communicator.PROC_NULL) return null;
            if (cart) return new int[] {s, i ^ 1}; // towards -1 arrives at +1 and vice versa
            int k = 0; // the k-th edge from s in my sources meets the k-th to me in its destinations
            for (int q = 0; q < i; q++) if (src[me][q] == s) k++;
            for (int j = 0; j < dst[s].length; j++)
                if (dst[s][j] == me && k-- == 0) return new int[] {s, j};
            throw new AssertionError("lists disagree");
        }
    }

    static int[] dims(String topo, int p) {
        if (topo.equals("ring")) return new int[] {p};
        return p % 2 == 0 ? new int[] {2, p / 2} : new int[] {1, p};
    }

    static boolean[] periods(String topo) {
        return topo.equals("ring") ? new boolean[] {true} : new boolean[] {false, true};
    }

    /** Cartesian neighbour lists, computed independently of nbcx (row-major, -1 then +1). */
    static Topo cart(int[] dims, boolean[] per, int p) {
        int[][] lists = new int[p][];
        for (int r = 0; r < p; r++) {
            int[] c = new int[dims.length];
            for (int d = dims.length - 1, x = r; d >= 0; d--) {
                c[d] = x % dims[d];
                x /= dims[d];
            }
            int[] l = new int[2 * dims.length];
            for (int d = 0; d < dims.length; d++)
                for (int s = 0; s < 2; s++) {
                    int y = c[d] + (s == 0 ? -1 : 1);
                    if (y < 0 || y >= dims[d]) {
                        if (!per[d]) { l[2 * d + s] = Communicator.PROC_NULL; continue; }
                        y = (y + dims[d]) % dims[d];
                    }
                    int rr = 0;
                    for (int e = 0; e < dims.length; e++) rr = rr * dims[e] + (e == d ? y : c[e]);
                    l[2 * d + s] = rr;
                }
            lists[r] = l;
        }
        return new Topo(lists, lists, true);
    }

    /** Rank i sends to i+1 (twice), i+2 and PROC_NULL; sources in a rotated order with a PROC_NULL. */
    static Topo graph(int p) {
        int[][] dst = new int[p][], src = new int[p][];
        for (int i = 0; i < p; i++)
            dst[i] = new int[] {(i + 1) % p, Communicator.PROC_NULL, (i + 2) % p, (i + 1) % p};
        for (int me = 0; me < p; me++) {
            List<Integer> l = new ArrayList<>();
            for (int j = 0; j < p; j++) for (int d : dst[j]) if (d == me) l.add(j);
            java.util.Collections.rotate(l, me);
            l.add(1, Communicator.PROC_NULL);
            src[me] = l.stream().mapToInt(Integer::intValue).toArray();
        }
        return new Topo(src, dst, false);
    }

    static Topo setUp(String topo, Communicator comm) {
        int p = comm.size(), me = comm.rank();
        Topo t;
        if (topo.equals("graph")) {
            t = graph(p);
            comm.setNeighbors(t.src[me], t.dst[me]);
        } else {
            int[] d = dims(topo, p);
            boolean[] per = periods(topo);
            t = cart(d, per, p);
            comm.setCart(d, per);
        }
        int[][] nb = comm.neighbors();
        assertArrayEquals(t.src[me], nb[0], "sources");
        assertArrayEquals(t.dst[me], nb[1], "destinations");
        return t;
    }

    static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, GUARD);
        return a;
    }

    static void body(String topo, Communicator comm) {
        Topo t = setUp(topo, comm);
        int me = comm.rank();
        int in = t.src[me].length, out = t.dst[me].length;

        // allgather: my B elements to every destination; block i from source i.
        int[] s = new int[B];
        for (int e = 0; e < B; e++) s[e] = v(me, 0, e);
        int[] r = filled(in * B + 2);
        comm.ineighborAllgather(Buf.of(s), Buf.of(r, 1, in * B)).await();
        int[] want = filled(in * B + 2);
        for (int i = 0; i < in; i++) {
            int[] f = t.from(me, i);
            for (int e = 0; f != null && e < B; e++) want[1 + i * B + e] = v(f[0], 0, e);
        }
        assertArrayEquals(want, r, "neighbor_allgather");

        // The same with direct buffers.
        Buf ds = Buf.allocateDirect(Datatype.INT, B), dr = Buf.allocateDirect(Datatype.INT, in * B);
        for (int e = 0; e < B; e++) ds.byteBuffer().putInt(4 * e, v(me, 0, e));
        for (int k = 0; k < in * B; k++) dr.byteBuffer().putInt(4 * k, GUARD);
        comm.ineighborAllgather(ds, dr).await();
        for (int k = 0; k < in * B; k++) assertEquals(want[1 + k], dr.byteBuffer().getInt(4 * k), "direct allgather");

        // allgatherv: gcnt(r) elements from rank r, blocks in reverse order with a gap of one.
        int[] gs = new int[gcnt(me)];
        for (int e = 0; e < gs.length; e++) gs[e] = v(me, 0, e);
        int[] gc = new int[in], gd = new int[in];
        int pos = 0;
        for (int i = in - 1; i >= 0; i--) {
            int[] f = t.from(me, i);
            gc[i] = f == null ? 2 : gcnt(f[0]);
            gd[i] = pos;
            pos += gc[i] + 1;
        }
        r = filled(pos);
        comm.ineighborAllgatherv(Buf.of(gs), Buf.of(r), gc, gd).await();
        want = filled(pos);
        for (int i = 0; i < in; i++) {
            int[] f = t.from(me, i);
            for (int e = 0; f != null && e < gc[i]; e++) want[gd[i] + e] = v(f[0], 0, e);
        }
        assertArrayEquals(want, r, "neighbor_allgatherv");

        // alltoall: block j to destination j.
        int[] as = new int[out * B];
        for (int j = 0; j < out; j++) for (int e = 0; e < B; e++) as[j * B + e] = v(me, j, e);
        r = filled(in * B);
        comm.ineighborAlltoall(Buf.of(as), Buf.of(r)).await();
        want = filled(in * B);
        for (int i = 0; i < in; i++) {
            int[] f = t.from(me, i);
            for (int e = 0; f != null && e < B; e++) want[i * B + e] = v(f[0], f[1], e);
        }
        assertArrayEquals(want, r, "neighbor_alltoall");

        // alltoall, persistent: three starts with new inputs.
        int[] ps = new int[out * B], pr = filled(in * B);
        try (PersistentRequest pq = comm.neighborAlltoallInit(Buf.of(ps), Buf.of(pr))) {
            for (int round = 0; round < 3; round++) {
                for (int k = 0; k < ps.length; k++) ps[k] = as[k] * (round + 2);
                pq.start().await();
                for (int k = 0; k < pr.length; k++)
                    assertEquals(want[k] == GUARD ? GUARD : want[k] * (round + 2), pr[k], "persistent neighbor_alltoall");
            }
        }

        // alltoallv: cnt(me, j) elements of block j, packed; received in reverse order with gaps.
        int[] vc = new int[out], vd = new int[out];
        pos = 0;
        for (int j = 0; j < out; j++) {
            vc[j] = cnt(me, j);
            vd[j] = pos;
            pos += vc[j];
        }
        int[] vs = new int[pos];
        for (int j = 0; j < out; j++) for (int e = 0; e < vc[j]; e++) vs[vd[j] + e] = v(me, j, e);
        int[] rc = new int[in], rd = new int[in];
        pos = 0;
        for (int i = in - 1; i >= 0; i--) {
            int[] f = t.from(me, i);
            rc[i] = f == null ? 1 : cnt(f[0], f[1]);
            rd[i] = pos;
            pos += rc[i] + 1;
        }
        r = filled(pos);
        comm.ineighborAlltoallv(Buf.of(vs), vc, vd, Buf.of(r), rc, rd).await();
        want = filled(pos);
        for (int i = 0; i < in; i++) {
            int[] f = t.from(me, i);
            for (int e = 0; f != null && e < rc[i]; e++) want[rd[i] + e] = v(f[0], f[1], e);
        }
        assertArrayEquals(want, r, "neighbor_alltoallv");

        // alltoallw: the alltoallv blocks with byte displacements; received
        // as INT blocks into a long[] buffer (its type only gives the size).
        int[] wsd = new int[out], wrd = new int[in];
        Datatype[] wst = new Datatype[out], wrt = new Datatype[in];
        for (int j = 0; j < out; j++) { wsd[j] = 4 * vd[j]; wst[j] = Datatype.INT; }
        for (int i = 0; i < in; i++) { wrd[i] = 4 * rd[i]; wrt[i] = Datatype.INT; }
        ByteBuffer wb = ByteBuffer.allocateDirect(4 * pos + 8).order(java.nio.ByteOrder.nativeOrder());
        for (int k = 0; k < pos; k++) wb.putInt(4 * k, GUARD);
        comm.ineighborAlltoallw(Buf.of(vs), vc, wsd, wst, Buf.of(wb, Datatype.INT, 0, pos), rc, wrd, wrt).await();
        for (int k = 0; k < pos; k++) assertEquals(want[k], wb.getInt(4 * k), "neighbor_alltoallw at " + k);

        comm.ibarrier().await();
    }
}
