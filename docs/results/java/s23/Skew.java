import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.locks.LockSupport;
/** Barrier release skew: n threads, R rounds; per round max-min of the times
 * each thread leaves the barrier (median over rounds, us). */
public class Skew {
    interface Bar { void await() throws Exception; }
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), R = Integer.parseInt(a[1]);
        for (String kind : a[2].split(",")) {
            Bar b;
            if (kind.equals("cyclic")) { CyclicBarrier c = new CyclicBarrier(n); b = c::await; }
            else if (kind.equals("all")) { NbcxBench.Barrier x = new NbcxBench.Barrier(n); b = x::await; }
            else { Phaser p = new Phaser(n); b = p::arriveAndAwaitAdvance; }
            long[][] t = new long[n][R];
            Thread[] th = new Thread[n];
            for (int i = 0; i < n; i++) { int r = i; th[i] = new Thread(() -> {
                try { for (int k = 0; k < R; k++) { b.await(); t[r][k] = System.nanoTime(); } } catch (Exception e) { throw new RuntimeException(e); } }); th[i].start(); }
            for (Thread x : th) x.join();
            double[] s = new double[R];
            for (int k = 0; k < R; k++) { long mn = Long.MAX_VALUE, mx = Long.MIN_VALUE; for (int i = 0; i < n; i++) { mn = Math.min(mn, t[i][k]); mx = Math.max(mx, t[i][k]); } s[k] = (mx - mn) / 1e3; }
            Arrays.sort(s, R / 10, R); // skip first 10%
            double[] w = Arrays.copyOfRange(s, R / 10, R);
            System.out.printf("java %-7s n=%d skew median %.1f us  p90 %.1f us%n", kind, n, w[w.length / 2], w[w.length * 9 / 10]);
        }
    }
}
