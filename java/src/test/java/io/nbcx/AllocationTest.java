package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * What the binding allocates on the Java heap per operation on direct
 * buffers: the Request (72 bytes) and the call's setup closure (24),
 * 96 bytes, whichever collectives the program mixes and whether or not
 * the JIT has compiled the path. Before session 31 it was 240 bytes with
 * one collective and 312 with several (a ReentrantLock per request, a
 * long[1] for its handle, fields only staging and schedules use, a fresh
 * argument block and a fresh "i" + name string per call), and a Java program paid for that in page faults while
 * its heap grew (docs/java.md, "What each operation costs").
 */
class AllocationTest {
    static final long LIMIT = 128; // 96 and some slack for the JVM's own

    @Test
    void bytesPerOperation() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeSupported(mx);
        long[] perOp = new long[3];
        Nbcx.threads(1, comm -> {
            Buf b = Buf.allocateDirect(Datatype.BYTE, 4096), s = Buf.allocateDirect(Datatype.BYTE, 4096);
            Buf xb = Buf.allocateDirect(Datatype.INT, 1), yb = Buf.allocateDirect(Datatype.INT, 1);
            // Several collectives through the same call path (as a real program).
            for (int k = 0; k < 2000; k++) {
                comm.ibcast(b, 0).await();
                comm.iscatter(s, b, 0).await();
                comm.iallreduce(xb, yb, Op.SUM).await();
                comm.ibarrier().await();
            }
            int n = 5000;
            long a0 = mx.getCurrentThreadAllocatedBytes();
            for (int k = 0; k < n; k++) comm.ibcast(b, 0).await();
            long a1 = mx.getCurrentThreadAllocatedBytes();
            for (int k = 0; k < n; k++) comm.iallreduce(xb, yb, Op.SUM).await();
            long a2 = mx.getCurrentThreadAllocatedBytes();
            for (int k = 0; k < n; k++) comm.iscatter(s, b, 0).await();
            long a3 = mx.getCurrentThreadAllocatedBytes();
            perOp[0] = (a1 - a0) / n;
            perOp[1] = (a2 - a1) / n;
            perOp[2] = (a3 - a2) / n;
        });
        assertTrue(perOp[0] <= LIMIT, "ibcast allocates " + perOp[0] + " bytes per operation");
        assertTrue(perOp[1] <= LIMIT + 16, "iallreduce allocates " + perOp[1] + " bytes per operation");
        assertTrue(perOp[2] <= LIMIT, "iscatter allocates " + perOp[2] + " bytes per operation");
    }

    static void assumeSupported(com.sun.management.ThreadMXBean mx) {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled(),
                "this JVM does not count allocated bytes per thread");
    }
}
