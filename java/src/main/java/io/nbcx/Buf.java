package io.nbcx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A buffer of a collective: a window ({@code offset}, {@code count}, in
 * elements) of a Java primitive array, or of a direct {@link ByteBuffer}
 * holding elements of a {@link Datatype} in native byte order.
 *
 * <p>How they are held while an operation is in flight: a direct buffer is
 * passed to nbcx by address (zero copy; the Request keeps it reachable until
 * completion). An array cannot be, as the garbage collector may move it:
 * its window is copied into native memory when the operation starts (inputs)
 * and back into the array when it completes (outputs), see docs/java.md.
 */
public final class Buf {
    /** NBCX_IN_PLACE, where MPI allows MPI_IN_PLACE. */
    public static final Buf IN_PLACE = new Buf();

    final Object array;      // a primitive array, or null
    final ByteBuffer direct; // a direct buffer, or null
    final Datatype type;
    final int offset;        // elements
    final int count;         // elements (of a layout buffer: of its type signature, type)
    // A layout buffer: lcount elements of layout from byte origin of the
    // array or direct buffer, each per values of type (its signature).
    final Layout layout;
    final int lcount, per;
    final long origin;
    // A direct buffer's address (GetDirectBufferAddress), looked up at its
    // first operation and kept: the buffer's memory never moves (0: not yet).
    private volatile long address; // (volatile: a long may not be written atomically otherwise)
    /** GetDirectBufferAddress calls made for Bufs (tests: one per buffer, not one per operation). */
    static final java.util.concurrent.atomic.AtomicLong ADDRESS_LOOKUPS = new java.util.concurrent.atomic.AtomicLong();

    private Buf() {
        this(null, null, (Datatype) null, 0, 0);
    }

    private Buf(Object array, ByteBuffer direct, Datatype type, int offset, int count) {
        this.array = array;
        this.direct = direct;
        this.type = type;
        this.offset = offset;
        this.count = count;
        this.layout = null;
        this.lcount = 0;
        this.per = 1;
        this.origin = 0;
    }

    private Buf(Object array, ByteBuffer direct, Layout l, long origin, int lcount) {
        this.array = array;
        this.direct = direct;
        this.layout = l;
        this.type = l.type != null ? l.type : Datatype.BYTE;
        this.per = l.type != null ? l.values() : (int) l.size;
        long sig = (long) lcount * per;
        if (sig > Integer.MAX_VALUE)
            throw NbcxException.arg(NbcxException.ERR_COUNT, lcount + " elements of " + l + " exceed 2^31 values");
        this.count = (int) sig;
        this.lcount = lcount;
        this.origin = origin;
        this.offset = 0;
    }

    /** Checks that n elements of l from byte origin fit in [0, bytes). */
    private static void fits(Layout l, long origin, int n, long bytes, String what) {
        if (l == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null layout");
        if (n < 0) throw NbcxException.arg(NbcxException.ERR_COUNT, "negative count " + n);
        if (n == 0) return;
        long lo = origin + l.lb, hi = origin + l.ub + (long) (n - 1) * l.extent;
        if (lo < 0 || hi > bytes)
            throw NbcxException.arg(NbcxException.ERR_BUFFER, n + " elements of " + l + " at byte " + origin
                    + " touch bytes [" + lo + ", " + hi + "), outside " + what + " of " + bytes + " bytes");
    }

    private static Buf ofLayout(Object a, int length, Layout l, int origin, int count) {
        Objects.requireNonNull(a, "array");
        Datatype t = Datatype.ofArray(a);
        if (l == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null layout");
        for (Datatype bt : l.types)
            if (bt != t)
                throw NbcxException.arg(NbcxException.ERR_TYPE, l + " has " + bt + " values: not over a "
                        + t.name().toLowerCase() + "[] (use a direct ByteBuffer)");
        long o = (long) origin * t.size;
        fits(l, o, count, (long) length * t.size, "an array");
        return new Buf(a, null, l, o, count);
    }

    public static Buf of(byte[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(boolean[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(short[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(char[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(int[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(long[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    public static Buf of(float[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }
    /**
     * {@code count} elements of a derived {@link Layout}, element {@code e}
     * at {@code origin + e * extent} (origin in elements of the array);
     * the layout's values must be the array's type. Every byte any element
     * touches must be inside the array (negative displacements need an
     * origin that leaves room for them). Gaps are neither read nor written.
     */
    public static Buf of(double[] a, Layout l, int origin, int count) { return ofLayout(a, len(a), l, origin, count); }

    /**
     * {@code count} elements of a {@link Layout} in a direct buffer (native
     * byte order), element {@code e} at {@code origin + e * extent}, origin
     * in the layout's units (values of its type; bytes for a struct).
     * Staged (packed and unpacked) like an array, not used in place.
     */
    public static Buf of(ByteBuffer direct, Layout l, int origin, int count) {
        if (direct == null) throw NbcxException.arg(NbcxException.ERR_BUFFER, "null ByteBuffer");
        if (!direct.isDirect())
            throw NbcxException.arg(NbcxException.ERR_BUFFER,
                    "a heap ByteBuffer: use a direct one (ByteBuffer.allocateDirect) or an array");
        if (l == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null layout");
        long o = (long) origin * l.unit;
        fits(l, o, count, direct.capacity(), "a ByteBuffer");
        return new Buf(null, direct, l, o, count);
    }

    private static Buf ofArray(Object a, int length, int offset, int count) {
        Objects.requireNonNull(a, "array");
        if (offset < 0 || count < 0 || (long) offset + count > length)
            throw NbcxException.arg(count < 0 ? NbcxException.ERR_COUNT : NbcxException.ERR_BUFFER,
                    "window [" + offset + ", " + offset + "+" + count + ") outside an array of "
                            + length);
        return new Buf(a, null, Datatype.ofArray(a), offset, count);
    }

    public static Buf of(byte[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(boolean[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(short[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(char[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(int[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(long[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(float[] a) { return ofArray(a, len(a), 0, len(a)); }
    public static Buf of(double[] a) { return ofArray(a, len(a), 0, len(a)); }

    public static Buf of(byte[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(boolean[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(short[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(char[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(int[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(long[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(float[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }
    public static Buf of(double[] a, int offset, int count) { return ofArray(a, len(a), offset, count); }

    private static int len(Object a) {
        if (a == null) throw NbcxException.arg(NbcxException.ERR_BUFFER, "null array");
        return java.lang.reflect.Array.getLength(a);
    }

    /** The whole of a direct buffer, as elements of {@code type}. */
    public static Buf of(ByteBuffer direct, Datatype type) {
        if (direct == null) throw NbcxException.arg(NbcxException.ERR_BUFFER, "null ByteBuffer");
        if (type == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null datatype");
        return of(direct, type, 0, direct.capacity() / type.size);
    }

    /**
     * {@code count} elements of {@code type} from element {@code offset} of a
     * direct buffer (absolute: its position and limit are not used).
     */
    public static Buf of(ByteBuffer direct, Datatype type, int offset, int count) {
        if (direct == null) throw NbcxException.arg(NbcxException.ERR_BUFFER, "null ByteBuffer");
        if (type == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null datatype");
        if (!direct.isDirect())
            throw NbcxException.arg(NbcxException.ERR_BUFFER,
                    "a heap ByteBuffer: use a direct one (ByteBuffer.allocateDirect) or an array");
        if (offset < 0 || count < 0 || ((long) offset + count) * type.size > direct.capacity())
            throw NbcxException.arg(count < 0 ? NbcxException.ERR_COUNT : NbcxException.ERR_BUFFER,
                    "window of " + count + " " + type + " at " + offset + " outside a buffer of "
                            + direct.capacity() + " bytes");
        return new Buf(null, direct, type, offset, count);
    }

    /** Direct buffers of {@link #allocateDirect} start on a multiple of this many bytes. */
    static final int ALIGN = 64;

    /**
     * A new direct buffer of {@code count} elements of {@code type}, native
     * byte order, starting on a 64-byte boundary (it takes up to 126 bytes
     * more native memory). Two such buffers, and the blocks of one that are
     * multiples of 64 bytes, then lie a multiple of 64 bytes apart: memcpy's
     * {@code rep movsb} on AMD Zen processors with FSRM (glibc's choice for
     * large copies there) runs some 25x slower when the destination lies 8
     * to 24 bytes past the source modulo 4 KiB, the distance where
     * {@code ByteBuffer.allocateDirect}'s addresses (16 bytes past a
     * 16-byte boundary) put a 64 KiB iscatter root's own block on 4 thread
     * ranks (docs/results/java/s26). Not page-aligned: two page-aligned
     * buffers lie 0 bytes apart modulo 4 KiB, where a 1 MiB copy takes
     * twice as long on the same processor. A direct buffer made elsewhere
     * is used where it lies.
     */
    public static Buf allocateDirect(Datatype type, int count) {
        if (count < 0) throw NbcxException.arg(NbcxException.ERR_COUNT, "negative count " + count);
        if (type == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null datatype");
        long bytes = (long) count * type.size;
        if (bytes > Integer.MAX_VALUE)
            throw NbcxException.arg(NbcxException.ERR_COUNT, count + " " + type + " exceed a ByteBuffer's 2 GiB");
        long whole = (bytes + ALIGN - 1) / ALIGN * ALIGN; // (alignedSlice rounds both ends)
        ByteBuffer b = whole + ALIGN - 1 <= Integer.MAX_VALUE
                ? ByteBuffer.allocateDirect((int) (whole + ALIGN - 1)).alignedSlice(ALIGN).slice(0, (int) bytes)
                : ByteBuffer.allocateDirect((int) bytes);
        return new Buf(null, b.order(ByteOrder.nativeOrder()), type, 0, count);
    }

    /** The direct buffer's base address (one JNI call for the buffer's lifetime). */
    long address() {
        long a = address;
        if (a == 0) {
            ADDRESS_LOOKUPS.incrementAndGet();
            address = a = Native.address(direct); // (a race only looks it up twice)
        }
        return a;
    }

    /** Elements of {@link #type()} (of a layout buffer: the values of all its elements, in order). */
    public int count() { return count; }
    /** The layout, or null. */
    public Layout layout() { return layout; }
    /** Elements of the layout (0 without one). */
    public int layoutCount() { return lcount; }
    public int offset() { return offset; }
    public Datatype type() { return type; }
    public boolean isInPlace() { return this == IN_PLACE; }
    public boolean isDirect() { return direct != null; }
    /** The array, or null. */
    public Object array() { return array; }
    /** The direct buffer, or null. */
    public ByteBuffer byteBuffer() { return direct; }

    @Override
    public String toString() {
        if (this == IN_PLACE) return "Buf.IN_PLACE";
        if (layout != null)
            return "Buf[" + (array != null ? Datatype.ofArray(array).name().toLowerCase() + "[]" : "direct")
                    + " " + lcount + " x " + layout + " at byte " + origin + "]";
        return "Buf[" + (array != null ? type.name().toLowerCase() + "[]" : "direct " + type)
                + " offset " + offset + " count " + count + "]";
    }
}
