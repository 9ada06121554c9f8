package io.nbcx;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleBinaryOperator;
import java.util.function.IntBinaryOperator;
import java.util.function.LongBinaryOperator;

/**
 * A reduction operation: the built-in ones ({@link #SUM}, {@link #MIN}, ...)
 * or a user function ({@link #create}, {@link #ofInt}, {@link #ofLong},
 * {@link #ofDouble}). A user operation is {@link AutoCloseable}: closing it
 * while operations use it frees it once the last completes.
 */
public final class Op implements AutoCloseable {
    public static final Op SUM = new Op(1, "SUM"), PROD = new Op(2, "PROD"),
            MIN = new Op(3, "MIN"), MAX = new Op(4, "MAX"),
            LAND = new Op(5, "LAND"), LOR = new Op(6, "LOR"), LXOR = new Op(7, "LXOR"),
            BAND = new Op(8, "BAND"), BOR = new Op(9, "BOR"), BXOR = new Op(10, "BXOR");

    private final String name;
    private final UserFunction fn; // null for built-ins
    private long handle;
    private long ref;              // JNI global ref of this Op (user ops)
    private int users;             // requests that hold it
    private boolean closed;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** User operations created and not yet freed (the leak test reads it). */
    static final java.util.concurrent.atomic.AtomicLong LIVE_USER_OPS = new java.util.concurrent.atomic.AtomicLong();

    private Op(long handle, String name) {
        this.handle = handle;
        this.name = name;
        this.fn = null;
    }

    private Op(UserFunction fn, String name) {
        this.fn = fn;
        this.name = name;
    }

    /**
     * A user operation. {@code fn} must be associative; {@code commutative}
     * false keeps the rank order ({@code in} is always the lower ranks').
     */
    public static Op create(UserFunction fn, boolean commutative) {
        if (fn == null) throw NbcxException.arg(NbcxException.ERR_OP, "null user function");
        Native.init();
        Op op = new Op(fn, "user");
        long[] out = new long[2];
        NbcxException.check(Native.opCreate(op, commutative, out), "nbcx_op_create");
        op.handle = out[0];
        op.ref = out[1];
        LIVE_USER_OPS.incrementAndGet();
        return op;
    }

    /** A commutative user operation on {@link Datatype#INT}. */
    public static Op ofInt(IntBinaryOperator f) {
        return create((in, inout, n, t) -> {
            requireType(t, Datatype.INT);
            for (int i = 0; i < n; i++) inout.putInt(4 * i, f.applyAsInt(in.getInt(4 * i), inout.getInt(4 * i)));
        }, true);
    }

    /** A commutative user operation on {@link Datatype#LONG}. */
    public static Op ofLong(LongBinaryOperator f) {
        return create((in, inout, n, t) -> {
            requireType(t, Datatype.LONG);
            for (int i = 0; i < n; i++) inout.putLong(8 * i, f.applyAsLong(in.getLong(8 * i), inout.getLong(8 * i)));
        }, true);
    }

    /** A commutative user operation on {@link Datatype#DOUBLE}. */
    public static Op ofDouble(DoubleBinaryOperator f) {
        return create((in, inout, n, t) -> {
            requireType(t, Datatype.DOUBLE);
            for (int i = 0; i < n; i++)
                inout.putDouble(8 * i, f.applyAsDouble(in.getDouble(8 * i), inout.getDouble(8 * i)));
        }, true);
    }

    private static void requireType(Datatype got, Datatype want) {
        if (got != want) throw new IllegalArgumentException("operation on " + want + " applied to " + got);
    }

    public boolean isBuiltin() {
        return fn == null;
    }

    /** Called from native code: never lets an exception reach it. */
    void apply(ByteBuffer in, ByteBuffer inout, int count, Datatype type) {
        try {
            fn.apply(in, inout, count, type);
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    /** The first exception the user function threw since the last call, or null. */
    Throwable takeFailure() {
        return fn == null ? null : failure.getAndSet(null);
    }

    /** The handle for one more request; throws if closed. */
    synchronized long acquire() {
        if (closed) throw NbcxException.arg(NbcxException.ERR_OP, "operation " + name + " is closed");
        if (fn != null) users++;
        return handle;
    }

    synchronized void release() {
        if (fn == null) return;
        users--;
        if (closed && users == 0) free();
    }

    private void free() {
        if (handle != 0) {
            Native.opFree(handle, ref);
            LIVE_USER_OPS.decrementAndGet();
            handle = 0;
            ref = 0;
        }
    }

    /** Frees a user operation (once no operation uses it); no-op on built-ins. */
    @Override
    public synchronized void close() {
        if (fn == null || closed) return;
        closed = true;
        if (users == 0) free();
    }

    @Override
    public String toString() {
        return "Op." + name;
    }
}
