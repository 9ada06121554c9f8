import io.nbcx.*;

/**
 * ibcast + await of SIZE bytes on RANKS thread ranks (default 1), after
 * 200,000 warm-up operations (ibcast alone, or with "mixed" ibcast,
 * iscatter, igather and iallgather, so that the binding's call path has
 * several collectives behind it); then 5 rounds of N, each with its time
 * and bytes allocated per operation.
 *
 *   java -cp java/target/nbcx-0.1.0.jar:DIR -Dnbcx.jni=build/nompi/java/libnbcxjni.so One SIZE N [RANKS] [mixed]
 */
public class One {
    public static void main(String[] a) {
        int size = Integer.parseInt(a[0]), n = Integer.parseInt(a[1]), ranks = a.length > 2 ? Integer.parseInt(a[2]) : 1;
        boolean mixed = a.length > 3 && a[3].equals("mixed");
        Nbcx.threads(ranks, comm -> {
            Buf b = Buf.allocateDirect(Datatype.BYTE, size), s2 = Buf.allocateDirect(Datatype.BYTE, size * comm.size());
            for (int w = 0; w < 200000; w++) {
                comm.ibcast(b, 0).await();
                if (!mixed) continue;
                comm.iscatter(s2, b, 0).await();
                comm.igather(b, s2, 0).await();
                comm.iallgather(b, s2).await();
            }
            com.sun.management.ThreadMXBean mx =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            for (int rd = 0; rd < 5; rd++) {
                long a0 = mx.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                for (int k = 0; k < n; k++) comm.ibcast(b, 0).await();
                if (comm.rank() == 0)
                    System.out.printf("java %d B: %.1f ns/op, %.1f bytes/op%n", size, (System.nanoTime() - t0) / (double) n,
                            (mx.getCurrentThreadAllocatedBytes() - a0) / (double) n);
            }
        });
    }
}
