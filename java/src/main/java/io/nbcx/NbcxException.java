package io.nbcx;

/**
 * The one exception of nbcx for Java: an nbcx error code ({@code NBCX_ERR_*}
 * of {@code nbcx.h}) with nbcx's message for it, or an argument that the
 * binding rejected before calling nbcx (then {@link #code()} is
 * {@link #ERR_ARG} or the code nbcx would have returned).
 */
public class NbcxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Codes of {@code enum nbcx_error} (nbcx.h). */
    public static final int SUCCESS = 0, ERR_ARG = 1, ERR_COUNT = 2, ERR_BUFFER = 3,
            ERR_ROOT = 4, ERR_RANK = 5, ERR_TYPE = 6, ERR_OP = 7, ERR_COMM = 8,
            ERR_REQUEST = 9, ERR_TAG = 10, ERR_NODE = 11, ERR_IN_PLACE = 12,
            ERR_NOMEM = 13, ERR_TRANSPORT = 14, ERR_TRUNCATE = 15, ERR_ALGORITHM = 16,
            ERR_INTERN = 17, ERR_TOPOLOGY = 18, ERR_EXHAUSTED = 19,
            ERR_TIMEOUT = 20, ERR_BUSY = 21, ERR_ALIAS = 22;

    private final int code;

    public NbcxException(int code, String message) {
        super(message);
        this.code = code;
    }

    public NbcxException(int code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** The nbcx error code ({@code NBCX_ERR_*}). */
    public int code() {
        return code;
    }

    /** An exception for a code nbcx returned on this thread: nbcx's detailed message. */
    static NbcxException fromNative(int code, String what) {
        String msg;
        try {
            msg = Native.errorDetail(code);
        } catch (Throwable t) {
            msg = "nbcx error " + code;
        }
        return new NbcxException(code, what + ": " + msg + " (nbcx error " + code + ")");
    }

    /** A rejected argument, with the message nbcx gives that code. */
    static NbcxException arg(int code, String why) {
        String base;
        try {
            base = Native.errorString(code);
        } catch (Throwable t) {
            base = "nbcx error " + code;
        }
        return new NbcxException(code, why + " (" + base + ", nbcx error " + code + ")");
    }

    static void check(int rc, String what) {
        if (rc != SUCCESS) throw fromNative(rc, what);
    }
}
