package io.nbcx;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad arguments raise NbcxException with the right code: never a JVM crash. */
class BadArgumentsTest {
    static void code(int want, Executable e) {
        NbcxException x = assertThrows(NbcxException.class, e);
        assertEquals(want, x.code(), x.getMessage());
        assertNotNull(x.getMessage());
    }

    @Test
    void buffersAndCounts() {
        code(NbcxException.ERR_BUFFER, () -> Buf.of((int[]) null));
        code(NbcxException.ERR_BUFFER, () -> Buf.of(new int[4], 3, 2));
        code(NbcxException.ERR_BUFFER, () -> Buf.of(new int[4], -1, 2));
        code(NbcxException.ERR_COUNT, () -> Buf.of(new int[4], 0, -1));
        code(NbcxException.ERR_BUFFER, () -> Buf.of(ByteBuffer.allocate(16), Datatype.INT));
        code(NbcxException.ERR_BUFFER, () -> Buf.of(ByteBuffer.allocateDirect(16), Datatype.INT, 2, 3));
        code(NbcxException.ERR_TYPE, () -> Buf.of(ByteBuffer.allocateDirect(16), null));
        code(NbcxException.ERR_COUNT, () -> Buf.allocateDirect(Datatype.INT, -2));
        code(NbcxException.ERR_COUNT, () -> Buf.allocateDirect(Datatype.LONG, Integer.MAX_VALUE));
        code(NbcxException.ERR_TYPE, () -> Buf.allocateDirect(null, 4));
        code(NbcxException.ERR_ARG, () -> Nbcx.threads(0, c -> {}));
        code(NbcxException.ERR_ARG, () -> Nbcx.threads(2, null));
        code(NbcxException.ERR_OP, () -> Op.create(null, true));
        code(NbcxException.ERR_ARG, () -> Nbcx.progress(null));
        code(NbcxException.ERR_ALGORITHM, () -> Nbcx.algorithm("bcast", "no-such-algorithm"));
    }

    @Test
    void collectiveArguments() {
        Nbcx.threads(3, comm -> {
            int[] a = new int[6], b = new int[6];
            code(NbcxException.ERR_ROOT, () -> comm.ibcast(Buf.of(a), 3));
            code(NbcxException.ERR_ROOT, () -> comm.ibcast(Buf.of(a), -1));
            code(NbcxException.ERR_BUFFER, () -> comm.ibcast(null, 0));
            code(NbcxException.ERR_IN_PLACE, () -> comm.ibcast(Buf.IN_PLACE, 0));
            code(NbcxException.ERR_OP, () -> comm.iallreduce(Buf.of(a), Buf.of(b), null));
            code(NbcxException.ERR_TYPE, () -> comm.iallreduce(Buf.of(a), Buf.of(new long[6]), Op.SUM));
            code(NbcxException.ERR_BUFFER, () -> comm.iallreduce(Buf.of(a), Buf.of(new int[5]), Op.SUM));
            code(NbcxException.ERR_BUFFER, () -> comm.iallreduce(Buf.of(a), null, Op.SUM));
            // (Every rank must fail alike: a collective started on some ranks only
            // is an erroneous program, as in MPI.)
            code(NbcxException.ERR_BUFFER, () -> comm.iallgather(Buf.of(a), Buf.of(b)));
            code(NbcxException.ERR_COUNT, () -> comm.ialltoall(Buf.of(new int[4]), Buf.of(new int[4])));
            code(NbcxException.ERR_TYPE, () -> comm.iallgather(Buf.of(new byte[3]), Buf.of(new int[9])));
            int[] counts = {1, 1, 1}, displs = {0, 1, 2};
            code(NbcxException.ERR_ARG, () -> comm.iallgatherv(Buf.of(new int[1]), Buf.of(b), new int[2], displs));
            code(NbcxException.ERR_ARG, () -> comm.iallgatherv(Buf.of(new int[1]), Buf.of(b), null, displs));
            code(NbcxException.ERR_COUNT, () -> comm.iallgatherv(Buf.of(new int[1]), Buf.of(b), new int[] {1, -1, 1}, displs));
            code(NbcxException.ERR_ARG, () -> comm.iallgatherv(Buf.of(new int[1]), Buf.of(b), counts, new int[] {0, -4, 1}));
            code(NbcxException.ERR_BUFFER, () -> comm.iallgatherv(Buf.of(new int[1]), Buf.of(b), counts, new int[] {0, 1, 6}));
            code(NbcxException.ERR_IN_PLACE,
                    () -> comm.igather(Buf.IN_PLACE, Buf.of(b), comm.rank() == 1 ? 0 : 1));
            code(NbcxException.ERR_BUFFER,
                    () -> comm.ibcast(Buf.of(ByteBuffer.allocateDirect(8).asReadOnlyBuffer(), Datatype.INT), 0));
            // Rejected by nbcx itself: a bitwise operation on doubles.
            code(NbcxException.ERR_OP,
                    () -> comm.iallreduce(Buf.of(new double[2]), Buf.of(new double[2]), Op.BAND));
            // The communicator is still usable after all of these.
            int[] x = {1}, s = new int[1];
            comm.iallreduce(Buf.of(x), Buf.of(s), Op.SUM).await();
            assertEquals(3, s[0]);
        });
    }

    @Test
    void closedObjects() {
        AtomicReference<Communicator> escaped = new AtomicReference<>();
        Nbcx.threads(2, comm -> {
            if (comm.rank() == 0) escaped.set(comm);
            Op op = Op.ofInt(Math::max);
            op.close();
            op.close();
            code(NbcxException.ERR_OP, () -> comm.iallreduce(Buf.of(new int[1]), Buf.of(new int[1]), op));
            comm.ibarrier().await();
        });
        Communicator c = escaped.get();
        assertTrue(c.isClosed());
        code(NbcxException.ERR_COMM, () -> c.ibarrier());
        code(NbcxException.ERR_COMM, () -> c.ibcast(Buf.of(new int[1]), 0));
        c.close(); // no-op

        Nbcx.threads(1, comm -> {
            comm.close();
            code(NbcxException.ERR_COMM, comm::ibarrier);
        });
    }

    @Test
    void aBodyThatThrowsIsRethrownAndTheOthersDoNotHang() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Nbcx.threads(3, comm -> {
            if (comm.rank() == 1) throw new IllegalStateException("rank 1 gives up");
            // The others wait for rank 1 forever, unless nbcx fails them.
            comm.ibarrier().await();
        }));
        assertEquals("rank 1 gives up", e.getMessage());
        for (Throwable s : e.getSuppressed()) {
            assertInstanceOf(NbcxException.class, s);
            assertEquals(NbcxException.ERR_TRANSPORT, ((NbcxException) s).code());
        }
        NbcxException w = assertThrows(NbcxException.class, () -> Nbcx.threads(1, comm -> {
            throw new Exception("checked");
        }));
        assertInstanceOf(Exception.class, w.getCause());
    }

    @Test
    void fromMpiWithoutMpi() {
        if (Nbcx.hasMpi()) return;
        code(NbcxException.ERR_TRANSPORT, Nbcx::fromMpi);
    }

    @Test
    void errorMessagesComeFromNbcx() {
        NbcxException e = assertThrows(NbcxException.class, () -> Nbcx.threads(2, comm ->
                comm.iallreduce(Buf.of(new double[1]), Buf.of(new double[1]), Op.BXOR)));
        assertEquals(NbcxException.ERR_OP, e.code());
        assertTrue(e.getMessage().contains("nbcx error " + NbcxException.ERR_OP), e.getMessage());
    }
}
