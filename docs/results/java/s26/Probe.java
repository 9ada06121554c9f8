/*
 * The Java twin of probe.c: N repetitions of nbcx-bench's loop,
 * [mode caller; barrier; block op; mode auto; discarded op; barrier;
 * t0; nbc op; t1], on R thread ranks, timed with the barrier named by the
 * last argument: "park" (the LockSupport park/unpark barrier NbcxBench
 * used from session 23 to 25) or "pthread" (io.nbcx.ThreadBarrier,
 * glibc's pthread_barrier, as nbcx-bench; NbcxBench's since session 26).
 * Prints medians over repetitions of max_r(t1-t0), the start skew
 * (last t0 - first t0) and the time from the last start to the last end;
 * DUMP=file writes every rank's t0 and t1 (CLOCK_MONOTONIC ns) for
 * window.py.
 *
 *   javac -cp java/target/classes -d /tmp/p docs/results/java/s26/Probe.java
 *   java -cp java/target/classes:/tmp/p -Dnbcx.jni=build/nompi/java/libnbcxjni.so \
 *        Probe 2 2000 8192 b park        # R N bytes b|s park|pthread
 */
import io.nbcx.*;
import java.util.*;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

public class Probe {
    interface Bar { void await(); }

    /** Session 23's barrier (java/bench/NbcxBench.java at 92fa8ca): the last arrival unparks each waiter. */
    static final class ParkBarrier implements Bar {
        private final int n;
        private final AtomicInteger arrived = new AtomicInteger();
        private final AtomicReferenceArray<Thread> waiting;
        private volatile int generation;
        ParkBarrier(int n) { this.n = n; this.waiting = new AtomicReferenceArray<>(Math.max(1, n)); }
        public void await() {
            int g = generation;
            int i = arrived.getAndIncrement();
            if (i == n - 1) {
                Thread[] ws = new Thread[n - 1];
                for (int k = 0; k < n - 1; k++) {
                    Thread t;
                    while ((t = waiting.getAndSet(k, null)) == null) Thread.onSpinWait();
                    ws[k] = t;
                }
                arrived.set(0);
                generation = g + 1;
                for (Thread t : ws) LockSupport.unpark(t);
                return;
            }
            waiting.set(i, Thread.currentThread());
            while (generation == g) LockSupport.park(this);
        }
    }

    static double med(double[] v) { v = v.clone(); Arrays.sort(v); return v[v.length / 2]; }

    static void setMode(Bar b, int rank, Progress m) {
        b.await();
        if (rank == 0) for (;;) {
            try { Nbcx.progress(m); break; } catch (NbcxException e) {
                if (e.code() != NbcxException.ERR_REQUEST) throw e;
                LockSupport.parkNanos(100_000);
            }
        }
        b.await();
    }

    public static void main(String[] a) throws Exception {
        int R = Integer.parseInt(a[0]), N = Integer.parseInt(a[1]), SZ = Integer.parseInt(a[2]);
        boolean scat = a[3].startsWith("s");
        boolean pthread = a.length > 4 && a[4].equals("pthread");
        // JIT warm-up of the binding, as NbcxBench's
        for (Progress pm : new Progress[] {Progress.CALLER, Progress.AUTO}) {
            Nbcx.progress(pm);
            Nbcx.threads(R, comm -> {
                Buf b = Buf.allocateDirect(Datatype.BYTE, 64), s = comm.rank() == 0 ? Buf.allocateDirect(Datatype.BYTE, 64 * comm.size()) : null;
                for (int k = 0; k < 10000; k++) { comm.ibcast(b, 0).await(); comm.iscatter(s, b, 0).await(); }
            });
        }
        Nbcx.progress(Progress.AUTO);
        long[][] T0 = new long[R][N], T1 = new long[R][N];
        for (int round = 0; round < 2; round++) { // the first round warms the loop itself up
            ThreadBarrier tb = pthread ? new ThreadBarrier(R) : null;
            Bar bar = pthread ? tb::await : new ParkBarrier(R);
            Nbcx.threads(R, comm -> {
                int rank = comm.rank(), p = comm.size();
                Buf s = rank == 0 ? Buf.allocateDirect(Datatype.BYTE, SZ * p) : null, r = Buf.allocateDirect(Datatype.BYTE, SZ);
                for (int k = -50; k < N; k++) {
                    setMode(bar, rank, Progress.CALLER);
                    bar.await();
                    (scat ? comm.iscatter(s, r, 0) : comm.ibcast(r, 0)).await();
                    setMode(bar, rank, Progress.AUTO);
                    (scat ? comm.iscatter(s, r, 0) : comm.ibcast(r, 0)).await(); // discarded
                    bar.await();
                    long t0 = System.nanoTime();
                    (scat ? comm.iscatter(s, r, 0) : comm.ibcast(r, 0)).await();
                    long t1 = System.nanoTime();
                    if (k >= 0) { T0[rank][k] = t0; T1[rank][k] = t1; }
                }
            });
            if (tb != null) tb.close();
        }
        String d = System.getenv("DUMP");
        if (d != null) try (java.io.PrintWriter w = new java.io.PrintWriter(d)) {
            for (int k = 0; k < N; k++) for (int r = 0; r < R; r++) w.println(k + " " + r + " " + T0[r][k] + " " + T1[r][k]);
        }
        double[] x = new double[N], y = new double[N], z = new double[N];
        for (int k = 0; k < N; k++) {
            long mx = 0, mn0 = Long.MAX_VALUE, mx0 = 0, mx1 = 0;
            for (int r = 0; r < R; r++) { mx = Math.max(mx, T1[r][k] - T0[r][k]); mn0 = Math.min(mn0, T0[r][k]); mx0 = Math.max(mx0, T0[r][k]); mx1 = Math.max(mx1, T1[r][k]); }
            x[k] = mx / 1e3; y[k] = (mx0 - mn0) / 1e3; z[k] = (mx1 - mx0) / 1e3;
        }
        System.out.printf("Java %-7s R=%d %s %6d: maxrank %6.1f us  startskew %6.1f us  fromlast %6.1f us%n",
                pthread ? "pthread" : "park", R, scat ? "scat " : "bcast", SZ, med(x), med(y), med(z));
    }
}
