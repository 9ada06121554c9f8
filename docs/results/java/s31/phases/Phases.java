import io.nbcx.*;
import java.io.*;
public class Phases {
    static void setMode(Progress m) {
        for (;;) { try { Nbcx.progress(m); return; } catch (NbcxException e) { if (e.code() != NbcxException.ERR_REQUEST) throw e; } }
    }
    public static void main(String[] a) throws Exception {
        int r = Integer.parseInt(a[0]), size = Integer.parseInt(a[1]), reps = 2400, sw = a.length > 3 ? Integer.parseInt(a[3]) : 0;
        ThreadBarrier bar = new ThreadBarrier(r);
        double[][][] t = new double[r][reps][3];
        Nbcx.threads(r, comm -> {
            int rank = comm.rank();
            Buf b = Buf.allocateDirect(Datatype.BYTE, size);
            for (int w = 0; w < 20000; w++) comm.ibcast(b, 0).await();
            for (int k = 0; k < reps; k++) {
                if (sw > 0) {
                    bar.await();
                    if (rank == 0) setMode(Progress.CALLER);
                    bar.await();
                    comm.ibcast(b, 0).await();
                    bar.await();
                    if (rank == 0) setMode(Progress.AUTO);
                    bar.await();
                    for (int d = 0; d < sw; d++) comm.ibcast(b, 0).await();
                }
                bar.await();
                long t0 = System.nanoTime();
                Request q = comm.ibcast(b, 0);
                long t1 = System.nanoTime();
                q.await();
                long t2 = System.nanoTime();
                t[rank][k][0] = t0 * 1e-3; t[rank][k][1] = t1 * 1e-3; t[rank][k][2] = t2 * 1e-3;
            }
        });
        try (PrintWriter w = new PrintWriter(a[2])) {
            for (int k = 0; k < reps; k++) for (int q = 0; q < r; q++)
                w.printf("%d %d %.3f %.3f %.3f%n", k, q, t[q][k][0], t[q][k][1], t[q][k][2]);
        }
    }
}
