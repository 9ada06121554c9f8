package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * Buf.allocateDirect starts buffers on a 64-byte boundary (memcpy's rep
 * movsb on AMD Zen is some 25x slower when the destination lies 8-24 bytes
 * past the source modulo 4 KiB: docs/results/java/s26), with exactly
 * the capacity asked for, in native order; and the data moves through
 * such buffers as through any other.
 */
class AllocateDirectTest {
    @Test
    void aligned() {
        for (int n : new int[] {1, 63, 64, 65, 4096, 4097, 65536, 65536 + 24, 1 << 20}) {
            Buf b = Buf.allocateDirect(Datatype.BYTE, n);
            assertEquals(0, b.address() % Buf.ALIGN, n + " bytes: 64-byte aligned");
            assertEquals(n, b.byteBuffer().capacity(), n + " bytes: the capacity asked for");
            assertEquals(ByteOrder.nativeOrder(), b.byteBuffer().order());
        }
        Buf d = Buf.allocateDirect(Datatype.DOUBLE, 1024);
        assertEquals(0, d.address() % Buf.ALIGN);
        assertEquals(8192, d.byteBuffer().capacity());
        Buf small = Buf.allocateDirect(Datatype.INT, 3);
        assertEquals(12, small.byteBuffer().capacity());
        assertEquals(0, Buf.allocateDirect(Datatype.BYTE, 0).byteBuffer().capacity());
    }

    @Test
    void scatterThroughAlignedBuffers() {
        int n = 16384; // 64 KiB of ints per rank
        Nbcx.threads(3, comm -> {
            int rank = comm.rank(), p = comm.size();
            Buf s = rank == 0 ? Buf.allocateDirect(Datatype.INT, n * p) : null, r = Buf.allocateDirect(Datatype.INT, n);
            if (rank == 0) for (int i = 0; i < n * p; i++) s.byteBuffer().putInt(4 * i, i);
            comm.iscatter(s, r, 0).await();
            boolean ok = true;
            for (int i = 0; i < n; i++) ok &= r.byteBuffer().getInt(4 * i) == rank * n + i;
            assertTrue(ok, "rank " + rank + " got its block");
        });
    }
}
