package io.nbcx;

import static io.nbcx.NbcxException.*;

import java.util.HashSet;
import java.util.Set;

/**
 * A collective of one's own: this rank's part of it as a graph of send,
 * receive, reduce and copy nodes with "before &rarr; after" edges (nbcx's
 * schedule builder, {@code nbcx_sched_*} of nbcx.h). A node starts the
 * moment all its predecessors are done; nodes with none (receives,
 * typically) start with the schedule; the {@link Request} that
 * {@link #start()} returns completes when every node is done. Made by
 * {@link Communicator#schedule()}.
 *
 * <pre>
 * try (Schedule s = comm.schedule()) {           // a chain broadcast from rank 0
 *     int recv = me &gt; 0 ? s.recv(buf, me - 1, 0) : -1;
 *     if (me &lt; p - 1) {
 *         int send = s.send(buf, me + 1, 0);
 *         if (recv &gt;= 0) s.depend(recv, send);
 *     }
 *     s.start().await();
 * }
 * </pre>
 *
 * <p>Tags are in [0, {@link #TAG_MAX}], private to the operation; messages
 * between two ranks with the same tag match in the order their nodes
 * start. Like collectives, schedules take the communicator's next sequence
 * number when they start: every rank starts its schedules in the same
 * order as the others. Buffers: a direct buffer is used in place; an array
 * is copied whole into native memory at {@link #start()} and back when the
 * operation completes, once however many nodes name windows of it (so a
 * receive into a window and a send from it see the same bytes).
 * {@link #scratch} gives temporary memory. {@link #call} adds a callback
 * node: a Java function run inside nbcx's executor (short, non-blocking;
 * it sees direct buffers, not staged arrays). A schedule is built by one
 * thread at a time.
 */
public final class Schedule implements AutoCloseable {
    /** The largest tag (NBCX_SCHED_TAG_MAX). */
    public static final int TAG_MAX = 4095;

    private final Communicator comm;
    private final Request req;
    private long sched; // 0 once started or closed
    private final Set<Integer> nodes = new HashSet<>();
    private final int[] node = new int[1];

    Schedule(Communicator comm, long sched, Request req) {
        this.comm = comm;
        this.sched = sched;
        this.req = req;
    }

    private long open() {
        if (sched == 0) throw arg(ERR_ARG, "schedule already started or closed");
        if (comm.isClosed()) throw arg(ERR_COMM, "communicator is closed");
        return sched;
    }

    private int added(int rc, String what) {
        check(rc, what);
        nodes.add(node[0]);
        return node[0];
    }

    private static Buf real(Buf b, String name) {
        if (b == null) throw arg(ERR_BUFFER, name + " is null");
        if (b == Buf.IN_PLACE) throw arg(ERR_IN_PLACE, name + " cannot be Buf.IN_PLACE in a schedule");
        if (b.layout != null)
            throw arg(ERR_TYPE, name + ": a layout buffer is not supported in a schedule (its nodes name "
                    + "windows of one staged array; use a node per block)");
        return b;
    }

    private void peerTag(int peer, int tag) {
        if (peer < 0 || peer >= comm.size())
            throw arg(ERR_RANK, "peer " + peer + " outside [0, " + comm.size() + ")");
        if (tag < 0 || tag > TAG_MAX) throw arg(ERR_TAG, "tag " + tag + " outside [0, " + TAG_MAX + "]");
    }

    private static void writable(Buf b, String name) {
        if (b.direct != null && b.direct.isReadOnly()) throw arg(ERR_BUFFER, name + " is a read-only ByteBuffer");
    }

    /** A node that sends {@code buf} to {@code peer}; returns the node. */
    public int send(Buf buf, int peer, int tag) {
        long s = open();
        real(buf, "send buffer");
        peerTag(peer, tag);
        return added(Native.schedSendRecv(s, true, req.stageWhole(buf), buf.count, buf.type.code, peer, tag, node),
                "nbcx_sched_send");
    }

    /** A node that receives into {@code buf} from {@code peer} (at most buf.count() elements). */
    public int recv(Buf buf, int peer, int tag) {
        long s = open();
        real(buf, "receive buffer");
        writable(buf, "receive buffer");
        peerTag(peer, tag);
        return added(Native.schedSendRecv(s, false, req.stageWhole(buf), buf.count, buf.type.code, peer, tag, node),
                "nbcx_sched_recv");
    }

    /** A node that computes {@code inout[i] = in[i] op inout[i]} (same type and count). */
    public int reduce(Buf in, Buf inout, Op op) {
        long s = open();
        real(in, "input buffer");
        real(inout, "input/output buffer");
        writable(inout, "input/output buffer");
        if (op == null) throw arg(ERR_OP, "null operation");
        if (in.type != inout.type) throw arg(ERR_TYPE, "datatypes differ: " + in.type + " and " + inout.type);
        if (in.count != inout.count)
            throw arg(ERR_COUNT, "counts differ: " + in.count + " and " + inout.count);
        long pi = req.stageWhole(in), po = req.stageWhole(inout);
        long oh = op.acquire();
        req.addOp(op);
        return added(Native.schedReduce(s, pi, po, in.count, in.type.code, oh, node), "nbcx_sched_reduce");
    }

    /** A node that copies {@code src} into {@code dst} (the same number of bytes). */
    public int copy(Buf src, Buf dst) {
        long s = open();
        real(src, "source buffer");
        real(dst, "destination buffer");
        writable(dst, "destination buffer");
        if ((long) src.count * src.type.size != (long) dst.count * dst.type.size)
            throw arg(ERR_TYPE, "copy of " + src.count + " " + src.type + " into " + dst.count + " " + dst.type
                    + ": the sizes differ");
        long ps = req.stageWhole(src), pd = req.stageWhole(dst);
        return added(Native.schedCopy(s, ps, src.count, src.type.code, pd, dst.count, dst.type.code, node),
                "nbcx_sched_copy");
    }

    /**
     * A callback node (nbcx_sched_call): {@code fn} runs once, when the
     * node's predecessors are done, on the thread that runs the schedule
     * at that moment: nbcx's progress thread (thread, split, auto modes)
     * or a thread in test/await/progress of this or another operation.
     * Rules, as for nbcx's callbacks: be short and never block (no
     * await, join or lock held elsewhere: it would stop nbcx's progress
     * thread); it may start other operations. What it sees: direct
     * buffers (and {@link #scratch}) as the nodes before it left them;
     * arrays are staged and copied back only when the operation completes,
     * so a callback reads and writes direct buffers, not arrays. An
     * exception thrown by {@code fn} ends the operation: its successors
     * never run, and the request fails with {@code ERR_OP} carrying the
     * exception (peers waiting for this rank's later sends are not told:
     * as with any rank that stops in the middle of a collective).
     */
    public int call(Runnable fn) {
        long s = open();
        if (fn == null) throw arg(ERR_ARG, "null callback");
        long id = NEXT_CALL.getAndIncrement();
        CALLS.put(id, new Call(req, fn));
        req.addCall(id);
        return added(Native.schedCall(s, id, node), "nbcx_sched_call");
    }

    private record Call(Request req, Runnable fn) {}

    /** Callback nodes by the id nbcx hands back (removed when their request releases its resources). */
    static final java.util.concurrent.ConcurrentHashMap<Long, Call> CALLS =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final java.util.concurrent.atomic.AtomicLong NEXT_CALL =
            new java.util.concurrent.atomic.AtomicLong(1);

    /** A callback node runs (Native.runCall): its function, or ERR_OP if it throws. */
    static int runCall(long id) {
        Call c = CALLS.get(id);
        if (c == null) return SUCCESS;
        try {
            c.fn.run();
            return SUCCESS;
        } catch (Throwable t) {
            Request.More m = c.req.more; // (made by addCall, before the start)
            if (m != null && m.callFailure == null) m.callFailure = t;
            return ERR_OP;
        }
    }

    /** The edge {@code before -> after}: after starts only once before is done. */
    public void depend(int before, int after) {
        long s = open();
        if (!nodes.contains(before) || !nodes.contains(after))
            throw arg(ERR_NODE, "depend(" + before + ", " + after + "): not nodes of this schedule");
        check(Native.schedDepend(s, before, after), "nbcx_sched_depend");
    }

    /** Temporary memory for nodes: a direct buffer held until the operation completes. */
    public Buf scratch(Datatype type, int count) {
        open();
        Buf b = Buf.allocateDirect(type, count);
        req.keep(b.direct);
        return b;
    }

    /** The number of nodes so far. */
    public int size() {
        return nodes.size();
    }

    /**
     * Starts the operation (arrays copied in now); the schedule is then
     * the request's. A cycle is rejected ({@code ERR_NODE}) before anything
     * is posted; the schedule is freed on any error.
     */
    public Request start() {
        long s = open();
        sched = 0;
        try {
            req.copyIn();
            check(Native.schedStart(s, req), "nbcx_sched_start");
        } catch (RuntimeException | Error e) {
            req.releaseResources();
            throw e;
        }
        req.active = true;
        return req;
    }

    /** Discards a schedule never started (idempotent; nothing to do after start). */
    @Override
    public void close() {
        long s = sched;
        if (s == 0) return;
        sched = 0;
        int rc = Native.schedFree(s);
        req.releaseResources();
        check(rc, "nbcx_sched_free");
    }
}
