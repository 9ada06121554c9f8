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
    final int count;         // elements

    private Buf() {
        array = null;
        direct = null;
        type = null;
        offset = 0;
        count = 0;
    }

    private Buf(Object array, ByteBuffer direct, Datatype type, int offset, int count) {
        this.array = array;
        this.direct = direct;
        this.type = type;
        this.offset = offset;
        this.count = count;
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

    /** A new direct buffer of {@code count} elements of {@code type}, native byte order. */
    public static Buf allocateDirect(Datatype type, int count) {
        if (count < 0) throw NbcxException.arg(NbcxException.ERR_COUNT, "negative count " + count);
        if (type == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null datatype");
        if ((long) count * type.size > Integer.MAX_VALUE)
            throw NbcxException.arg(NbcxException.ERR_COUNT, count + " " + type + " exceed a ByteBuffer's 2 GiB");
        ByteBuffer b = ByteBuffer.allocateDirect(count * type.size).order(ByteOrder.nativeOrder());
        return new Buf(null, b, type, 0, count);
    }

    public int count() { return count; }
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
        return "Buf[" + (array != null ? type.name().toLowerCase() + "[]" : "direct " + type)
                + " offset " + offset + " count " + count + "]";
    }
}
