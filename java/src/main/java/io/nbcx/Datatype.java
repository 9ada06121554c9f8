package io.nbcx;

/**
 * The Java primitive types as nbcx datatypes. A buffer that is a Java
 * array has the datatype of its elements; a direct {@link java.nio.ByteBuffer}
 * may hold any of them (in the native byte order, as nbcx reads memory).
 */
public enum Datatype {
    /** {@code byte}: NBCX_INT8. */
    BYTE(1, 1, byte[].class),
    /** {@code boolean}: NBCX_UINT8 (JNI's jboolean, 0 or 1). */
    BOOLEAN(2, 1, boolean[].class),
    /** {@code short}: NBCX_INT16. */
    SHORT(3, 2, short[].class),
    /** {@code char} (UTF-16 unit): NBCX_UINT16. */
    CHAR(4, 2, char[].class),
    /** {@code int}: NBCX_INT32. */
    INT(5, 4, int[].class),
    /** {@code long}: NBCX_INT64. */
    LONG(7, 8, long[].class),
    /** {@code float}: NBCX_FLOAT. */
    FLOAT(9, 4, float[].class),
    /** {@code double}: NBCX_DOUBLE. */
    DOUBLE(10, 8, double[].class);

    final int code;
    final int size;
    final Class<?> arrayClass;

    Datatype(int code, int size, Class<?> arrayClass) {
        this.code = code;
        this.size = size;
        this.arrayClass = arrayClass;
    }

    /** Bytes per element. */
    public int size() {
        return size;
    }

    static Datatype ofCode(int code) {
        for (Datatype t : values()) if (t.code == code) return t;
        return null;
    }

    static Datatype ofArray(Object array) {
        for (Datatype t : values()) if (t.arrayClass == array.getClass()) return t;
        throw NbcxException.arg(NbcxException.ERR_TYPE,
                "not an array of a primitive type: " + array.getClass().getName());
    }
}
