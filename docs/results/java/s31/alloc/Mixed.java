import io.nbcx.*;
public class Mixed {
    public static void main(String[] a) {
        int size = Integer.parseInt(a[0]), n = Integer.parseInt(a[1]), ranks = a.length > 2 ? Integer.parseInt(a[2]) : 1;
        Nbcx.threads(ranks, comm -> {
            Buf b = Buf.allocateDirect(Datatype.BYTE, size);
            Buf s2 = Buf.allocateDirect(Datatype.BYTE, size * comm.size()); for (int w = 0; w < 200000; w++) { comm.ibcast(b, 0).await(); comm.iscatter(s2, b, 0).await(); comm.igather(b, s2, 0).await(); comm.iallgather(b, s2).await(); }
            for (int rd = 0; rd < 5; rd++) {
                com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
                long a0 = mx.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                for (int k = 0; k < n; k++) comm.ibcast(b, 0).await();
                if (comm.rank() == 0) System.out.printf("java %d B: %.1f ns/op, %.1f bytes/op%n", size, (System.nanoTime() - t0) / (double) n, (mx.getCurrentThreadAllocatedBytes() - a0) / (double) n);
            }
        });
    }
}
