package io.nbcx;

import java.util.Arrays;

/**
 * A derived datatype: the memory layout of one element made of blocks of
 * primitive values at displacements from the element's origin, with gaps
 * that a collective neither reads nor writes, as MPI's derived datatypes
 * (MPI_Type_vector, _indexed, _create_struct, _create_resized). A buffer
 * of {@code count} elements of a layout ({@link Buf#of(double[], Layout,
 * int, int)}, {@link Buf#of(java.nio.ByteBuffer, Layout, int, int)}) has
 * element {@code e} at {@code origin + e * extent}.
 *
 * <p>Units: {@link #vector} and {@link #indexed} layouts (one primitive
 * type, {@link #type()}) count displacements, strides and the extent in
 * elements of that type; {@link #struct} layouts in bytes. Displacements
 * may be negative (a block before the origin, as MPI allows); a buffer's
 * origin must then leave room for them.
 *
 * <p>A collective sees a layout's data as its type signature: the values
 * of the blocks in order, element after element (a layout of one type
 * moves and reduces as that type; a struct of several types moves as
 * bytes and cannot be reduced). Counts and displacements of the v-forms
 * are in layout elements, as in MPI. How it is done: the binding packs
 * the blocks into the native staging memory when the operation starts
 * and unpacks them when it completes (direct buffers too: a layout is
 * never used in place); nbcx's C API has derived datatypes only through
 * its MPI face (nbcx_datatype_from_mpi), which thread ranks do not have.
 */
public final class Layout {
    /** The primitive type of every block, or null for a struct of several types. */
    final Datatype type;
    /** Per block: displacement from the origin and length, in bytes. */
    final long[] disp, len;
    /** Per block: its type (struct), for the checks of a buffer. */
    final Datatype[] types;
    /** Bytes: the first byte touched (relative to the origin), one past the last. */
    final long lb, ub;
    /** Bytes between consecutive elements. */
    final long extent;
    /** Bytes of data per element. */
    final long size;
    /** Bytes per unit of the public numbers (the type's size, or 1 for a struct). */
    final int unit;

    private Layout(Datatype type, int unit, long[] disp, long[] len, Datatype[] types, long extent) {
        this.type = type;
        this.disp = disp;
        this.len = len;
        this.types = types;
        this.unit = unit;
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE, sz = 0;
        for (int i = 0; i < disp.length; i++) {
            if (len[i] == 0) continue;
            lo = Math.min(lo, disp[i]);
            hi = Math.max(hi, disp[i] + len[i]);
            sz += len[i];
        }
        if (sz == 0) throw NbcxException.arg(NbcxException.ERR_TYPE, "a layout without data (every block empty)");
        this.lb = lo;
        this.ub = hi;
        this.size = sz;
        this.extent = extent > 0 ? extent : hi - lo;
    }

    private static Datatype need(Datatype t) {
        if (t == null) throw NbcxException.arg(NbcxException.ERR_TYPE, "null datatype");
        return t;
    }

    /**
     * MPI_Type_vector: {@code count} blocks of {@code blocklength} values of
     * {@code type}, block {@code i} starting {@code i * stride} values from
     * the origin ({@code stride} may be negative or smaller than the block:
     * blocks may not overlap, as MPI requires of a receive buffer, and this
     * binding of any layout). Extent: from the first to one past the last
     * value (MPI's rule), unless {@link #resized}.
     */
    public static Layout vector(int count, int blocklength, int stride, Datatype type) {
        need(type);
        if (count <= 0 || blocklength <= 0)
            throw NbcxException.arg(NbcxException.ERR_COUNT,
                    "vector: count " + count + " and block length " + blocklength + " must be positive");
        int[] bl = new int[count], d = new int[count];
        for (int i = 0; i < count; i++) {
            bl[i] = blocklength;
            d[i] = Math.multiplyExact(i, stride);
        }
        return indexed(bl, d, type);
    }

    /**
     * MPI_Type_indexed: block {@code i} is {@code blocklengths[i]} values of
     * {@code type} at {@code displs[i]} values from the origin (negative
     * allowed; blocks of length 0 allowed; overlapping blocks are not).
     */
    public static Layout indexed(int[] blocklengths, int[] displs, Datatype type) {
        need(type);
        if (blocklengths == null || displs == null || blocklengths.length != displs.length
                || blocklengths.length == 0)
            throw NbcxException.arg(NbcxException.ERR_ARG,
                    "indexed: block lengths and displacements must be non-empty and as many");
        int n = blocklengths.length;
        long[] d = new long[n], l = new long[n];
        Datatype[] t = new Datatype[n];
        for (int i = 0; i < n; i++) {
            if (blocklengths[i] < 0)
                throw NbcxException.arg(NbcxException.ERR_COUNT, "indexed: negative block length " + blocklengths[i]);
            d[i] = (long) displs[i] * type.size;
            l[i] = (long) blocklengths[i] * type.size;
            t[i] = type;
        }
        return new Layout(type, type.size, d, l, t, 0).checked();
    }

    /**
     * MPI_Type_create_struct for primitive fields: block {@code i} is
     * {@code blocklengths[i]} values of {@code types[i]} at byte
     * displacement {@code byteDispls[i]} (negative allowed), each aligned
     * to its type's size. Over a direct buffer, any types; over an array,
     * only the array's type. A struct of one type is an indexed layout
     * (reducible); of several, it moves as bytes and cannot be reduced.
     * The extent is rounded up to the largest field's size, as C pads a
     * struct (MPI's rule), unless {@link #resized}.
     */
    public static Layout struct(int[] blocklengths, int[] byteDispls, Datatype[] types) {
        if (blocklengths == null || byteDispls == null || types == null || blocklengths.length == 0
                || blocklengths.length != byteDispls.length || types.length != byteDispls.length)
            throw NbcxException.arg(NbcxException.ERR_ARG,
                    "struct: block lengths, displacements and types must be non-empty and as many");
        int n = blocklengths.length;
        long[] d = new long[n], l = new long[n];
        Datatype[] t = new Datatype[n];
        Datatype one = need(types[0]);
        int align = 1;
        for (int i = 0; i < n; i++) {
            t[i] = need(types[i]);
            if (blocklengths[i] < 0)
                throw NbcxException.arg(NbcxException.ERR_COUNT, "struct: negative block length " + blocklengths[i]);
            if (Math.floorMod(byteDispls[i], t[i].size) != 0)
                throw NbcxException.arg(NbcxException.ERR_ARG, "struct: block " + i + " of " + t[i]
                        + " at byte " + byteDispls[i] + " is not aligned to " + t[i].size);
            if (t[i] != one) one = null;
            if (blocklengths[i] > 0) align = Math.max(align, t[i].size);
            d[i] = byteDispls[i];
            l[i] = (long) blocklengths[i] * t[i].size;
        }
        Layout probe = new Layout(one, 1, d, l, t, 0);
        long ext = probe.ub - probe.lb;
        ext = (ext + align - 1) / align * align;
        return new Layout(one, 1, d, l, t, ext).checked();
    }

    /**
     * MPI_Type_create_resized (lower bound unchanged): the same blocks with
     * {@code extent} between consecutive elements, in this layout's units
     * (values of {@link #type()}, or bytes for a struct); for instance a
     * column of a row-major matrix resized to one value, so that element
     * {@code j} is column {@code j}. Elements may then interleave; a
     * receive buffer whose elements overlap is erroneous, as in MPI (the
     * values that land there are undefined).
     */
    public Layout resized(int extent) {
        if (extent <= 0)
            throw NbcxException.arg(NbcxException.ERR_ARG, "resized: extent " + extent + " must be positive");
        return new Layout(type, unit, disp, len, types, (long) extent * unit);
    }

    /** Rejects overlapping blocks (sorted by displacement). */
    private Layout checked() {
        Integer[] order = new Integer[disp.length];
        for (int i = 0; i < order.length; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Long.compare(disp[a], disp[b]));
        long end = Long.MIN_VALUE;
        for (int i : order) {
            if (len[i] == 0) continue;
            if (disp[i] < end)
                throw NbcxException.arg(NbcxException.ERR_ARG, "layout: block at byte " + disp[i]
                        + " overlaps the block before it (ending at byte " + end + ")");
            end = disp[i] + len[i];
        }
        return this;
    }

    /** The type of every block, or null for a struct of several types. */
    public Datatype type() { return type; }
    /** Bytes of data in one element. */
    public long size() { return size; }
    /** Bytes between consecutive elements. */
    public long extent() { return extent; }
    /** Bytes: the lowest displacement of any value (may be negative). */
    public long lowerBound() { return lb; }
    /** Bytes: one past the highest byte of any value. */
    public long upperBound() { return ub; }
    /** Number of blocks. */
    public int blocks() { return disp.length; }

    /** Values of {@link #type()} per element (the type signature's length); 0 for a struct of several types. */
    int values() { return type != null ? (int) (size / type.size) : 0; }

    @Override
    public String toString() {
        return "Layout[" + (type != null ? type : "struct") + ", " + disp.length + " block(s), size " + size
                + ", extent " + extent + " bytes]";
    }
}
