package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ialltoallw and alltoallwInit against a sequential reference: to rank j
 * each rank sends j+1 elements of INT32 (j even) or DOUBLE (j odd) at byte
 * 64 j of a byte array; from rank i it receives its own count and type at
 * byte 64 i + 8 of another, whose other bytes keep their values. Heap
 * arrays and direct buffers; a future; bad arguments.
 */
class AlltoallwTest {
    static Datatype typeFor(int j) {
        return j % 2 == 0 ? Datatype.INT : Datatype.DOUBLE;
    }

    static double value(int from, int to, int e) {
        return from * 100 + to * 10 + e;
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4})
    void againstReference(int n) {
        Nbcx.threads(n, AlltoallwTest::body);
    }

    static void body(Communicator comm) throws Exception {
        int p = comm.size(), me = comm.rank(), bytes = 64 * p + 72;
        int[] sc = new int[p], sd = new int[p], rc = new int[p], rd = new int[p];
        Datatype[] st = new Datatype[p], rt = new Datatype[p];
        for (int j = 0; j < p; j++) {
            sc[j] = j + 1;
            sd[j] = 64 * j;
            st[j] = typeFor(j);
            rc[j] = me + 1;
            rd[j] = 64 * j + 8;
            rt[j] = typeFor(me);
        }
        for (int round = 0; round < 3; round++) {
            boolean direct = round == 1;
            byte[] s = new byte[bytes], r = new byte[bytes];
            ByteBuffer sb = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.wrap(s);
            ByteBuffer rb = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.wrap(r);
            sb.order(ByteOrder.nativeOrder());
            rb.order(ByteOrder.nativeOrder());
            for (int j = 0; j < p; j++)
                for (int e = 0; e < sc[j]; e++) {
                    if (st[j] == Datatype.INT) sb.putInt(sd[j] + 4 * e, (int) value(me, j, e));
                    else sb.putDouble(sd[j] + 8 * e, value(me, j, e));
                }
            for (int k = 0; k < bytes; k++) rb.put(k, (byte) 0x5a);
            Buf send = direct ? Buf.of(sb, Datatype.BYTE) : Buf.of(s);
            Buf recv = direct ? Buf.of(rb, Datatype.BYTE) : Buf.of(r);
            if (round == 2) {
                try (PersistentRequest pr = comm.alltoallwInit(send, sc, sd, st, recv, rc, rd, rt)) {
                    pr.start().toFuture().get(60, TimeUnit.SECONDS);
                    pr.start().await();
                }
            } else {
                comm.ialltoallw(send, sc, sd, st, recv, rc, rd, rt).toFuture().get(60, TimeUnit.SECONDS);
            }
            for (int i = 0; i < p; i++) {
                for (int e = 0; e < rc[i]; e++) {
                    double got = rt[i] == Datatype.INT ? rb.getInt(rd[i] + 4 * e) : rb.getDouble(rd[i] + 8 * e);
                    assertEquals(value(i, me, e), got, "round " + round + " from " + i + " element " + e);
                }
                for (int k = 64 * i; k < rd[i]; k++) assertEquals((byte) 0x5a, rb.get(k), "gap byte " + k);
            }
        }
        // Bad arguments: caught in Java.
        byte[] s = new byte[bytes], r = new byte[bytes];
        NbcxException e = assertThrows(NbcxException.class,
                () -> comm.ialltoallw(Buf.of(s), sc, sd, new Datatype[p + 1], Buf.of(r), rc, rd, rt));
        assertEquals(NbcxException.ERR_ARG, e.code());
        int[] far = sd.clone();
        far[p - 1] = bytes;
        e = assertThrows(NbcxException.class, () -> comm.ialltoallw(Buf.of(s), sc, far, st, Buf.of(r), rc, rd, rt));
        assertEquals(NbcxException.ERR_BUFFER, e.code());
        Datatype[] none = st.clone();
        none[0] = null;
        e = assertThrows(NbcxException.class, () -> comm.ialltoallw(Buf.of(s), sc, sd, none, Buf.of(r), rc, rd, rt));
        assertEquals(NbcxException.ERR_TYPE, e.code());
    }
}
