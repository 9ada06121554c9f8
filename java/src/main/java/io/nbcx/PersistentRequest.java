package io.nbcx;

/**
 * A persistent collective (MPI-4 {@code MPI_<op>_init}): planned once,
 * started any number of times with {@link #start()}, each run completed
 * with test/await/toFuture; {@link #close()} frees it (not while active).
 * Input arrays are read (copied into native memory) at each start, output
 * arrays written at each completion.
 */
public final class PersistentRequest extends Request implements AutoCloseable {
    private boolean closed;

    PersistentRequest(String what) {
        super(what, true);
    }

    /** Starts a run with what the buffers hold now. */
    public PersistentRequest start() {
        lock();
        try {
            if (closed) throw NbcxException.arg(NbcxException.ERR_REQUEST, what + ": request is closed");
            if (active) throw NbcxException.arg(NbcxException.ERR_REQUEST, what + ": request is already active");
            if (op != null) op.takeFailure();
            copyIn();
            NbcxException.check(Native.start(this), what + " start");
            active = true;
            error = null;
            future = null;
        } finally {
            unlock(); // (a start may complete at once: its callback waits for the lock)
        }
        return this;
    }

    /** Starts every request (checked first: none starts if one cannot). */
    public static void startAll(PersistentRequest... requests) {
        for (PersistentRequest r : requests) {
            if (r == null) throw NbcxException.arg(NbcxException.ERR_REQUEST, "null request");
            if (r.closed || r.isActive())
                throw NbcxException.arg(NbcxException.ERR_REQUEST, r.what + ": closed or already active");
        }
        for (PersistentRequest r : requests) r.start();
    }

    /** Frees the request; throws if it is active (await it first). Idempotent. */
    @Override
    public void close() {
        lock();
        try {
            if (closed) return;
            if (active)
                throw NbcxException.arg(NbcxException.ERR_REQUEST, what + ": close of an active request (await it first)");
            closed = true;
            dropCallback();
            int rc = Native.requestFree(this);
            releaseResources();
            NbcxException.check(rc, what + " free");
        } finally {
            release();
        }
    }
}
