package io.nbcx;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Entry points of nbcx for Java.
 *
 * <pre>{@code
 * Nbcx.threads(4, comm -> {                 // 4 ranks, threads of this JVM
 *     double[] x = {comm.rank()}, sum = new double[1];
 *     Request r = comm.iallreduce(Buf.of(x), Buf.of(sum), Op.SUM);
 *     // ... compute ...
 *     r.await();                             // sum[0] == 0+1+2+3
 * });
 * }</pre>
 */
public final class Nbcx {
    private Nbcx() {}

    /** The value a rank body returns to nbcx when it threw. */
    static final int BODY_THREW = 1000;

    /**
     * Runs {@code body} on {@code n} ranks that are new threads of this JVM
     * (nbcx's in-process transport: no MPI, no mpiexec), each with its own
     * {@link Communicator} of rank i and size n, and returns when every body
     * has returned. The body must complete its operations before it returns;
     * its communicator is closed then.
     *
     * <p>If a body throws, the other ranks' pending and later operations
     * fail (NbcxException, ERR_TRANSPORT) instead of waiting for it, and this
     * method rethrows the exception of the lowest rank that threw, the
     * ERR_TRANSPORT failures that follow from it last (all others suppressed); a checked exception comes wrapped in an NbcxException.
     * Several calls may run at once from different threads: their ranks
     * never meet.
     */
    public static void threads(int n, RankBody body) {
        if (n < 1) throw NbcxException.arg(NbcxException.ERR_ARG, "need at least 1 rank, got " + n);
        if (body == null) throw NbcxException.arg(NbcxException.ERR_ARG, "null body");
        Native.init();
        Runner runner = new Runner(n, body);
        int rc = Native.inprocRun(n, runner);
        // The cause first: a rank whose exception is not the ERR_TRANSPORT
        // that another rank's exit gives the others.
        Throwable first = null;
        for (int i = 0; i < n && first == null; i++) {
            Throwable t = runner.thrown.get(i);
            if (t != null && !(t instanceof NbcxException
                    && ((NbcxException) t).code() == NbcxException.ERR_TRANSPORT)) first = t;
        }
        for (int i = 0; i < n; i++) {
            Throwable t = runner.thrown.get(i);
            if (t == null) continue;
            if (first == null) first = t;
            else if (t != first) first.addSuppressed(t);
        }
        if (first instanceof RuntimeException) throw (RuntimeException) first;
        if (first instanceof Error) throw (Error) first;
        if (first != null)
            throw new NbcxException(NbcxException.ERR_ARG, "a rank's body threw " + first, first);
        if (rc != NbcxException.SUCCESS) throw NbcxException.fromNative(rc, "nbcx_inproc_run");
    }

    static final class Runner {
        final RankBody body;
        final AtomicReferenceArray<Throwable> thrown;

        Runner(int n, RankBody body) {
            this.body = body;
            this.thrown = new AtomicReferenceArray<>(n);
        }

        int run(long comm) {
            Communicator c = null;
            int rank = Native.commRank(comm);
            try {
                c = new Communicator(comm, true);
                body.run(c);
                return NbcxException.SUCCESS;
            } catch (Throwable t) {
                if (rank >= 0 && rank < thrown.length()) thrown.set(rank, t);
                return BODY_THREW;
            } finally {
                if (c != null) c.detach();
            }
        }
    }

    /**
     * This JVM as one rank of an MPI job (started under mpiexec): initialises
     * MPI with MPI_THREAD_MULTIPLE if nobody has, and returns a communicator
     * over MPI_COMM_WORLD. Needs the JNI library of a build with MPI
     * (e.g. build/openmpi). Close the communicator, then call
     * {@link #finalizeMpi()} (or let the JVM exit: MPI is finalised then).
     */
    public static Communicator fromMpi() {
        Native.init();
        if (!Native.hasMpi())
            throw NbcxException.arg(NbcxException.ERR_TRANSPORT,
                    "this JNI library was built without MPI (use the one of an MPI build, e.g. build/openmpi)");
        long[] out = new long[1];
        NbcxException.check(Native.fromMpi(out), "nbcx_comm_from_mpi");
        return new Communicator(out[0], false);
    }

    /** Whether {@link #fromMpi()} is available (the JNI library has MPI). */
    public static boolean hasMpi() {
        Native.init();
        return Native.hasMpi();
    }

    /** MPI_Finalize, if {@link #fromMpi()} initialised MPI; every communicator must be closed. */
    public static void finalizeMpi() {
        Native.init();
        Native.mpiFinalize();
    }

    /**
     * MPI_Abort on MPI_COMM_WORLD: ends every rank of the MPI job with
     * {@code code} (where one rank failed and the others would wait for it
     * forever); does not return. Without MPI (or before {@link #fromMpi()}
     * initialised it) it halts this JVM.
     */
    public static void abortMpi(int code) {
        Native.init();
        Native.mpiAbort(code);
        Runtime.getRuntime().halt(code);
    }

    /** Changes the progress mode (only while no operation is outstanding). */
    public static void progress(Progress mode) {
        if (mode == null) throw NbcxException.arg(NbcxException.ERR_ARG, "null progress mode");
        Native.init();
        NbcxException.check(Native.progressSet(mode.code), "nbcx_progress_set");
    }

    /** The current progress mode. */
    public static Progress progress() {
        Native.init();
        int m = Native.progressGet();
        for (Progress p : Progress.values()) if (p.code == m) return p;
        throw NbcxException.arg(NbcxException.ERR_INTERN, "unknown progress mode " + m);
    }

    /** Forces an algorithm for a collective (null or "auto": automatic), as nbcx_algorithm_set. */
    public static void algorithm(String collective, String algorithm) {
        if (collective == null) throw NbcxException.arg(NbcxException.ERR_ARG, "null collective name");
        Native.init();
        NbcxException.check(Native.algorithmSet(collective, algorithm), "nbcx_algorithm_set");
    }

    /** nbcx_info(): the build and the algorithm selection in effect. */
    /**
     * How Java array windows are copied to and from nbcx's native memory
     * (docs/java.md): {@code "auto"} (the default: JNI's
     * Get/Set&lt;Type&gt;ArrayRegion for small windows, pinning with
     * GetPrimitiveArrayCritical and memcpy for large ones), {@code "region"}
     * or {@code "critical"} for every size. For measurements
     * (java/bench/BufBench.java); every path gives the same bytes. Returns
     * the previous choice.
     */
    public static String arrayCopy(String mode) {
        String[] names = {"auto", "critical", "region"};
        int m = java.util.Arrays.asList(names).indexOf(mode);
        if (m < 0) throw NbcxException.arg(NbcxException.ERR_ARG, "arrayCopy: \"" + mode + "\" is not auto, critical or region");
        int old = Request.arrayCopy;
        Request.arrayCopy = m;
        return names[old];
    }

    public static String info() {
        Native.init();
        return Native.info();
    }
}
