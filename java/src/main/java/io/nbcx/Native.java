package io.nbcx;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The JNI functions (src/main/c/nbcxjni.c) and the two entry points native
 * threads call back. Arguments are checked by the callers, in Java, before
 * they get here.
 */
final class Native {
    private Native() {}

    static {
        String path = System.getProperty("nbcx.jni");
        if (path == null || path.isEmpty()) path = System.getenv("NBCX_JNI");
        if (path != null && !path.isEmpty()) {
            File f = new File(path);
            if (!f.isFile())
                throw new UnsatisfiedLinkError("nbcx: no JNI library at " + f.getAbsolutePath()
                        + " (build it with cmake -DNBCX_JAVA=ON, see docs/java.md)");
            System.load(f.getAbsolutePath());
        } else {
            System.loadLibrary("nbcxjni"); // java.library.path
        }
    }

    /** Forces the library to load (and fail early, with its message). */
    static void init() {}

    // Collective kinds, as in nbcxjni.c.
    static final int K_BARRIER = 0, K_BCAST = 1, K_REDUCE = 2, K_ALLREDUCE = 3, K_GATHER = 4,
            K_GATHERV = 5, K_SCATTER = 6, K_SCATTERV = 7, K_ALLGATHER = 8, K_ALLGATHERV = 9,
            K_ALLTOALL = 10, K_ALLTOALLV = 11, K_SCAN = 12, K_EXSCAN = 13,
            K_REDUCE_SCATTER_BLOCK = 14, K_REDUCE_SCATTER = 15,
            K_NEIGHBOR_ALLGATHER = 16, K_NEIGHBOR_ALLGATHERV = 17, K_NEIGHBOR_ALLTOALL = 18,
            K_NEIGHBOR_ALLTOALLV = 19,
            K_ALLTOALLW = 100, // (Java only: its own entry point, alltoallw)
            K_NEIGHBOR_ALLTOALLW = 101; // (Java only: neighborAlltoallw)

    /** The address that stands for NBCX_IN_PLACE. */
    static final long IN_PLACE = -1L;

    static native String errorString(int code);
    static native String errorDetail(int code);
    static native String info();
    static native int progressSet(int mode);
    static native int progressGet();
    static native int algorithmSet(String coll, String alg);

    /** A pthread barrier of n threads (ThreadBarrier); 0 when it cannot be made. */
    static native long barrierCreate(int n);
    static native void barrierWait(long h);
    static native void barrierFree(long h);

    static native long malloc(long bytes);
    static native void free(long ptr);
    static native void copyIn(Object array, long byteOff, long bytes, long dst);
    static native void copyOut(long src, Object array, long byteOff, long bytes);
    static native long address(ByteBuffer direct);
    /**
     * A layout's n elements from byte origin of array (or direct) packed
     * into ptr (in), or unpacked from it: element e's block i at
     * origin + e * extent + disp[i], len[i] bytes.
     */
    static native void layoutCopy(Object array, ByteBuffer direct, long origin, int n, long extent, long[] disp,
            long[] len, long ptr, boolean in);
    /** Get/Set&lt;Type&gt;ArrayRegion: n elements from element off; in: array to ptr. */
    static native void copyRegion(Object array, int type, int off, int n, long ptr, boolean in);

    static native int inprocRun(int n, Object runner);
    static native int commRank(long comm);
    static native int commSize(long comm);
    static native String commTransport(long comm);
    static native int commFree(long comm);
    /** nbcx_comm_dup (dup) or nbcx_comm_split; the new communicator in out[0] (0: none). */
    static native int commSplit(long comm, boolean dup, int color, int key, long[] out);

    static native int opCreate(Object op, boolean commutative, long[] out);
    static native int opFree(long op, long ref);

    static native int coll(int kind, boolean persistent, long comm,
            long sbuf, int scount, int[] scounts, int[] sdispls, int stype,
            long rbuf, int rcount, int[] rcounts, int[] rdispls, int rtype,
            long op, int root, Request out);

    /** Counts, byte displacements and datatype codes per rank (nbcx_ialltoallw / _init). */
    static native int alltoallw(boolean persistent, long comm, long sbuf, int[] scounts, int[] sdispls,
            int[] stypes, long rbuf, int[] rcounts, int[] rdispls, int[] rtypes, Request out);

    /** Per destination (send) and per source (receive): nbcx_ineighbor_alltoallw / _init. */
    static native int neighborAlltoallw(boolean persistent, long comm, long sbuf, int[] scounts, int[] sdispls,
            int[] stypes, long rbuf, int[] rcounts, int[] rdispls, int[] rtypes, Request out);

    static native int setCart(long comm, int[] dims, int[] periods);
    static native int setNeighbors(long comm, int[] sources, int[] destinations);
    /** out[0] = sources, out[1] = destinations. */
    static native int neighbors(long comm, int[][] out);

    static native int schedCreate(long comm, long[] out);
    static native int schedSendRecv(long sched, boolean send, long buf, int count, int type, int peer, int tag,
            int[] node);
    static native int schedReduce(long sched, long in, long inout, int count, int type, long op, int[] node);
    static native int schedCopy(long sched, long src, int scount, int stype, long dst, int dcount, int dtype,
            int[] node);
    /** nbcx_sched_call: the node calls {@link #runCall}(id). */
    static native int schedCall(long sched, long id, int[] node);
    static native int schedDepend(long sched, int before, int after);
    /** Starts: the schedule belongs to the request (out[0]), or is freed on error. */
    static native int schedStart(long sched, Request out);
    static native int schedFree(long sched);

    static native int test(Request h);
    static native int await(Request h);
    static native int start(Request h);
    static native int requestFree(Request h);
    /** nbcx_request_on_complete: {@link #completed} gets id when the operation completes. */
    static native int onComplete(Request h, long id);
    static native int progress();

    static native boolean hasMpi();
    static native int fromMpi(long[] out);
    static native int mpiFinalize();
    /** MPI_Abort(MPI_COMM_WORLD, code) if MPI is initialised (and not finalised); else returns. */
    static native void mpiAbort(int code);

    /** Called on each rank thread of nbcx_inproc_run. Never throws. */
    static int runRank(Object runner, long comm) {
        return ((Nbcx.Runner) runner).run(comm);
    }

    /** Called by nbcx on the thread that completes a request with a callback. Never throws. */
    static void completed(long id, int rc) {
        try {
            Request.callback(id);
        } catch (Throwable t) {
            // a dependent stage of a future threw: CompletableFuture keeps it
        }
    }

    /** Called by nbcx (the thread running the schedule) for a callback node. Never throws. */
    static int runCall(long id) {
        try {
            return Schedule.runCall(id);
        } catch (Throwable t) {
            return NbcxException.ERR_INTERN;
        }
    }

    /** Called by nbcx (any thread) for a user operation. Never throws. */
    static void applyOp(Object op, ByteBuffer in, ByteBuffer inout, int count, int type) {
        ((Op) op).apply(in.order(ByteOrder.nativeOrder()), inout.order(ByteOrder.nativeOrder()),
                count, Datatype.ofCode(type));
    }
}
