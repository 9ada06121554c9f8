package io.nbcx;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The completion thread behind {@link Request#toFuture()}: one daemon Java
 * thread that tests the requests that have a future until they complete,
 * and completes the futures (so their dependent stages run on it, unless
 * they use an executor). It only tests: nbcx's own progress thread moves
 * the operations; this thread notices their end, polling with a back-off
 * from busy (a few microseconds) to 1 ms when nothing completes, and
 * parks when no future is pending.
 *
 * <p>Why not a callback from nbcx's progress thread: nbcx.h has no
 * completion callback for its built-in collectives (nbcx_sched_call only
 * serves schedules one builds oneself), see the README.
 */
final class Completer implements Runnable {
    static final Completer INSTANCE = new Completer();

    private final ConcurrentLinkedQueue<Request> incoming = new ConcurrentLinkedQueue<>();
    private volatile Thread thread;

    private Completer() {}

    void add(Request r) {
        incoming.add(r);
        Thread t = thread;
        if (t == null) {
            synchronized (this) {
                if (thread == null) {
                    t = new Thread(this, "nbcx-completer");
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
        List<Request> pending = new ArrayList<>();
        long backoff = 0;
        for (;;) {
            Request r;
            while ((r = incoming.poll()) != null) pending.add(r);
            if (pending.isEmpty()) {
                LockSupport.park(this);
                backoff = 0;
                continue;
            }
            boolean any = false;
            for (int i = pending.size() - 1; i >= 0; i--) {
                Request q = pending.get(i);
                boolean done;
                try {
                    done = q.poll();
                } catch (Throwable t) { // a callback of the future threw: not ours
                    done = true;
                }
                if (done) {
                    pending.set(i, pending.get(pending.size() - 1));
                    pending.remove(pending.size() - 1);
                    any = true;
                }
            }
            if (any) {
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
