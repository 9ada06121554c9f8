package io.nbcx;

/** Who moves operations forward (nbcx_progress_mode; see nbcx.h). */
public enum Progress {
    /** The application, inside test/await. */
    CALLER(1),
    /** nbcx's progress thread. */
    THREAD(2),
    /** THREAD plus the split tree for binomial-tree operations. */
    SPLIT(3),
    /** Per operation: short ones CALLER, long ones THREAD (the default). */
    AUTO(4);

    final int code;

    Progress(int code) {
        this.code = code;
    }
}
