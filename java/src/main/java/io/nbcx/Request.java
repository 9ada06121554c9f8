package io.nbcx;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * An operation in flight. {@link #test()} and {@link #await()} complete it;
 * {@link #toFuture()} gives a {@link CompletableFuture} completed when it
 * completes, by whichever thread sees that first: a thread in test/await,
 * or the thread nbcx calls back at completion (nbcx_request_on_complete). Arrays given
 * as output buffers hold the result once the request is complete (not
 * before: see {@link Buf}).
 *
 * <p>A request that is never completed keeps its native memory: complete
 * every request (as MPI requires).
 */
public class Request {
    /** The nbcx_request, written by the native calls (a field: a long[1] cell was 24 bytes per operation). */
    long handle;
    /**
     * The request's lock: the thread that holds it, null when free. A
     * field of the request, not a ReentrantLock: that and its Sync were 48
     * of the 240 bytes the binding allocated per operation (docs/java.md,
     * "What each operation costs"). Held only around short work and
     * around a blocking await; not reentrant (a callback on the holding
     * thread checks {@link #heldByCurrentThread} and leaves the work to it).
     */
    private volatile Thread holder;

    private static final VarHandle HOLDER;

    static {
        try {
            HOLDER = MethodHandles.lookup().findVarHandle(Request.class, "holder", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    final String what;
    final boolean persistent;

    private Object keep0, keep1;                      // direct buffers, arrays: reachable until done
    Op op;                                            // held while in use
    Communicator owner;                               // its inUse counts us until released
    boolean released;
    /**
     * What only staging (arrays, layouts), schedules and a third kept
     * buffer use, made when first needed: an operation on direct buffers
     * allocates none of it (docs/java.md, "What each operation costs").
     * Its nine fields in the request itself were 32 of its 104 bytes.
     */
    More more;

    static final class More {
        long[] allocs;                               // staging blocks (ptr), nallocs of them
        int nallocs;
        List<Copy> copyIns, copyOuts;
        List<Object> keepMore;
        List<Op> moreOps;                            // a schedule's reduce nodes' operations
        java.util.IdentityHashMap<Object, Long> whole; // a schedule's arrays, each staged once
        /** A schedule's callback nodes (ids of Schedule's table), and the first exception one threw. */
        List<Long> calls;
        volatile Throwable callFailure;
    }

    More more() {
        More m = more;
        if (m == null) more = m = new More();
        return m;
    }

    // State of the current activation.
    boolean active;
    NbcxException error;
    CompletableFuture<Void> future;

    /** Staging blocks allocated and not yet freed, over all requests (the leak test reads it). */
    static final java.util.concurrent.atomic.AtomicLong LIVE_STAGING = new java.util.concurrent.atomic.AtomicLong();
    /**
     * Bytes of staging memory allocated, over all requests (never
     * decreases; tests read differences: an iscatter root stages its
     * blocks, not the rest of its array).
     */
    static final java.util.concurrent.atomic.LongAdder STAGED_BYTES = new java.util.concurrent.atomic.LongAdder();

    /** Keeps o (a buffer in use) reachable until the request releases its resources. */
    void keep(Object o) {
        if (keep0 == null) keep0 = o;
        else if (keep1 == null) keep1 = o;
        else {
            More m = more();
            if (m.keepMore == null) m.keepMore = new ArrayList<>(4);
            m.keepMore.add(o);
        }
    }

    /** A schedule's reduce node's operation, released with the request. */
    void addOp(Op o) {
        More m = more();
        if (m.moreOps == null) m.moreOps = new ArrayList<>(2);
        m.moreOps.add(o);
    }

    /** A schedule's callback node (its id in Schedule's table), dropped with the request. */
    void addCall(long id) {
        More m = more();
        if (m.calls == null) m.calls = new ArrayList<>(2);
        m.calls.add(id);
    }

    /** Native memory for staging (64-byte aligned), freed with the request. */
    private long allocate(long bytes) {
        long p = Native.malloc(bytes);
        if (p == 0) throw NbcxException.arg(NbcxException.ERR_NOMEM, "no native memory for " + bytes + " bytes");
        More m = more();
        if (m.allocs == null) m.allocs = new long[2];
        else if (m.nallocs == m.allocs.length) m.allocs = java.util.Arrays.copyOf(m.allocs, 2 * m.nallocs);
        m.allocs[m.nallocs++] = p;
        LIVE_STAGING.incrementAndGet();
        STAGED_BYTES.add(bytes);
        return p;
    }

    private void copyIn(Copy c) {
        More m = more();
        if (m.copyIns == null) m.copyIns = new ArrayList<>(2);
        m.copyIns.add(c);
    }

    private void copyOut(Copy c) {
        More m = more();
        if (m.copyOuts == null) m.copyOuts = new ArrayList<>(2);
        m.copyOuts.add(c);
    }

    static final class Copy {
        final Object array;
        final Datatype type;
        final long byteOff, bytes, ptr;
        // A layout buffer: n elements packed into ptr (in) or unpacked from it.
        final Buf lbuf;
        final int n;

        Copy(Object array, Datatype type, long byteOff, long bytes, long ptr) {
            this.array = array;
            this.type = type;
            this.byteOff = byteOff;
            this.bytes = bytes;
            this.ptr = ptr;
            this.lbuf = null;
            this.n = 0;
        }

        Copy(Buf b, int n, long ptr) {
            this.array = b.array;
            this.type = b.type;
            this.byteOff = b.origin;
            this.bytes = (long) n * b.layout.size;
            this.ptr = ptr;
            this.lbuf = b;
            this.n = n;
        }

        /** Array to native memory (in) or back, by the path {@link #arrayCopy} chooses for its size. */
        void run(boolean in) {
            if (lbuf != null) {
                Layout l = lbuf.layout;
                Native.layoutCopy(lbuf.array, lbuf.direct, byteOff, n, l.extent, l.disp, l.len, ptr, in);
            } else if (region(bytes)) {
                Native.copyRegion(array, type.code, (int) (byteOff / type.size), (int) (bytes / type.size), ptr, in);
            } else if (in) {
                Native.copyIn(array, byteOff, bytes, ptr);
            } else {
                Native.copyOut(ptr, array, byteOff, bytes);
            }
        }
    }

    // How array windows are copied (Nbcx.arrayCopy): 0 auto, 1 critical, 2 region.
    static volatile int arrayCopy = 0;
    /**
     * Auto: Get/Set&lt;Type&gt;ArrayRegion up to this many bytes, pinning
     * (GetPrimitiveArrayCritical + memcpy) above. See docs/java.md for the
     * measurement (java/bench/BufBench.java).
     */
    static final long REGION_MAX = 16 * 1024;

    static boolean region(long bytes) {
        int m = arrayCopy;
        return m == 2 || (m == 0 && bytes <= REGION_MAX);
    }

    Request(String what, boolean persistent) {
        this.what = what;
        this.persistent = persistent;
    }

    /**
     * The address nbcx gets for the first {@code elems} elements of a
     * buffer (0 for null, NBCX_IN_PLACE for {@link Buf#IN_PLACE}). Arrays
     * are staged: copied in at start when {@code in}, back at completion
     * when {@code out}.
     */
    long stage(Buf b, long elems, boolean in, boolean out) {
        if (b == null) return 0;
        if (b == Buf.IN_PLACE) return Native.IN_PLACE;
        long size = b.type.size;
        if (b.layout != null) return stageLayout(b, elems, in, out);
        if (b.direct != null) {
            keep(b.direct);
            return b.address() + b.offset * size;
        }
        long bytes = elems * size;
        long p = allocate(bytes);
        long off = b.offset * size;
        if (in || out) {
            Copy c = new Copy(b.array, b.type, off, bytes, p);
            if (in) copyIn(c);
            if (out) copyOut(c);
        }
        keep(b.array);
        return p;
    }

    /** A layout buffer: packed into native memory (elems values of its signature, whole elements). */
    private long stageLayout(Buf b, long elems, boolean in, boolean out) {
        if (elems % b.per != 0)
            throw NbcxException.arg(NbcxException.ERR_COUNT, what + ": " + elems + " " + b.type
                    + " are not a whole number of elements of " + b.layout + " (" + b.per + " each)");
        int n = (int) (elems / b.per);
        if (n > b.lcount)
            throw NbcxException.arg(NbcxException.ERR_BUFFER, what + ": " + n + " elements of "
                    + b.layout + " needed, the buffer has " + b.lcount);
        long bytes = elems * b.type.size;
        long p = allocate(bytes);
        Copy c = new Copy(b, n, p);
        if (in) copyIn(c);
        if (out) copyOut(c);
        keep(b.array != null ? b.array : b.direct);
        return p;
    }

    /**
     * A schedule's buffer: an array is staged whole, once however many
     * nodes name windows of it (a node that receives into it and one that
     * sends from it then see the same memory), copied in at start and
     * back at completion; a direct buffer by address.
     */
    long stageWhole(Buf b) {
        long size = b.type.size;
        if (b.direct != null) {
            keep(b.direct);
            return b.address() + b.offset * size;
        }
        More m = more();
        if (m.whole == null) m.whole = new java.util.IdentityHashMap<>();
        Long base = m.whole.get(b.array);
        if (base == null) {
            long bytes = java.lang.reflect.Array.getLength(b.array) * size;
            long p = allocate(bytes);
            Copy c = new Copy(b.array, b.type, 0, bytes, p);
            copyIn(c);
            copyOut(c);
            keep(b.array);
            m.whole.put(b.array, p);
            base = p;
        }
        return base + b.offset * size;
    }

    void copyIn() {
        More m = more;
        if (m != null && m.copyIns != null) for (Copy c : m.copyIns) c.run(true);
    }

    /** Frees what the request holds (on a failed post, completion or close). */
    void releaseResources() {
        if (released) return;
        released = true;
        keep0 = keep1 = null;
        if (op != null) op.release();
        op = null;
        More m = more;
        if (m != null) {
            for (int i = 0; i < m.nallocs; i++) {
                Native.free(m.allocs[i]);
                LIVE_STAGING.decrementAndGet();
            }
            m.allocs = null;
            m.nallocs = 0;
            m.copyIns = m.copyOuts = null;
            m.keepMore = null;
            if (m.moreOps != null) for (Op o : m.moreOps) o.release();
            m.moreOps = null;
            if (m.whole != null) m.whole.clear();
            if (m.calls != null) for (Long id : m.calls) Schedule.CALLS.remove(id);
            m.calls = null;
        }
        if (owner != null) owner.inUse.decrementAndGet();
        owner = null;
    }

    /** Completion (with the lock held): copy back, release, record the result. */
    void finish(int rc) {
        active = false;
        if (rc == NbcxException.SUCCESS) {
            More m = more;
            if (m != null && m.copyOuts != null) for (Copy c : m.copyOuts) c.run(false);
            error = null;
        } else {
            error = NbcxException.fromNative(rc, what);
        }
        Throwable userFailure = op != null ? op.takeFailure() : null;
        if (userFailure != null && error == null)
            error = new NbcxException(NbcxException.ERR_OP, what + ": the user operation threw " + userFailure,
                    userFailure);
        Throwable callThrew = more != null ? more.callFailure : null;
        if (callThrew != null && rc == NbcxException.ERR_OP)
            error = new NbcxException(NbcxException.ERR_OP, what + ": a callback node threw " + callThrew, callThrew);
        if (!persistent) releaseResources();
    }

    /**
     * Completes f (outside the lock: its dependent stages run here). f and
     * e are read under the lock when completion is seen, so a restart of a
     * persistent request (which makes a new future) cannot hide them.
     */
    private static void signal(CompletableFuture<Void> f, NbcxException e) {
        if (f == null || f.isDone()) return;
        if (e == null) f.complete(null);
        else f.completeExceptionally(e);
    }

    // ------------------------------------------------------------------
    // Completion callbacks (nbcx_request_on_complete)
    // ------------------------------------------------------------------

    private static final int CALLER_MODE = 1; // NBCX_PROGRESS_CALLER

    /** Requests with a callback registered, by the id nbcx hands back. */
    static final ConcurrentHashMap<Long, Request> CALLBACKS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);
    /** The id of this request's callback, 0 before the first toFuture() (under the lock). */
    long callbackId;
    /** Set by the callback: the operation completed; cleared by whoever then completes the request. */
    private volatile boolean nativeDone;

    /**
     * The callback, on the thread that completed the operation (nbcx's
     * progress thread, or a thread in test/await/progress): complete the
     * request and its future here, unless a thread holds the lock (it is
     * in test or await, perhaps this very thread further up): that thread
     * looks at nativeDone when it lets go ({@link #unlock}).
     */
    static void callback(long id) {
        Request r = CALLBACKS.get(id);
        if (r == null) return; // a persistent request closed since
        if (!r.persistent) CALLBACKS.remove(id);
        r.nativeDone = true;
        r.drain();
    }

    /** Takes the lock, waiting for it (spinning briefly, then polling every 20 us). */
    final void lock() {
        Thread me = Thread.currentThread();
        for (int tries = 0; !HOLDER.compareAndSet(this, null, me); tries++) {
            if (tries < 64) Thread.onSpinWait();
            else if (tries < 128) Thread.yield();
            else LockSupport.parkNanos(this, 20_000);
        }
    }

    /** Takes the lock if it is free. */
    final boolean tryLock() {
        return HOLDER.compareAndSet(this, null, Thread.currentThread());
    }

    final boolean heldByCurrentThread() {
        return holder == Thread.currentThread();
    }

    /** Lets the lock go (a volatile write: what was done under it is seen by the next holder). */
    final void release() {
        holder = null;
    }

    /** Releases the lock, then completes what a callback announced meanwhile. */
    void unlock() {
        release();
        if (nativeDone) drain();
    }

    private void drain() {
        // (nativeDone is written before tryLock and read after unlock:
        // either the callback gets the lock or the holder sees the flag.)
        while (nativeDone) {
            if (heldByCurrentThread() || !tryLock()) return;
            CompletableFuture<Void> f = null;
            NbcxException e = null;
            boolean complete = true;
            try {
                nativeDone = false;
                if (active) {
                    int rc = Native.test(this); // complete: it only releases the request
                    if (rc < 0) complete = false; // (a late callback of an earlier start)
                    else finish(rc);
                }
                f = future;
                e = error;
            } finally {
                release();
            }
            if (complete) signal(f, e);
        }
    }

    /** True once complete (then the output arrays hold the result); throws its error. */
    public boolean test() {
        CompletableFuture<Void> f;
        NbcxException e;
        lock();
        try {
            if (active) {
                int rc = Native.test(this);
                if (rc < 0) return false;
                finish(rc);
            }
            f = future;
            e = error;
        } finally {
            unlock();
        }
        signal(f, e);
        if (e != null) throw e;
        return true;
    }

    /** Waits for completion; throws the operation's error. */
    public void await() {
        CompletableFuture<Void> f;
        NbcxException e;
        lock();
        try {
            if (active) finish(Native.await(this));
            f = future;
            e = error;
        } finally {
            unlock();
        }
        signal(f, e);
        if (e != null) throw e;
    }

    /** Waits for every request, then throws the first error met (others suppressed). */
    public static void waitAll(Request... requests) {
        NbcxException first = null;
        for (Request r : requests) {
            if (r == null) continue;
            try {
                r.await();
            } catch (NbcxException e) {
                if (first == null) first = e;
                else first.addSuppressed(e);
            }
        }
        if (first != null) throw first;
    }

    /** Waits for every request (a collection). */
    public static void waitAll(java.util.Collection<? extends Request> requests) {
        waitAll(requests.toArray(new Request[0]));
    }

    /** Whether the operation is in flight. */
    public boolean isActive() {
        lock();
        try {
            return active;
        } finally {
            release();
        }
    }

    /**
     * A future completed (normally, or exceptionally with the
     * {@link NbcxException}) when this operation completes, without anyone
     * calling test or await: nbcx calls back the thread that completes the
     * operation (its progress thread, in thread, split and auto modes),
     * which copies the output arrays back and completes the future there.
     * Dependent stages that are not {@code ...Async} therefore run on
     * nbcx's progress thread: they must not block (no {@code join()},
     * {@code get()} or {@code await()} there); starting the next collective
     * is fine. In caller mode a binding thread drives progress while futures
     * are pending (see {@link CallerProgress}). The same future for every call
     * during one activation.
     */
    public CompletableFuture<Void> toFuture() {
        CompletableFuture<Void> f;
        NbcxException e;
        boolean pending;
        lock();
        try {
            if (future == null) future = new CompletableFuture<>();
            f = future;
            e = error;
            pending = active;
            if (active && callbackId == 0) {
                long id = NEXT_ID.getAndIncrement();
                CALLBACKS.put(id, this);
                int rc = Native.onComplete(this, id); // complete already: callback now, here
                if (rc != NbcxException.SUCCESS) {
                    CALLBACKS.remove(id);
                    throw NbcxException.fromNative(rc, what + " toFuture");
                }
                callbackId = id;
            } // (a persistent request's callback, registered once, fires at every start)
        } finally {
            unlock();
        }
        if (!pending) signal(f, e);
        else if (Native.progressGet() == CALLER_MODE) CallerProgress.INSTANCE.drive(f);
        return f;
    }

    /** A persistent request's callback goes with it (close). */
    void dropCallback() {
        if (callbackId != 0) CALLBACKS.remove(callbackId);
        callbackId = 0;
    }

    @Override
    public String toString() {
        return "Request[" + what + (active ? ", active" : ", complete") + "]";
    }
}
