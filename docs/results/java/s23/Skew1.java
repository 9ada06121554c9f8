import java.util.concurrent.*;
/** n threads, R rounds of one barrier kind (cyclic | all); for strace/perf counts. */
public class Skew1 {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), R = Integer.parseInt(a[1]); String kind = a[2];
        CyclicBarrier c = new CyclicBarrier(n); NbcxBench.Barrier x = new NbcxBench.Barrier(n);
        Thread[] th = new Thread[n];
        for (int i = 0; i < n; i++) { th[i] = new Thread(() -> {
            try { for (int k = 0; k < R; k++) { if (kind.equals("all")) x.await(); else c.await(); } } catch (Exception e) { throw new RuntimeException(e); } }); th[i].start(); }
        for (Thread t : th) t.join();
    }
}
