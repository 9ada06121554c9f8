package io.nbcx;

/**
 * The MPI mode: every workload of the tests on one communicator over
 * MPI_COMM_WORLD, each JVM a rank. Run under mpiexec (scripts/test does,
 * on 2 ranks with Open MPI and with MPICH):
 *
 * <pre>
 * mpiexec -n 2 java -cp java/target/classes:java/target/test-classes:$JUNIT_CP \
 *     -Dnbcx.jni=build/java-openmpi/java/libnbcxjni.so io.nbcx.MpiCheck
 * </pre>
 */
public final class MpiCheck {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        Communicator comm = Nbcx.fromMpi();
        try {
            if (!comm.transport().equals("mpi")) throw new AssertionError("transport " + comm.transport());
            for (int k = 0; k < rounds; k++) {
                for (String op : Workloads.OPS) Workloads.body(op, comm);
                PersistentTest.persistentBody(comm);
                FutureTest.futuresBody(comm);
                ComposeTest.chainBody(comm);
                ComposeTest.newOpsChainBody(comm);
                AlltoallwTest.body(comm);
                for (String topo : NeighborTest.TOPOS) NeighborTest.body(topo, comm);
                CommTest.body(comm);
                ScheduleTest.body(comm);
                LayoutTest.body(comm);
            }
            // Thread ranks still work in an MPI job, next to the MPI communicator.
            Nbcx.threads(3, c -> Workloads.body("allreduce", c));
            comm.ibarrier().await();
            if (comm.rank() == 0)
                System.out.printf("MpiCheck: %d collective workloads x %d round(s) on %d MPI ranks: ok (progress %s)%n",
                        Workloads.OPS.length + 7 + NeighborTest.TOPOS.length, rounds, comm.size(), Nbcx.progress());
        } catch (Throwable t) {
            // The other ranks would wait for this one forever (and an exit
            // without MPI_Finalize does not end the job here, with Open MPI
            // or MPICH): say why, and abort the job.
            System.err.println("MpiCheck: rank " + comm.rank() + " failed:");
            t.printStackTrace();
            System.err.flush();
            Nbcx.abortMpi(1);
        }
        comm.close();
        Nbcx.finalizeMpi();
    }
}
