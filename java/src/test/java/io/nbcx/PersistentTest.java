package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Persistent requests: planned once, restarted with new inputs, closed. */
class PersistentTest {
    static final int RUNS = 20;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 8})
    void restarts(int n) {
        persistent(n);
    }

    static void persistent(int n) {
        Nbcx.threads(n, PersistentTest::persistentBody);
    }

    static void persistentBody(Communicator comm) {
        {
            int r = comm.rank(), p = comm.size();
            int[] x = new int[3], sum = new int[3];
            double[] b = new double[4];
            int[] g = new int[2], all = new int[2 * p];
            long[] sc = new long[1], scan = new long[1];
            try (PersistentRequest ar = comm.allreduceInit(Buf.of(x), Buf.of(sum), Op.SUM);
                 PersistentRequest bc = comm.bcastInit(Buf.of(b), 0);
                 PersistentRequest ag = comm.allgatherInit(Buf.of(g), Buf.of(all));
                 PersistentRequest sn = comm.scanInit(Buf.of(sc), Buf.of(scan), Op.SUM);
                 PersistentRequest ba = comm.barrierInit()) {
                assertFalse(ar.isActive());
                ar.await(); // inactive: returns at once
                for (int k = 0; k < RUNS; k++) {
                    for (int i = 0; i < 3; i++) x[i] = k * 10 + r + i;
                    if (r == 0) Arrays.fill(b, k + 0.25);
                    g[0] = k;
                    g[1] = r;
                    sc[0] = k + r;
                    PersistentRequest.startAll(ar, bc, ag, sn);
                    assertThrows(NbcxException.class, ar::start); // already active
                    ba.start();
                    Request.waitAll(ar, bc, ag, sn, ba);
                    for (int i = 0; i < 3; i++) assertEquals(p * (k * 10 + i) + p * (p - 1) / 2, sum[i]);
                    for (double d : b) assertEquals(k + 0.25, d);
                    for (int q = 0; q < p; q++) {
                        assertEquals(k, all[2 * q]);
                        assertEquals(q, all[2 * q + 1]);
                    }
                    long want = 0;
                    for (int q = 0; q <= r; q++) want += k + q;
                    assertEquals(want, scan[0]);
                }
                // Close of an active request is refused; after await it works.
                ar.start();
                NbcxException e = assertThrows(NbcxException.class, ar::close);
                assertEquals(NbcxException.ERR_REQUEST, e.code());
                ar.await();
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 3, 4})
    void everyPersistentForm(int n) {
        Nbcx.threads(n, comm -> {
            int r = comm.rank(), p = comm.size(), root = p - 1;
            int[] s = new int[p], o = new int[p], one = {0}, oneOut = {0};
            int[] counts = new int[p], displs = new int[p];
            for (int i = 0; i < p; i++) {
                counts[i] = 1;
                displs[i] = i;
            }
            PersistentRequest[] rs = {
                comm.reduceInit(Buf.of(one), r == root ? Buf.of(oneOut) : null, Op.SUM, root),
                comm.exscanInit(Buf.of(one), Buf.of(new int[1]), Op.SUM),
                comm.gatherInit(Buf.of(one), r == root ? Buf.of(new int[p]) : null, root),
                comm.gathervInit(Buf.of(one), r == root ? Buf.of(new int[p]) : null, counts, displs, root),
                comm.scatterInit(r == root ? Buf.of(s) : null, Buf.of(new int[1]), root),
                comm.scattervInit(r == root ? Buf.of(s) : null, counts, displs, Buf.of(new int[1]), root),
                comm.allgathervInit(Buf.of(one), Buf.of(new int[p]), counts, displs),
                comm.alltoallInit(Buf.of(s), Buf.of(o)),
                comm.alltoallvInit(Buf.of(s), counts, displs, Buf.of(new int[p]), counts, displs),
                comm.reduceScatterBlockInit(Buf.of(s), Buf.of(new int[1]), Op.SUM),
            };
            for (int k = 0; k < 5; k++) {
                one[0] = k + r;
                for (int i = 0; i < p; i++) s[i] = k * 1000 + r * 10 + i;
                for (PersistentRequest q : rs) q.start();
                Request.waitAll(rs);
                if (r == root) assertEquals(p * k + p * (p - 1) / 2, oneOut[0]);
                for (int q = 0; q < p; q++) assertEquals(k * 1000 + q * 10 + r, o[q]);
            }
            for (PersistentRequest q : rs) q.close();
            for (PersistentRequest q : rs) q.close(); // idempotent
            assertThrows(NbcxException.class, rs[0]::start);
        });
    }
}
