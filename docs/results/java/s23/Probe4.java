import io.nbcx.*;
import java.util.*;
import java.util.concurrent.*;
public class Probe4 {
    static double med(double[] v) { v = v.clone(); Arrays.sort(v); return v[v.length / 2]; }
    public static void main(String[] a) throws Exception {
        int R = Integer.parseInt(a[0]), N = Integer.parseInt(a[1]), SZ = Integer.parseInt(a[2]);
        boolean scat = a[3].startsWith("s"); String m = a[4];
        String barKind = a.length > 5 ? a[5] : "cyclic";
        // JIT warm-up
        for (Progress pm : new Progress[]{Progress.CALLER, Progress.THREAD}) { Nbcx.progress(pm);
            Nbcx.threads(R, comm -> { Buf b = Buf.allocateDirect(Datatype.BYTE, 64), s = comm.rank()==0?Buf.allocateDirect(Datatype.BYTE, 64*comm.size()):null;
                for (int k = 0; k < 10000; k++) { comm.ibcast(b, 0).await(); comm.iscatter(s, b, 0).await(); } }); }
        Nbcx.progress(m.startsWith("c") ? Progress.CALLER : m.startsWith("t") ? Progress.THREAD : Progress.AUTO);
        long[][] T0 = new long[R][N], T1 = new long[R][N];
        CyclicBarrier cb = new CyclicBarrier(R); NbcxBench.Barrier ab = barKind.equals("all") ? new NbcxBench.Barrier(R) : null;
        Nbcx.threads(R, comm -> {
            int rank = comm.rank(), p = comm.size();
            Buf s = Buf.allocateDirect(Datatype.BYTE, SZ * p), r = Buf.allocateDirect(Datatype.BYTE, SZ);
            for (int k = -200; k < N; k++) {
                if (ab != null) ab.await(); else try { cb.await(); } catch (Exception e) { throw new RuntimeException(e); }
                long t0 = System.nanoTime();
                (scat ? comm.iscatter(rank == 0 ? s : null, r, 0) : comm.ibcast(r, 0)).await();
                long t1 = System.nanoTime();
                if (k >= 0) { T0[rank][k] = t0; T1[rank][k] = t1; }
            }
        });
        double[] x = new double[N], y = new double[N], z = new double[N];
        for (int k = 0; k < N; k++) { long mx = 0, mn0 = Long.MAX_VALUE, mx0 = 0, mx1 = 0;
            for (int r = 0; r < R; r++) { mx = Math.max(mx, T1[r][k]-T0[r][k]); mn0 = Math.min(mn0, T0[r][k]); mx0 = Math.max(mx0, T0[r][k]); mx1 = Math.max(mx1, T1[r][k]); }
            x[k] = mx/1e3; y[k] = (mx0-mn0)/1e3; z[k] = (mx1-mx0)/1e3; }
        System.out.printf("Java %-6s "+barKind+" R=%d %s %6d: maxrank %6.1f us  startskew %6.1f us  fromlast %6.1f us%n", m, R, scat?"scat ":"bcast", SZ, med(x), med(y), med(z));
    }
}
