/*
 * nbcx for Java, the example: ranks that are threads of this JVM (no MPI)
 * overlap collectives with computation.
 *
 *   1. rank 0 broadcasts the problem (a direct ByteBuffer: zero copy);
 *   2. each rank integrates its share of 4/(1+x^2) over [0, 1] (= pi) in
 *      chunks, and sums the partial results with a nonblocking allreduce
 *      started after each chunk, while it computes the next one;
 *   3. a persistent allgather, started every round, collects per-rank
 *      timings, and its futures are composed with thenApply.
 *
 *   java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=build/nompi/java/libnbcxjni.so \
 *        java/examples/Overlap.java [ranks]
 *
 * or, each JVM a rank of an MPI job (the JNI library of a build with MPI):
 *
 *   mpiexec -n 2 java -cp java/target/nbcx-0.1.0.jar \
 *        -Dnbcx.jni=build/openmpi/java/libnbcxjni.so java/examples/Overlap.java --mpi
 */
import io.nbcx.Buf;
import io.nbcx.Communicator;
import io.nbcx.Datatype;
import io.nbcx.Nbcx;
import io.nbcx.Op;
import io.nbcx.PersistentRequest;
import io.nbcx.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

public class Overlap {
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--mpi")) {
            // Each JVM a rank of an MPI job (mpiexec -n N java ... --mpi):
            // the same body, on a communicator over MPI_COMM_WORLD.
            try (Communicator comm = Nbcx.fromMpi()) {
                body(comm);
            } finally {
                Nbcx.finalizeMpi();
            }
            return;
        }
        int ranks = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        Nbcx.threads(ranks, Overlap::body);
    }

    static void body(Communicator comm) {
        {
            int rank = comm.rank(), size = comm.size();

            // 1. The problem: intervals per chunk and number of chunks.
            Buf problem = Buf.allocateDirect(Datatype.LONG, 2);
            if (rank == 0) {
                problem.byteBuffer().putLong(0, 2_000_000L);
                problem.byteBuffer().putLong(8, 8L);
            }
            comm.ibcast(problem, 0).await();
            long n = problem.byteBuffer().getLong(0);
            int chunks = (int) problem.byteBuffer().getLong(8);

            // 2. Integrate chunk by chunk; each partial sum is reduced in the
            //    background while the next chunk is computed.
            double h = 1.0 / (n * chunks);
            double[][] partial = new double[chunks][1], total = new double[chunks][1];
            List<Request> inFlight = new ArrayList<>();
            long[] myTime = new long[1], times = new long[size];
            try (PersistentRequest gatherTimes = comm.allgatherInit(Buf.of(myTime), Buf.of(times))) {
                for (int c = 0; c < chunks; c++) {
                    long t0 = System.nanoTime();
                    double s = 0;
                    for (long i = rank; i < n; i += size) {
                        double x = h * (c * n + i + 0.5);
                        s += 4.0 / (1.0 + x * x);
                    }
                    partial[c][0] = s * h;
                    inFlight.add(comm.iallreduce(Buf.of(partial[c]), Buf.of(total[c]), Op.SUM));
                    myTime[0] = System.nanoTime() - t0;
                    // 3. The persistent allgather, as a future.
                    CompletableFuture<Long> slowest = gatherTimes.start().toFuture().thenApply(v -> {
                        long m = 0;
                        for (long t : times) m = Math.max(m, t);
                        return m;
                    });
                    long ns = slowest.join();
                    if (rank == 0) System.out.printf("chunk %d: slowest rank took %.2f ms%n", c, ns / 1e6);
                }
            }
            Request.waitAll(inFlight);
            double pi = 0;
            for (double[] t : total) pi += t[0];
            if (rank == 0)
                System.out.printf("pi = %.12f (error %.2e) on %d ranks, transport %s%n", pi,
                        Math.abs(pi - Math.PI), size, comm.transport());
            if (Math.abs(pi - Math.PI) > 1e-9) throw new AssertionError("wrong pi: " + pi);
        }
    }
}
