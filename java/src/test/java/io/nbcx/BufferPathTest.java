package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way an array window reaches nbcx (Nbcx.arrayCopy: region, critical,
 * auto) and direct buffers, for every primitive type, windows below and
 * above auto's 16 KiB switch, at an offset with guard elements around them:
 * an alltoall on 3 thread ranks against the sequential reference.
 */
class BufferPathTest {
    @AfterEach
    void back() {
        Nbcx.arrayCopy("auto");
    }

    /** Element i of the block rank r sends to rank q, as a small integer. */
    static int v(int r, int q, int i) {
        return (r * 31 + q * 7 + i) % 100 + 1;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"region", "critical", "auto"})
    void everyTypeEveryPath(String mode) {
        Nbcx.arrayCopy(mode);
        assertEquals(NbcxException.ERR_ARG, assertThrows(NbcxException.class, () -> Nbcx.arrayCopy("pin")).code());
        for (int block : new int[] {3, 9000}) { // 9000 elements: above 16 KiB for every type but byte/boolean
            Nbcx.threads(3, comm -> {
                for (Datatype t : Datatype.values()) check(comm, t, block, false);
                check(comm, Datatype.DOUBLE, block, true);
                check(comm, Datatype.SHORT, block, true);
            });
        }
    }

    static void check(Communicator comm, Datatype t, int block, boolean direct) {
        int p = comm.size(), me = comm.rank(), n = block * p, off = 2;
        Object sa = java.lang.reflect.Array.newInstance(t.arrayClass.getComponentType(), n + 2 * off);
        Object ra = java.lang.reflect.Array.newInstance(t.arrayClass.getComponentType(), n + 2 * off);
        for (int q = 0; q < p; q++) for (int i = 0; i < block; i++) put(sa, off + q * block + i, v(me, q, i));
        for (int k = 0; k < n + 2 * off; k++) put(ra, k, 0);
        Buf send, recv;
        ByteBuffer db = null;
        if (direct) {
            Buf ds = Buf.allocateDirect(t, n);
            for (int k = 0; k < n; k++) putBB(ds.byteBuffer(), t, k, get(sa, off + k));
            send = ds;
            db = ByteBuffer.allocateDirect((n + 2 * off) * t.size()).order(java.nio.ByteOrder.nativeOrder());
            recv = Buf.of(db, t, off, n);
        } else {
            send = arrayBuf(sa, off, n);
            recv = arrayBuf(ra, off, n);
        }
        comm.ialltoall(send, recv).await();
        for (int q = 0; q < p; q++)
            for (int i = 0; i < block; i++) {
                int k = off + q * block + i;
                int got = direct ? getBB(db, t, k) : get(ra, k);
                assertEquals(t == Datatype.BOOLEAN ? 1 : v(q, me, i), got, t + " block from " + q + " element " + i);
            }
        if (!direct) {
            for (int k = 0; k < off; k++) {
                assertEquals(0, get(ra, k), "guard before");
                assertEquals(0, get(ra, n + off + k), "guard after");
            }
        }
    }

    static Buf arrayBuf(Object a, int off, int n) {
        if (a instanceof byte[]) return Buf.of((byte[]) a, off, n);
        if (a instanceof boolean[]) return Buf.of((boolean[]) a, off, n);
        if (a instanceof short[]) return Buf.of((short[]) a, off, n);
        if (a instanceof char[]) return Buf.of((char[]) a, off, n);
        if (a instanceof int[]) return Buf.of((int[]) a, off, n);
        if (a instanceof long[]) return Buf.of((long[]) a, off, n);
        if (a instanceof float[]) return Buf.of((float[]) a, off, n);
        return Buf.of((double[]) a, off, n);
    }

    static void put(Object a, int k, int x) {
        if (a instanceof byte[]) ((byte[]) a)[k] = (byte) x;
        else if (a instanceof boolean[]) ((boolean[]) a)[k] = x != 0;
        else if (a instanceof short[]) ((short[]) a)[k] = (short) x;
        else if (a instanceof char[]) ((char[]) a)[k] = (char) x;
        else if (a instanceof int[]) ((int[]) a)[k] = x;
        else if (a instanceof long[]) ((long[]) a)[k] = x;
        else if (a instanceof float[]) ((float[]) a)[k] = x;
        else ((double[]) a)[k] = x;
    }

    static int get(Object a, int k) {
        if (a instanceof byte[]) return ((byte[]) a)[k];
        if (a instanceof boolean[]) return ((boolean[]) a)[k] ? 1 : 0;
        if (a instanceof short[]) return ((short[]) a)[k];
        if (a instanceof char[]) return ((char[]) a)[k];
        if (a instanceof int[]) return ((int[]) a)[k];
        if (a instanceof long[]) return (int) ((long[]) a)[k];
        if (a instanceof float[]) return (int) ((float[]) a)[k];
        return (int) ((double[]) a)[k];
    }

    static void putBB(ByteBuffer b, Datatype t, int k, int x) {
        switch (t) {
            case DOUBLE: b.putDouble(8 * k, x); break;
            case SHORT: b.putShort(2 * k, (short) x); break;
            default: throw new AssertionError(t);
        }
    }

    static int getBB(ByteBuffer b, Datatype t, int k) {
        switch (t) {
            case DOUBLE: return (int) b.getDouble(8 * k);
            case SHORT: return b.getShort(2 * k);
            default: throw new AssertionError(t);
        }
    }
}
