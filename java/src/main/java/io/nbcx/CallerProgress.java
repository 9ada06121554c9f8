package io.nbcx;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Caller progress mode only: the thread that moves operations while
 * futures of {@link Request#toFuture()} are pending. It completes nothing
 * itself (it never tests a request or touches a future: it only calls
 * nbcx_progress, as an application thread of caller mode would); futures are completed
 * by nbcx's completion callback (nbcx_request_on_complete, see
 * {@link Request#callback}) on the thread that completes the operation; in
 * thread, split and auto modes that is nbcx's progress thread, and this
 * class does nothing. In caller mode nothing moves unless the application
 * calls nbcx, so this daemon thread calls nbcx_progress while a future is
 * pending (and the callback then runs on it), with a back-off from
 * spinning to 1 ms when nothing completes; it parks when none is.
 */
final class CallerProgress implements Runnable {
    static final CallerProgress INSTANCE = new CallerProgress();

    private final ConcurrentLinkedQueue<CompletableFuture<?>> incoming = new ConcurrentLinkedQueue<>();
    private volatile Thread thread;

    private CallerProgress() {}

    /** Drives progress until f is done. */
    void drive(CompletableFuture<?> f) {
        incoming.add(f);
        Thread t = thread;
        if (t == null) {
            synchronized (this) {
                if (thread == null) {
                    t = new Thread(this, "nbcx-caller-progress");
                    t.setDaemon(true);
                    thread = t;
                    t.start();
                }
                t = thread;
            }
        }
        LockSupport.unpark(t);
    }

    @Override
    public void run() {
        List<CompletableFuture<?>> pending = new ArrayList<>();
        long backoff = 0;
        for (;;) {
            CompletableFuture<?> f;
            while ((f = incoming.poll()) != null) pending.add(f);
            if (pending.isEmpty()) {
                LockSupport.park(this);
                backoff = 0;
                continue;
            }
            try {
                Native.progress();
            } catch (Throwable t) { // a dependent stage threw: not ours
            }
            int before = pending.size();
            pending.removeIf(CompletableFuture::isDone);
            if (pending.size() < before) {
                backoff = 0;
            } else if (backoff < 64) {
                backoff++;
                Thread.onSpinWait();
            } else {
                long ns = Math.min(1_000_000L, 1_000L << Math.min(10, (backoff++ - 64) / 8));
                LockSupport.parkNanos(this, ns);
            }
        }
    }
}
