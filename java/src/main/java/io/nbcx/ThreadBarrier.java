package io.nbcx;

/**
 * A barrier for a fixed number of threads of this process, made of C's
 * {@code pthread_barrier_t}: the last thread to arrive wakes all the others
 * with one system call, and a woken thread leaves without taking a lock.
 * It is what {@code nbcx-bench --transport inproc} puts before every timed
 * run, and java/bench/NbcxBench.java uses it so that Java's times start
 * as C's do.
 *
 * <p>Java's own waiting ({@code LockSupport.park}/{@code unpark}, on which
 * {@code java.util.concurrent} and monitors are built) wakes each waiter
 * with a system call of its own, one after the other, and each woken waiter
 * makes one more on its way out (the mutex of its condition variable,
 * which glibc marks contended after a wait); on a virtual machine where a
 * system call costs a microsecond or two this spreads the ranks' starts:
 * with 4 thread ranks on 2 cores an 8 KiB ibcast measured about 8 us
 * longer behind a park-based barrier than behind this one
 * (docs/results/java/s26).
 *
 * <p>The waiting is not interruptible and has no timeout: every one of the
 * {@code parties} threads must arrive, each round. Reusable for any number
 * of rounds; {@link #close} frees it (no thread may be waiting then).
 */
public final class ThreadBarrier implements AutoCloseable {
    private final int parties;
    private long h;

    /** A barrier of {@code parties} threads (at least 1). */
    public ThreadBarrier(int parties) {
        if (parties < 1) throw NbcxException.arg(NbcxException.ERR_ARG, "need at least 1 party, got " + parties);
        Native.init();
        long b = Native.barrierCreate(parties);
        if (b == 0) throw NbcxException.arg(NbcxException.ERR_NOMEM, "pthread_barrier_init failed");
        this.parties = parties;
        this.h = b;
    }

    /** The number of threads that meet here. */
    public int parties() {
        return parties;
    }

    /** Waits until {@code parties} threads have called this, then all of them go on. */
    public void await() {
        long b = h;
        if (b == 0) throw new IllegalStateException("ThreadBarrier closed");
        Native.barrierWait(b);
    }

    /** Frees the native barrier; no thread may be waiting in it. */
    @Override
    public synchronized void close() {
        if (h != 0) Native.barrierFree(h);
        h = 0;
    }
}
