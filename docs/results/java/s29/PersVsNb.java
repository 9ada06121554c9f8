import io.nbcx.*;
import java.util.Arrays;

/** 4 thread ranks, ibcast of SIZE bytes: nonblocking (ibcast + await) and
 *  persistent (bcastInit once, start + await), alternated in blocks; the
 *  median over reps of the slowest rank's time, in microseconds. */
public class PersVsNb {
    public static void main(String[] a) {
        int r = 4, size = Integer.parseInt(a[0]), reps = 400, rounds = 6;
        ThreadBarrier bar = new ThreadBarrier(r);
        double[][][] t = new double[2][r][reps * rounds];
        Nbcx.threads(r, comm -> {
            int rank = comm.rank();
            Buf b = Buf.allocateDirect(Datatype.BYTE, size);
            PersistentRequest p = comm.bcastInit(b, 0);
            for (int w = 0; w < 20000; w++) { comm.ibcast(b, 0).await(); p.start().await(); }
            for (int rd = 0; rd < rounds; rd++)
                for (int v = 0; v < 2; v++)
                    for (int k = 0; k < reps; k++) {
                        bar.await();
                        long t0 = System.nanoTime();
                        if (v == 0) comm.ibcast(b, 0).await(); else p.start().await();
                        t[v][rank][rd * reps + k] = (System.nanoTime() - t0) * 1e-3;
                    }
            p.close();
        });
        for (int v = 0; v < 2; v++) {
            int n = reps * rounds;
            double[] mx = new double[n];
            for (int k = 0; k < n; k++) for (int q = 0; q < r; q++) mx[k] = Math.max(mx[k], t[v][q][k]);
            Arrays.sort(mx);
            System.out.printf("%s %d %.2f%n", v == 0 ? "nonblocking" : "persistent", size, mx[n / 2]);
        }
    }
}
