import java.util.concurrent.atomic.*;
import java.util.concurrent.locks.LockSupport;
/** Releases every waiter at once: the last to arrive unparks them all (as pthread_barrier's one FUTEX_WAKE). */
final class AllBar {
    final int n; final AtomicInteger arrived = new AtomicInteger(); volatile int gen;
    final AtomicReferenceArray<Thread> waiting;
    AllBar(int n) { this.n = n; waiting = new AtomicReferenceArray<>(n); }
    void await() {
        int g = gen;
        int i = arrived.getAndIncrement();
        if (i == n - 1) {
            Thread[] ws = new Thread[n - 1];
            for (int k = 0; k < n - 1; k++) { Thread t; while ((t = waiting.getAndSet(k, null)) == null) Thread.onSpinWait(); ws[k] = t; }
            arrived.set(0);
            gen = g + 1;
            for (Thread t : ws) LockSupport.unpark(t);
            return;
        }
        waiting.set(i, Thread.currentThread());
        while (gen == g) LockSupport.park(this);
    }
}
