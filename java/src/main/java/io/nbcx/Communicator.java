package io.nbcx;

import static io.nbcx.NbcxException.*;

/**
 * A communicator: the ranks that take part in collectives together, with
 * nbcx's nonblocking collectives ({@code i*}: start now, complete with the
 * returned {@link Request}) and their persistent forms ({@code *Init}: a
 * {@link PersistentRequest} to start again and again). Arguments and
 * semantics are MPI's; counts are derived from the buffers:
 * <ul>
 * <li>a rooted or "all" collective sends {@code send.count()} elements
 * per rank and receives {@code size()} blocks of as many bytes;
 * <li>scatter and alltoall send {@code size()} blocks of
 * {@code send.count()/size()} elements (it must divide);
 * <li>the vector forms take counts and displacements (in elements).
 * </ul>
 * Buffers only significant at the root may be null elsewhere.
 * {@link Buf#IN_PLACE} is accepted where MPI accepts MPI_IN_PLACE.
 *
 * <p>Every argument is checked here before nbcx is called; a bad one throws
 * {@link NbcxException} and nothing is started. A communicator can be used
 * from several threads at once, with MPI's rule: collectives start in the
 * same order on every rank.
 */
public final class Communicator implements AutoCloseable {
    /** Color of {@link #split} for a rank that joins no new communicator (MPI_UNDEFINED). */
    public static final int UNDEFINED = -32766;

    private volatile long handle;
    private final int rank, size;
    private final boolean fromRun;
    /** Operations in flight and persistent requests not closed, on this communicator. */
    final java.util.concurrent.atomic.AtomicInteger inUse = new java.util.concurrent.atomic.AtomicInteger();
    /** The rank body's communicator this one was made from (dup/split), or null. */
    private final Communicator root;
    /** Of a rank body's communicator: those made from it, closed with it if still open. */
    private final java.util.List<Communicator> derived = new java.util.ArrayList<>();

    Communicator(long handle, boolean fromRun) {
        this(handle, fromRun, null);
    }

    private Communicator(long handle, boolean fromRun, Communicator root) {
        this.handle = handle;
        this.rank = Native.commRank(handle);
        this.size = Native.commSize(handle);
        this.fromRun = fromRun;
        this.root = root;
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    /** The transport under the communicator ("inproc" or "mpi"). */
    public String transport() {
        return Native.commTransport(open());
    }

    public boolean isClosed() {
        return handle == 0;
    }

    /**
     * A new communicator with the same ranks and topology (MPI_Comm_dup;
     * nbcx_comm_dup): its own sequence of collectives, so another thread
     * can use it while this one is in use. Collective: every rank calls it,
     * in the same order as its collectives on this communicator. Thread
     * ranks and MPI ranks alike; close it when done (a rank body's are
     * closed when the body returns).
     */
    public Communicator dup() {
        return derive(true, 0, 0);
    }

    /**
     * MPI_Comm_split (nbcx_comm_split): the ranks of one {@code color}
     * (&ge; 0) form a new communicator, ranked by {@code key}, then by
     * rank here; {@link #UNDEFINED} joins none and returns null. No
     * topology is kept. Collective, as {@link #dup}.
     */
    public Communicator split(int color, int key) {
        if (color < 0 && color != UNDEFINED)
            throw arg(ERR_ARG, "split: color " + color + " is negative and not UNDEFINED");
        return derive(false, color, key);
    }

    private Communicator derive(boolean dup, int color, int key) {
        long h = open();
        long[] out = new long[1];
        check(Native.commSplit(h, dup, color, key, out), dup ? "nbcx_comm_dup" : "nbcx_comm_split");
        if (out[0] == 0) return null;
        Communicator top = fromRun ? this : root;
        Communicator c = new Communicator(out[0], false, top);
        if (top != null) {
            synchronized (top.derived) {
                top.derived.add(c);
            }
        }
        return c;
    }

    /**
     * Frees the communicator. Throws {@link NbcxException} with
     * {@code ERR_BUSY} (and frees nothing) while operations started on it
     * are not complete or persistent requests on it are not closed:
     * complete (test, await, a future) or close them first. A communicator
     * of {@link Nbcx#threads} is closed when its body returns, with those
     * made from it by dup/split.
     */
    @Override
    public synchronized void close() {
        long h = handle;
        if (h == 0) return;
        int n = inUse.get();
        if (n > 0)
            throw arg(ERR_BUSY, "close: " + n + " operation(s) in flight or persistent request(s) open on "
                    + this + ": complete or close them first");
        handle = 0;
        if (root != null) {
            synchronized (root.derived) {
                root.derived.remove(this);
            }
        }
        check(Native.commFree(h), "nbcx_comm_free");
    }

    /** The end of the rank's body: nbcx_inproc_run frees what is left; we free the derived ones. */
    synchronized void detach() {
        handle = 0;
        java.util.List<Communicator> left;
        synchronized (derived) {
            left = new java.util.ArrayList<>(derived);
            derived.clear();
        }
        for (Communicator c : left) c.drop();
    }

    private synchronized void drop() {
        long h = handle;
        handle = 0;
        if (h != 0) Native.commFree(h);
    }

    boolean fromRun() {
        return fromRun;
    }

    private long open() {
        long h = handle;
        if (h == 0) throw arg(ERR_COMM, "communicator is closed");
        return h;
    }

    // ------------------------------------------------------------------
    // Argument checks
    // ------------------------------------------------------------------

    private void checkRoot(int root) {
        if (root < 0 || root >= size) throw arg(ERR_ROOT, "root " + root + " outside [0, " + size + ")");
    }

    private static Buf need(Buf b, String name) {
        if (b == null) throw arg(ERR_BUFFER, name + " is null");
        return b;
    }

    private static Buf real(Buf b, String name) {
        need(b, name);
        if (b == Buf.IN_PLACE) throw arg(ERR_IN_PLACE, name + " cannot be Buf.IN_PLACE here");
        return b;
    }

    private static void writable(Buf b, String name) {
        if (b != null && b.direct != null && b.direct.isReadOnly())
            throw arg(ERR_BUFFER, name + " is a read-only ByteBuffer");
    }

    private static void sameType(Buf a, Buf b) {
        if (a.type != b.type) throw arg(ERR_TYPE, "datatypes differ: " + a.type + " and " + b.type);
    }

    private static void atLeast(Buf b, long elems, String name) {
        if (b.count < elems)
            throw arg(ERR_BUFFER, name + " holds " + b.count + " elements, " + elems + " needed");
    }

    private static int perRank(Buf b, int size, String name) {
        if (b.count % size != 0)
            throw arg(ERR_COUNT, name + ": " + b.count + " elements do not divide into " + size + " ranks");
        return b.count / size;
    }

    /** Elements of {@code to} that hold as many bytes as n elements of {@code from}. */
    private static int convert(int n, Datatype from, Datatype to) {
        long bytes = (long) n * from.size;
        if (bytes % to.size != 0)
            throw arg(ERR_TYPE, n + " " + from + " are not a whole number of " + to);
        return (int) (bytes / to.size);
    }

    /** Checks per-rank counts and displacements against a buffer; returns the extent. */
    private int vector(int[] counts, int[] displs, Buf b, String name) {
        return vector(size, counts, displs, b, name);
    }

    /** The same for n blocks (neighbourhood collectives: a block per neighbour). */
    private static int vector(int size, int[] counts, int[] displs, Buf b, String name) {
        if (counts == null || displs == null) throw arg(ERR_ARG, name + ": counts and displacements are needed");
        if (counts.length != size || displs.length != size)
            throw arg(ERR_ARG, name + ": counts and displacements need " + size + " entries, got "
                    + counts.length + " and " + displs.length);
        long extent = 0;
        int elems = b.layout != null ? b.lcount : b.count; // (a layout's: counted in its elements)
        for (int i = 0; i < size; i++) {
            if (counts[i] < 0) throw arg(ERR_COUNT, name + ": negative count " + counts[i] + " for rank " + i);
            if (displs[i] < 0) throw arg(ERR_ARG, name + ": negative displacement " + displs[i] + " for rank " + i);
            long end = (long) displs[i] + counts[i];
            if (counts[i] > 0 && end > elems)
                throw arg(ERR_BUFFER, name + ": block of rank " + i + " ends at " + end + ", past the "
                        + elems + " elements of the buffer");
            if (counts[i] > 0) extent = Math.max(extent, end);
        }
        return (int) (extent * b.per);
    }

    /**
     * Counts or displacements in elements of b, as nbcx gets them: a
     * layout buffer's in values of its signature (b.per each).
     */
    private static int[] sig(int[] a, Buf b) {
        if (a == null) return null;
        int[] c = a.clone();
        if (b != null && b.layout != null)
            for (int i = 0; i < c.length; i++) {
                long v = (long) c[i] * b.per;
                if (v != (int) v)
                    throw arg(ERR_COUNT, c[i] + " elements of " + b.layout + " exceed 2^31 values");
                c[i] = (int) v;
            }
        return c;
    }

    /** A block of n values of b's signature must be whole elements of its layout (MPI's counts are in them). */
    private static void whole(Buf b, long n, String name) {
        if (b != null && b.layout != null && n % b.per != 0)
            throw arg(ERR_COUNT, name + ": a block of " + n + " " + b.type + " is not a whole number of elements of "
                    + b.layout + " (" + b.per + " each)");
    }

    /** A layout of several types moves as bytes: no reductions. */
    private static void reducible(Buf b, String name) {
        if (b != null && b.layout != null && b.layout.type == null)
            throw arg(ERR_OP, name + ": " + b.layout + " has values of several types and cannot be reduced");
    }

    /** The w-forms give a datatype per rank: not with a layout buffer. */
    private static void noLayout(Buf b, String name) {
        if (b != null && b.layout != null)
            throw arg(ERR_TYPE, name + ": a layout buffer is not supported here (the per-rank datatypes "
                    + "and byte displacements describe the buffer)");
    }

    private static int typeCode(Buf b) {
        return b == null || b.type == null ? 0 : b.type.code;
    }

    // ------------------------------------------------------------------
    // Posting
    // ------------------------------------------------------------------

    /** "i" + name and name + "_init", made once (not a new String per operation). */
    private static final java.util.concurrent.ConcurrentHashMap<String, String> NB_NAMES =
            new java.util.concurrent.ConcurrentHashMap<>(), INIT_NAMES = new java.util.concurrent.ConcurrentHashMap<>();

    /** Builds the request: stage() calls made by {@code setup}, then the nbcx call. */
    private Request post(boolean persistent, String name, int kind, Op op, Setup setup) {
        long comm = open();
        String what = persistent ? INIT_NAMES.computeIfAbsent(name, n -> n + "_init")
                : NB_NAMES.computeIfAbsent(name, n -> "i" + n);
        Request r = persistent ? new PersistentRequest(what) : new Request(what, false);
        long oph = 0;
        inUse.incrementAndGet();
        r.owner = this; // (releaseResources gives it back)
        try {
            if (op != null) {
                oph = op.acquire();
                r.op = op;
            }
            Args a = Args.take();
            int rc;
            try {
                setup.stage(r, a);
                if (!persistent) r.copyIn();
                rc = kind == Native.K_ALLTOALLW
                        ? Native.alltoallw(persistent, comm, a.sbuf, a.scounts, a.sdispls, a.stypes, a.rbuf,
                                a.rcounts, a.rdispls, a.rtypes, r)
                        : kind == Native.K_NEIGHBOR_ALLTOALLW
                        ? Native.neighborAlltoallw(persistent, comm, a.sbuf, a.scounts, a.sdispls, a.stypes,
                                a.rbuf, a.rcounts, a.rdispls, a.rtypes, r)
                        : Native.coll(kind, persistent, comm, a.sbuf, a.scount, a.scounts, a.sdispls, a.stype,
                                a.rbuf, a.rcount, a.rcounts, a.rdispls, a.rtype, oph, a.root, r);
            } finally {
                a.give();
            }
            check(rc, what);
            r.active = !persistent;
            return r;
        } catch (RuntimeException | Error e) {
            r.releaseResources();
            throw e;
        }
    }

    /**
     * The arguments of one nbcx call, filled by a Setup. One per thread,
     * reused (a new one each call was 72 of the 240 bytes the binding
     * allocated per operation); a call made while the thread's is in use
     * (from a user operation that nbcx runs inside a start) gets its own.
     */
    private static final class Args {
        long sbuf, rbuf;
        int scount, rcount, stype, rtype, root;
        int[] scounts, sdispls, rcounts, rdispls;
        int[] stypes, rtypes; // alltoallw
        private boolean busy;

        private static final ThreadLocal<Args> MINE = ThreadLocal.withInitial(Args::new);

        static Args take() {
            Args a = MINE.get();
            if (a.busy) return new Args();
            a.busy = true;
            return a;
        }

        /** Back to the thread, emptied (no stale counts, no arrays kept reachable). */
        void give() {
            sbuf = rbuf = 0;
            scount = rcount = stype = rtype = root = 0;
            scounts = sdispls = rcounts = rdispls = stypes = rtypes = null;
            busy = false;
        }
    }

    @FunctionalInterface
    private interface Setup {
        void stage(Request r, Args a);
    }

    private static PersistentRequest p(Request r) {
        return (PersistentRequest) r;
    }

    // ------------------------------------------------------------------
    // The collectives
    // ------------------------------------------------------------------

    private Request barrier(boolean pers) {
        return post(pers, "barrier", Native.K_BARRIER, null, (r, a) -> {});
    }

    private Request bcast(boolean pers, Buf buf, int root) {
        open();
        real(buf, "buffer");
        checkRoot(root);
        writable(buf, "buffer");
        return post(pers, "bcast", Native.K_BCAST, null, (r, a) -> {
            a.rbuf = r.stage(buf, buf.count, rank == root, rank != root);
            a.rcount = buf.count;
            a.rtype = buf.type.code;
            a.root = root;
        });
    }

    private Request reduce(boolean pers, String name, int kind, Buf send, Buf recv, Op op, int root,
            boolean rooted) {
        open();
        need(send, "send buffer");
        if (op == null) throw arg(ERR_OP, "null operation");
        reducible(send, name);
        reducible(recv, name);
        if (rooted) checkRoot(root);
        boolean recvHere = !rooted || rank == root;
        boolean inPlace = send == Buf.IN_PLACE;
        if (inPlace && !recvHere) throw arg(ERR_IN_PLACE, "Buf.IN_PLACE as send buffer is for the root only");
        if (recvHere) real(recv, "receive buffer");
        writable(recv, "receive buffer");
        Buf typed = inPlace ? recv : send;
        int count = typed.count;
        if (recv != null && recvHere) {
            if (!inPlace) sameType(send, recv);
            atLeast(recv, count, "receive buffer");
        }
        boolean keepOld = inPlace || (kind == Native.K_EXSCAN && rank == 0);
        return post(pers, name, kind, op, (r, a) -> {
            a.sbuf = r.stage(send, count, true, false);
            a.rbuf = recv != null && recvHere ? r.stage(recv, count, keepOld, true) : 0;
            a.scount = count;
            a.stype = typed.type.code;
            a.root = root;
        });
    }

    private Request gather(boolean pers, Buf send, Buf recv, int root) {
        open();
        need(send, "send buffer");
        checkRoot(root);
        boolean isRoot = rank == root;
        boolean inPlace = send == Buf.IN_PLACE;
        if (inPlace && !isRoot) throw arg(ERR_IN_PLACE, "Buf.IN_PLACE as send buffer is for the root only");
        if (isRoot) real(recv, "receive buffer");
        writable(recv, "receive buffer");
        final int rcount;
        if (isRoot) {
            rcount = inPlace ? perRank(recv, size, "receive buffer") : convert(send.count, send.type, recv.type);
            atLeast(recv, (long) rcount * size, "receive buffer");
            whole(recv, rcount, "gather (receive)");
        } else {
            rcount = 0;
        }
        return post(pers, "gather", Native.K_GATHER, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = typeCode(send);
            a.rbuf = isRoot ? r.stage(recv, (long) rcount * size, inPlace, true) : 0;
            a.rcount = rcount;
            a.rtype = isRoot ? recv.type.code : typeCode(send);
            a.root = root;
        });
    }

    private Request gatherv(boolean pers, Buf send, Buf recv, int[] counts, int[] displs, int root) {
        open();
        need(send, "send buffer");
        checkRoot(root);
        boolean isRoot = rank == root;
        if (send == Buf.IN_PLACE && !isRoot)
            throw arg(ERR_IN_PLACE, "Buf.IN_PLACE as send buffer is for the root only");
        if (isRoot) real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int extent = isRoot ? vector(counts, displs, recv, "gatherv") : 0;
        int[] c = isRoot ? sig(counts, recv) : null, d = isRoot ? sig(displs, recv) : null;
        return post(pers, "gatherv", Native.K_GATHERV, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = typeCode(send);
            a.rbuf = isRoot ? r.stage(recv, extent, true, true) : 0;
            a.rcounts = c;
            a.rdispls = d;
            a.rtype = isRoot ? recv.type.code : typeCode(send);
            a.root = root;
        });
    }

    private Request scatter(boolean pers, Buf send, Buf recv, int root) {
        open();
        checkRoot(root);
        boolean isRoot = rank == root;
        need(recv, "receive buffer");
        boolean inPlace = recv == Buf.IN_PLACE;
        if (inPlace && !isRoot) throw arg(ERR_IN_PLACE, "Buf.IN_PLACE as receive buffer is for the root only");
        writable(recv, "receive buffer");
        if (isRoot) real(send, "send buffer");
        final int scount;
        if (isRoot) {
            scount = inPlace ? perRank(send, size, "send buffer") : convert(recv.count, recv.type, send.type);
            atLeast(send, (long) scount * size, "send buffer");
            whole(send, scount, "scatter (send)");
        } else {
            scount = 0;
        }
        return post(pers, "scatter", Native.K_SCATTER, null, (r, a) -> {
            a.sbuf = isRoot ? r.stage(send, (long) scount * size, true, false) : 0;
            a.scount = scount;
            a.stype = isRoot ? send.type.code : typeCode(recv);
            a.rbuf = r.stage(recv, recv.count, false, true);
            a.rcount = recv.count;
            a.rtype = typeCode(recv);
            a.root = root;
        });
    }

    private Request scatterv(boolean pers, Buf send, int[] counts, int[] displs, Buf recv, int root) {
        open();
        checkRoot(root);
        boolean isRoot = rank == root;
        need(recv, "receive buffer");
        if (recv == Buf.IN_PLACE && !isRoot)
            throw arg(ERR_IN_PLACE, "Buf.IN_PLACE as receive buffer is for the root only");
        writable(recv, "receive buffer");
        if (isRoot) real(send, "send buffer");
        int extent = isRoot ? vector(counts, displs, send, "scatterv") : 0;
        int[] c = isRoot ? sig(counts, send) : null, d = isRoot ? sig(displs, send) : null;
        return post(pers, "scatterv", Native.K_SCATTERV, null, (r, a) -> {
            a.sbuf = isRoot ? r.stage(send, extent, true, false) : 0;
            a.scounts = c;
            a.sdispls = d;
            a.stype = isRoot ? send.type.code : typeCode(recv);
            a.rbuf = r.stage(recv, recv.count, false, true);
            a.rcount = recv.count;
            a.rtype = typeCode(recv);
            a.root = root;
        });
    }

    private Request allgather(boolean pers, Buf send, Buf recv) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        boolean inPlace = send == Buf.IN_PLACE;
        int rcount = inPlace ? perRank(recv, size, "receive buffer") : convert(send.count, send.type, recv.type);
        atLeast(recv, (long) rcount * size, "receive buffer");
        whole(recv, rcount, "allgather (receive)");
        return post(pers, "allgather", Native.K_ALLGATHER, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = typeCode(send);
            a.rbuf = r.stage(recv, (long) rcount * size, inPlace, true);
            a.rcount = rcount;
            a.rtype = recv.type.code;
        });
    }

    private Request allgatherv(boolean pers, Buf send, Buf recv, int[] counts, int[] displs) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int extent = vector(counts, displs, recv, "allgatherv");
        int[] c = sig(counts, recv), d = sig(displs, recv);
        return post(pers, "allgatherv", Native.K_ALLGATHERV, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = typeCode(send);
            a.rbuf = r.stage(recv, extent, true, true);
            a.rcounts = c;
            a.rdispls = d;
            a.rtype = recv.type.code;
        });
    }

    private Request alltoall(boolean pers, Buf send, Buf recv) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        boolean inPlace = send == Buf.IN_PLACE;
        int scount = inPlace ? 0 : perRank(send, size, "send buffer");
        int rcount = inPlace ? perRank(recv, size, "receive buffer") : convert(scount, send.type, recv.type);
        atLeast(recv, (long) rcount * size, "receive buffer");
        if (!inPlace) whole(send, scount, "alltoall (send)");
        whole(recv, rcount, "alltoall (receive)");
        return post(pers, "alltoall", Native.K_ALLTOALL, null, (r, a) -> {
            a.sbuf = r.stage(send, (long) scount * size, true, false);
            a.scount = scount;
            a.stype = typeCode(send);
            a.rbuf = r.stage(recv, (long) rcount * size, inPlace, true);
            a.rcount = rcount;
            a.rtype = recv.type.code;
        });
    }

    /**
     * Checks alltoallw's per-rank counts, byte displacements and types
     * against a buffer (its size in bytes); returns the extent in elements
     * of the buffer's own type, and the type codes in codes.
     */
    private int wvector(int[] counts, int[] displs, Datatype[] types, Buf b, int[] codes, String name) {
        return wvector(size, counts, displs, types, b, codes, name);
    }

    private static int wvector(int size, int[] counts, int[] displs, Datatype[] types, Buf b, int[] codes,
            String name) {
        if (counts == null || displs == null || types == null)
            throw arg(ERR_ARG, name + ": counts, displacements and types are needed");
        if (counts.length != size || displs.length != size || types.length != size)
            throw arg(ERR_ARG, name + ": counts, displacements and types need " + size + " entries, got "
                    + counts.length + ", " + displs.length + " and " + types.length);
        noLayout(b, name);
        long bytes = (long) b.count * b.type.size, extent = 0;
        for (int i = 0; i < size; i++) {
            if (types[i] == null) throw arg(ERR_TYPE, name + ": null datatype for rank " + i);
            if (counts[i] < 0) throw arg(ERR_COUNT, name + ": negative count " + counts[i] + " for rank " + i);
            if (displs[i] < 0) throw arg(ERR_ARG, name + ": negative displacement " + displs[i] + " for rank " + i);
            long end = displs[i] + (long) counts[i] * types[i].size;
            if (counts[i] > 0 && end > bytes)
                throw arg(ERR_BUFFER, name + ": block of rank " + i + " ends at byte " + end + ", past the "
                        + bytes + " bytes of the buffer");
            if (counts[i] > 0) extent = Math.max(extent, end);
            codes[i] = types[i].code;
        }
        return (int) ((extent + b.type.size - 1) / b.type.size);
    }

    private Request alltoallw(boolean pers, Buf send, int[] scounts, int[] sdispls, Datatype[] stypes, Buf recv,
            int[] rcounts, int[] rdispls, Datatype[] rtypes) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        if (send == Buf.IN_PLACE) throw arg(ERR_IN_PLACE, "alltoallw: IN_PLACE is not supported by the binding");
        int[] stc = new int[size], rtc = new int[size];
        int sext = wvector(scounts, sdispls, stypes, send, stc, "alltoallw (send)");
        int rext = wvector(rcounts, rdispls, rtypes, recv, rtc, "alltoallw (receive)");
        int[] sc = scounts.clone(), sd = sdispls.clone(), rc = rcounts.clone(), rd = rdispls.clone();
        return post(pers, "alltoallw", Native.K_ALLTOALLW, null, (r, a) -> {
            a.sbuf = r.stage(send, sext, true, false);
            a.scounts = sc;
            a.sdispls = sd;
            a.stypes = stc;
            a.rbuf = r.stage(recv, rext, true, true);
            a.rcounts = rc;
            a.rdispls = rd;
            a.rtypes = rtc;
        });
    }

    private Request alltoallv(boolean pers, Buf send, int[] scounts, int[] sdispls, Buf recv, int[] rcounts,
            int[] rdispls) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        boolean inPlace = send == Buf.IN_PLACE;
        int sext = inPlace ? 0 : vector(scounts, sdispls, send, "alltoallv (send)");
        int rext = vector(rcounts, rdispls, recv, "alltoallv (receive)");
        int[] sc = inPlace ? null : sig(scounts, send), sd = inPlace ? null : sig(sdispls, send);
        int[] rc = sig(rcounts, recv), rd = sig(rdispls, recv);
        return post(pers, "alltoallv", Native.K_ALLTOALLV, null, (r, a) -> {
            a.sbuf = r.stage(send, sext, true, false);
            a.scounts = sc;
            a.sdispls = sd;
            a.stype = typeCode(send);
            a.rbuf = r.stage(recv, rext, true, true);
            a.rcounts = rc;
            a.rdispls = rd;
            a.rtype = recv.type.code;
        });
    }

    private Request reduceScatterBlock(boolean pers, Buf send, Buf recv, Op op) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        if (op == null) throw arg(ERR_OP, "null operation");
        reducible(send, "reduce_scatter_block");
        reducible(recv, "reduce_scatter_block");
        boolean inPlace = send == Buf.IN_PLACE;
        int rcount = inPlace ? perRank(recv, size, "receive buffer") : recv.count;
        if (!inPlace) {
            sameType(send, recv);
            atLeast(send, (long) rcount * size, "send buffer");
            whole(send, rcount, "reduce_scatter_block (send)");
        }
        return post(pers, "reduce_scatter_block", Native.K_REDUCE_SCATTER_BLOCK, op, (r, a) -> {
            a.sbuf = r.stage(send, (long) rcount * size, true, false);
            a.rbuf = r.stage(recv, inPlace ? (long) rcount * size : rcount, inPlace, true);
            a.rcount = rcount;
            a.rtype = recv.type.code;
        });
    }

    private Request reduceScatter(boolean pers, Buf send, Buf recv, int[] counts, Op op) {
        open();
        need(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        if (op == null) throw arg(ERR_OP, "null operation");
        if (counts == null || counts.length != size)
            throw arg(ERR_ARG, "reduce_scatter: " + size + " counts needed, got "
                    + (counts == null ? "null" : String.valueOf(counts.length)));
        reducible(send, "reduce_scatter");
        reducible(recv, "reduce_scatter");
        counts = sig(counts, recv); // (a layout receive buffer: counts in its elements)
        long total = 0;
        for (int i = 0; i < size; i++) {
            if (counts[i] < 0) throw arg(ERR_COUNT, "reduce_scatter: negative count " + counts[i] + " for rank " + i);
            total += counts[i];
        }
        if (total > Integer.MAX_VALUE) throw arg(ERR_COUNT, "reduce_scatter: " + total + " elements in all");
        boolean inPlace = send == Buf.IN_PLACE;
        long sum = total;
        if (inPlace) {
            atLeast(recv, sum, "receive buffer (in place: the whole input)");
        } else {
            sameType(send, recv);
            atLeast(send, sum, "send buffer");
            atLeast(recv, counts[rank], "receive buffer");
        }
        int[] c = counts;
        return post(pers, "reduce_scatter", Native.K_REDUCE_SCATTER, op, (r, a) -> {
            a.sbuf = r.stage(send, sum, true, false);
            a.rbuf = r.stage(recv, inPlace ? sum : c[rank], inPlace, true);
            a.rcounts = c;
            a.rtype = recv.type.code;
        });
    }

    // ------------------------------------------------------------------
    // Public API: nonblocking forms
    // ------------------------------------------------------------------

    public Request ibarrier() { return barrier(false); }

    /** The root's buffer to every rank's. */
    public Request ibcast(Buf buf, int root) { return bcast(false, buf, root); }

    /** Element-wise reduction into the root's {@code recv} (may be null elsewhere). */
    public Request ireduce(Buf send, Buf recv, Op op, int root) {
        return reduce(false, "reduce", Native.K_REDUCE, send, recv, op, root, true);
    }

    public Request iallreduce(Buf send, Buf recv, Op op) {
        return reduce(false, "allreduce", Native.K_ALLREDUCE, send, recv, op, 0, false);
    }

    /** Inclusive prefix reduction over ranks 0..rank. */
    public Request iscan(Buf send, Buf recv, Op op) {
        return reduce(false, "scan", Native.K_SCAN, send, recv, op, 0, false);
    }

    /** Exclusive prefix reduction over ranks 0..rank-1 (rank 0's recv is left as it is). */
    public Request iexscan(Buf send, Buf recv, Op op) {
        return reduce(false, "exscan", Native.K_EXSCAN, send, recv, op, 0, false);
    }

    /** Every rank's {@code send} into block {@code i} of the root's {@code recv}. */
    public Request igather(Buf send, Buf recv, int root) { return gather(false, send, recv, root); }

    public Request igatherv(Buf send, Buf recv, int[] recvCounts, int[] displs, int root) {
        return gatherv(false, send, recv, recvCounts, displs, root);
    }

    /** Block {@code i} of the root's {@code send} to rank {@code i}'s {@code recv}. */
    public Request iscatter(Buf send, Buf recv, int root) { return scatter(false, send, recv, root); }

    public Request iscatterv(Buf send, int[] sendCounts, int[] displs, Buf recv, int root) {
        return scatterv(false, send, sendCounts, displs, recv, root);
    }

    public Request iallgather(Buf send, Buf recv) { return allgather(false, send, recv); }

    public Request iallgatherv(Buf send, Buf recv, int[] recvCounts, int[] displs) {
        return allgatherv(false, send, recv, recvCounts, displs);
    }

    public Request ialltoall(Buf send, Buf recv) { return alltoall(false, send, recv); }

    /**
     * MPI_Ialltoallw: block {@code i} of {@code send} (sendCounts[i]
     * elements of sendTypes[i] at byte sendDispls[i]) to rank {@code i},
     * whose block from us lands at byte recvDispls[i] of {@code recv}
     * (recvCounts[i] elements of recvTypes[i]). The buffers' own types only
     * give their sizes; displacements are in bytes, as in MPI.
     */
    public Request ialltoallw(Buf send, int[] sendCounts, int[] sendDispls, Datatype[] sendTypes, Buf recv,
            int[] recvCounts, int[] recvDispls, Datatype[] recvTypes) {
        return alltoallw(false, send, sendCounts, sendDispls, sendTypes, recv, recvCounts, recvDispls, recvTypes);
    }

    /** The persistent form of {@link #ialltoallw}. */
    public PersistentRequest alltoallwInit(Buf send, int[] sendCounts, int[] sendDispls, Datatype[] sendTypes,
            Buf recv, int[] recvCounts, int[] recvDispls, Datatype[] recvTypes) {
        return p(alltoallw(true, send, sendCounts, sendDispls, sendTypes, recv, recvCounts, recvDispls, recvTypes));
    }

    public Request ialltoallv(Buf send, int[] sendCounts, int[] sendDispls, Buf recv, int[] recvCounts,
            int[] recvDispls) {
        return alltoallv(false, send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
    }

    /** Reduces {@code size()*recv.count()} elements, block {@code i} of the result to rank {@code i}. */
    public Request ireduceScatterBlock(Buf send, Buf recv, Op op) {
        return reduceScatterBlock(false, send, recv, op);
    }

    /**
     * Reduces {@code sum(recvCounts)} elements; rank {@code i} gets the
     * {@code recvCounts[i]} elements that follow those of ranks before it.
     */
    public Request ireduceScatter(Buf send, Buf recv, int[] recvCounts, Op op) {
        return reduceScatter(false, send, recv, recvCounts, op);
    }

    // ------------------------------------------------------------------
    // Public API: persistent forms (same arguments)
    // ------------------------------------------------------------------

    public PersistentRequest barrierInit() { return p(barrier(true)); }

    public PersistentRequest bcastInit(Buf buf, int root) { return p(bcast(true, buf, root)); }

    public PersistentRequest reduceInit(Buf send, Buf recv, Op op, int root) {
        return p(reduce(true, "reduce", Native.K_REDUCE, send, recv, op, root, true));
    }

    public PersistentRequest allreduceInit(Buf send, Buf recv, Op op) {
        return p(reduce(true, "allreduce", Native.K_ALLREDUCE, send, recv, op, 0, false));
    }

    public PersistentRequest scanInit(Buf send, Buf recv, Op op) {
        return p(reduce(true, "scan", Native.K_SCAN, send, recv, op, 0, false));
    }

    public PersistentRequest exscanInit(Buf send, Buf recv, Op op) {
        return p(reduce(true, "exscan", Native.K_EXSCAN, send, recv, op, 0, false));
    }

    public PersistentRequest gatherInit(Buf send, Buf recv, int root) { return p(gather(true, send, recv, root)); }

    public PersistentRequest gathervInit(Buf send, Buf recv, int[] recvCounts, int[] displs, int root) {
        return p(gatherv(true, send, recv, recvCounts, displs, root));
    }

    public PersistentRequest scatterInit(Buf send, Buf recv, int root) { return p(scatter(true, send, recv, root)); }

    public PersistentRequest scattervInit(Buf send, int[] sendCounts, int[] displs, Buf recv, int root) {
        return p(scatterv(true, send, sendCounts, displs, recv, root));
    }

    public PersistentRequest allgatherInit(Buf send, Buf recv) { return p(allgather(true, send, recv)); }

    public PersistentRequest allgathervInit(Buf send, Buf recv, int[] recvCounts, int[] displs) {
        return p(allgatherv(true, send, recv, recvCounts, displs));
    }

    public PersistentRequest alltoallInit(Buf send, Buf recv) { return p(alltoall(true, send, recv)); }

    public PersistentRequest alltoallvInit(Buf send, int[] sendCounts, int[] sendDispls, Buf recv,
            int[] recvCounts, int[] recvDispls) {
        return p(alltoallv(true, send, sendCounts, sendDispls, recv, recvCounts, recvDispls));
    }

    public PersistentRequest reduceScatterBlockInit(Buf send, Buf recv, Op op) {
        return p(reduceScatterBlock(true, send, recv, op));
    }

    public PersistentRequest reduceScatterInit(Buf send, Buf recv, int[] recvCounts, Op op) {
        return p(reduceScatter(true, send, recv, recvCounts, op));
    }

    /**
     * A new, empty {@link Schedule} on this communicator: a collective of
     * one's own, built node by node (nbcx_sched_create). It counts as in
     * use (see {@link #close}) until it is closed or its request completes.
     */
    public Schedule schedule() {
        long h = open();
        Request r = new Request("schedule", false);
        inUse.incrementAndGet();
        r.owner = this;
        long[] out = new long[1];
        int rc = Native.schedCreate(h, out);
        if (rc != SUCCESS) {
            r.releaseResources();
            check(rc, "nbcx_sched_create");
        }
        return new Schedule(this, out[0], r);
    }

    // ------------------------------------------------------------------
    // Topologies and the neighbourhood collectives
    // ------------------------------------------------------------------

    /** MPI_PROC_NULL: a neighbour that exchanges nothing (its block is neither read nor written). */
    public static final int PROC_NULL = -1;

    /**
     * Attaches a Cartesian grid (nbcx_comm_set_cart; MPI_Cart_create without
     * reordering): ranks in row-major order of their coordinates, neighbours
     * -1 then +1 of each dimension ({@code 2 * dims.length} blocks,
     * {@link #PROC_NULL} across a non-periodic border). The product of
     * {@code dims} must be {@link #size()}; {@code periods} may be null (no
     * dimension periodic). A local call; every rank sets a matching topology
     * before its next neighbourhood collective.
     */
    public void setCart(int[] dims, boolean[] periods) {
        long h = open();
        if (dims == null || dims.length == 0) throw arg(ERR_ARG, "setCart: no dimensions");
        if (periods != null && periods.length != dims.length)
            throw arg(ERR_ARG, "setCart: " + dims.length + " dimensions, " + periods.length + " periods");
        long prod = 1;
        for (int d : dims) {
            if (d <= 0) throw arg(ERR_ARG, "setCart: dimension of " + d + " ranks");
            prod *= d;
            if (prod > size) break;
        }
        if (prod != size)
            throw arg(ERR_ARG, "setCart: the dimensions " + java.util.Arrays.toString(dims) + " do not make "
                    + size + " ranks");
        int[] per = new int[dims.length];
        for (int i = 0; periods != null && i < per.length; i++) per[i] = periods[i] ? 1 : 0;
        check(Native.setCart(h, dims.clone(), per), "nbcx_comm_set_cart");
    }

    /**
     * Attaches a distributed graph (nbcx_comm_set_neighbors, as
     * MPI_Dist_graph_create_adjacent): block {@code i} of a receive buffer
     * comes from {@code sources[i]}, block {@code j} of a send buffer goes
     * to {@code destinations[j]}; {@link #PROC_NULL} allowed. The lists of
     * all ranks must agree.
     */
    public void setNeighbors(int[] sources, int[] destinations) {
        long h = open();
        if (sources == null || destinations == null) throw arg(ERR_ARG, "setNeighbors: null list");
        checkPeers(sources, "sources");
        checkPeers(destinations, "destinations");
        check(Native.setNeighbors(h, sources.clone(), destinations.clone()), "nbcx_comm_set_neighbors");
    }

    private void checkPeers(int[] peers, String name) {
        for (int i = 0; i < peers.length; i++)
            if (peers[i] != PROC_NULL && (peers[i] < 0 || peers[i] >= size))
                throw arg(ERR_RANK, "setNeighbors: " + name + "[" + i + "] = " + peers[i] + " outside [0, "
                        + size + ") and not PROC_NULL");
    }

    /** The topology's lists: [0] the sources, [1] the destinations (both empty without one). */
    public int[][] neighbors() {
        int[][] out = new int[2][];
        check(Native.neighbors(open(), out), "nbcx_comm_neighbors");
        return out;
    }

    private Request neighborAllgather(boolean pers, Buf send, Buf recv) {
        open();
        real(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int in = neighbors()[0].length;
        int rcount = convert(send.count, send.type, recv.type);
        atLeast(recv, (long) rcount * in, "receive buffer");
        whole(recv, rcount, "neighbor_allgather (receive)");
        return post(pers, "neighbor_allgather", Native.K_NEIGHBOR_ALLGATHER, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = send.type.code;
            a.rbuf = r.stage(recv, (long) rcount * in, true, true);
            a.rcount = rcount;
            a.rtype = recv.type.code;
        });
    }

    private Request neighborAllgatherv(boolean pers, Buf send, Buf recv, int[] counts, int[] displs) {
        open();
        real(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int in = neighbors()[0].length;
        int extent = vector(in, counts, displs, recv, "neighbor_allgatherv");
        int[] c = sig(counts, recv), d = sig(displs, recv);
        return post(pers, "neighbor_allgatherv", Native.K_NEIGHBOR_ALLGATHERV, null, (r, a) -> {
            a.sbuf = r.stage(send, send.count, true, false);
            a.scount = send.count;
            a.stype = send.type.code;
            a.rbuf = r.stage(recv, extent, true, true);
            a.rcounts = c;
            a.rdispls = d;
            a.rtype = recv.type.code;
        });
    }

    private Request neighborAlltoall(boolean pers, Buf send, Buf recv) {
        open();
        real(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int[][] nb = neighbors();
        int in = nb[0].length, out = nb[1].length;
        final int scount, rcount;
        if (out > 0) {
            scount = perRank(send, out, "send buffer (blocks per destination)");
            rcount = convert(scount, send.type, recv.type);
        } else if (in > 0) {
            rcount = perRank(recv, in, "receive buffer (blocks per source)");
            scount = convert(rcount, recv.type, send.type);
        } else {
            scount = rcount = 0;
        }
        atLeast(recv, (long) rcount * in, "receive buffer");
        whole(send, scount, "neighbor_alltoall (send)");
        whole(recv, rcount, "neighbor_alltoall (receive)");
        return post(pers, "neighbor_alltoall", Native.K_NEIGHBOR_ALLTOALL, null, (r, a) -> {
            a.sbuf = r.stage(send, (long) scount * out, true, false);
            a.scount = scount;
            a.stype = send.type.code;
            a.rbuf = r.stage(recv, (long) rcount * in, true, true);
            a.rcount = rcount;
            a.rtype = recv.type.code;
        });
    }

    private Request neighborAlltoallv(boolean pers, Buf send, int[] scounts, int[] sdispls, Buf recv,
            int[] rcounts, int[] rdispls) {
        open();
        real(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int[][] nb = neighbors();
        int sext = vector(nb[1].length, scounts, sdispls, send, "neighbor_alltoallv (send)");
        int rext = vector(nb[0].length, rcounts, rdispls, recv, "neighbor_alltoallv (receive)");
        int[] sc = sig(scounts, send), sd = sig(sdispls, send), rc = sig(rcounts, recv), rd = sig(rdispls, recv);
        return post(pers, "neighbor_alltoallv", Native.K_NEIGHBOR_ALLTOALLV, null, (r, a) -> {
            a.sbuf = r.stage(send, sext, true, false);
            a.scounts = sc;
            a.sdispls = sd;
            a.stype = send.type.code;
            a.rbuf = r.stage(recv, rext, true, true);
            a.rcounts = rc;
            a.rdispls = rd;
            a.rtype = recv.type.code;
        });
    }

    private Request neighborAlltoallw(boolean pers, Buf send, int[] scounts, int[] sdispls, Datatype[] stypes,
            Buf recv, int[] rcounts, int[] rdispls, Datatype[] rtypes) {
        open();
        real(send, "send buffer");
        real(recv, "receive buffer");
        writable(recv, "receive buffer");
        int[][] nb = neighbors();
        int in = nb[0].length, out = nb[1].length;
        int[] stc = new int[out], rtc = new int[in];
        int sext = wvector(out, scounts, sdispls, stypes, send, stc, "neighbor_alltoallw (send)");
        int rext = wvector(in, rcounts, rdispls, rtypes, recv, rtc, "neighbor_alltoallw (receive)");
        int[] sc = scounts.clone(), sd = sdispls.clone(), rc = rcounts.clone(), rd = rdispls.clone();
        return post(pers, "neighbor_alltoallw", Native.K_NEIGHBOR_ALLTOALLW, null, (r, a) -> {
            a.sbuf = r.stage(send, sext, true, false);
            a.scounts = sc;
            a.sdispls = sd;
            a.stypes = stc;
            a.rbuf = r.stage(recv, rext, true, true);
            a.rcounts = rc;
            a.rdispls = rd;
            a.rtypes = rtc;
        });
    }

    /**
     * MPI_Ineighbor_allgather: {@code send} to every destination; block
     * {@code i} of {@code recv} (as many bytes as {@code send}) from
     * source {@code i}. Needs a topology ({@link #setCart},
     * {@link #setNeighbors}, or the MPI communicator's own).
     */
    public Request ineighborAllgather(Buf send, Buf recv) { return neighborAllgather(false, send, recv); }

    /** The v-form: a count and a displacement (elements of recv) per source. */
    public Request ineighborAllgatherv(Buf send, Buf recv, int[] recvCounts, int[] displs) {
        return neighborAllgatherv(false, send, recv, recvCounts, displs);
    }

    /**
     * MPI_Ineighbor_alltoall: block {@code j} of {@code send} (it divides
     * into a block per destination) to destination {@code j}; block
     * {@code i} of {@code recv} from source {@code i}.
     */
    public Request ineighborAlltoall(Buf send, Buf recv) { return neighborAlltoall(false, send, recv); }

    /** Counts and displacements (elements) per destination (send side) and per source (receive side). */
    public Request ineighborAlltoallv(Buf send, int[] sendCounts, int[] sendDispls, Buf recv, int[] recvCounts,
            int[] recvDispls) {
        return neighborAlltoallv(false, send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
    }

    /** As {@link #ialltoallw}, with an entry per destination (send side) and per source (receive side). */
    public Request ineighborAlltoallw(Buf send, int[] sendCounts, int[] sendDispls, Datatype[] sendTypes, Buf recv,
            int[] recvCounts, int[] recvDispls, Datatype[] recvTypes) {
        return neighborAlltoallw(false, send, sendCounts, sendDispls, sendTypes, recv, recvCounts, recvDispls,
                recvTypes);
    }

    public PersistentRequest neighborAllgatherInit(Buf send, Buf recv) {
        return p(neighborAllgather(true, send, recv));
    }

    public PersistentRequest neighborAllgathervInit(Buf send, Buf recv, int[] recvCounts, int[] displs) {
        return p(neighborAllgatherv(true, send, recv, recvCounts, displs));
    }

    public PersistentRequest neighborAlltoallInit(Buf send, Buf recv) {
        return p(neighborAlltoall(true, send, recv));
    }

    public PersistentRequest neighborAlltoallvInit(Buf send, int[] sendCounts, int[] sendDispls, Buf recv,
            int[] recvCounts, int[] recvDispls) {
        return p(neighborAlltoallv(true, send, sendCounts, sendDispls, recv, recvCounts, recvDispls));
    }

    public PersistentRequest neighborAlltoallwInit(Buf send, int[] sendCounts, int[] sendDispls,
            Datatype[] sendTypes, Buf recv, int[] recvCounts, int[] recvDispls, Datatype[] recvTypes) {
        return p(neighborAlltoallw(true, send, sendCounts, sendDispls, sendTypes, recv, recvCounts, recvDispls,
                recvTypes));
    }

    // ------------------------------------------------------------------
    // Blocking conveniences: start + await
    // ------------------------------------------------------------------

    public void barrier() { ibarrier().await(); }

    public void bcast(Buf buf, int root) { ibcast(buf, root).await(); }

    public void allreduce(Buf send, Buf recv, Op op) { iallreduce(send, recv, op).await(); }

    @Override
    public String toString() {
        return "Communicator[rank " + rank + " of " + size + (handle == 0 ? ", closed" : "") + "]";
    }
}
