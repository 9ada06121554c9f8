/*
 * nbcx for Java: a collective of one's own with the schedule builder, the
 * pipelined chain broadcast of examples/chain_bcast.c. Rank r (counted
 * from the root) receives fragment i from r-1 and sends it to r+1; every
 * receive starts with the operation, the send of fragment i waits for its
 * receive and for the send of fragment i-1, so fragment i moves on while
 * i+1 still arrives. Checked against nbcx's own ibcast.
 *
 *   java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=build/nompi/java/libnbcxjni.so \
 *        java/examples/ChainBcast.java [ranks [ints [fragment_ints]]]
 *   mpiexec -n 3 java -cp java/target/nbcx-0.1.0.jar \
 *        -Dnbcx.jni=build/openmpi/java/libnbcxjni.so java/examples/ChainBcast.java --mpi
 */
import io.nbcx.Buf;
import io.nbcx.Communicator;
import io.nbcx.Nbcx;
import io.nbcx.Request;
import io.nbcx.Schedule;
import java.util.Arrays;

public class ChainBcast {
    /** Starts a chain broadcast of buf from root in fragments of frag elements. */
    static Request chainBcast(int[] buf, int frag, int root, Communicator comm) {
        int p = comm.size(), rel = (comm.rank() - root + p) % p;
        int prev = (comm.rank() - 1 + p) % p, next = (comm.rank() + 1) % p;
        try (Schedule s = comm.schedule()) {
            int prevSend = -1;
            for (int off = 0, i = 0; off < buf.length; off += frag, i++) {
                int n = Math.min(frag, buf.length - off), tag = i % (Schedule.TAG_MAX + 1);
                Buf piece = Buf.of(buf, off, n);
                int recv = rel > 0 ? s.recv(piece, prev, tag) : -1; // no predecessor: posted at start
                if (rel < p - 1) {
                    int send = s.send(piece, next, tag);
                    if (recv >= 0) s.depend(recv, send);
                    if (prevSend >= 0) s.depend(prevSend, send);
                    prevSend = send;
                }
            }
            return s.start();
        }
    }

    static void body(Communicator comm, int ints, int frag) {
        int root = comm.size() - 1;
        int[] mine = new int[ints], ref = new int[ints];
        if (comm.rank() == root)
            for (int i = 0; i < ints; i++) mine[i] = ref[i] = i * 7 + 3;
        long t0 = System.nanoTime();
        chainBcast(mine, frag, root, comm).await();
        double ms = (System.nanoTime() - t0) / 1e6;
        comm.ibcast(Buf.of(ref), root).await();
        int[] bad = {Arrays.equals(mine, ref) ? 0 : 1}, sum = new int[1];
        comm.iallreduce(Buf.of(bad), Buf.of(sum), io.nbcx.Op.SUM).await();
        if (comm.rank() == 0)
            System.out.printf("ChainBcast: %d ints in fragments of %d on %d ranks (%s): %.3f ms, %s%n", ints, frag,
                    comm.size(), comm.transport(), ms, sum[0] == 0 ? "matches ibcast" : "WRONG RESULT");
        if (sum[0] != 0) throw new AssertionError("chain broadcast differs from ibcast");
    }

    public static void main(String[] args) throws Exception {
        boolean mpi = args.length > 0 && args[0].equals("--mpi");
        int a = mpi ? 1 : 0;
        int ranks = !mpi && args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int ints = args.length > a + (mpi ? 0 : 1) ? Integer.parseInt(args[a + (mpi ? 0 : 1)]) : 1 << 18;
        int frag = args.length > a + (mpi ? 1 : 2) ? Integer.parseInt(args[a + (mpi ? 1 : 2)]) : 1 << 14;
        if (ints < 0 || frag <= 0) {
            System.err.println("usage: ChainBcast [ranks | --mpi] [ints >= 0] [fragment_ints > 0]");
            System.exit(2);
        }
        if (mpi) {
            try (Communicator comm = Nbcx.fromMpi()) {
                body(comm, ints, frag);
            } finally {
                Nbcx.finalizeMpi();
            }
        } else {
            Nbcx.threads(ranks, comm -> body(comm, ints, frag));
        }
    }
}
