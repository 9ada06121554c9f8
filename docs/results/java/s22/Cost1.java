import io.nbcx.*;
public class Cost1 {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), sz = Integer.parseInt(a[1]);
        char op = a[2].charAt(0); boolean arrays = a.length > 3 && a[3].equals("arrays");
        Nbcx.progress(Progress.CALLER);
        Nbcx.threads(1, comm -> {
            Buf s = arrays ? Buf.of(new byte[sz]) : Buf.allocateDirect(Datatype.BYTE, sz);
            Buf r = arrays ? Buf.of(new byte[sz]) : Buf.allocateDirect(Datatype.BYTE, sz);
            var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            double best = 1e30; long alloc = 0;
            for (int b = 0; b < 12; b++) {
                long a0 = mx.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                for (int k = 0; k < n; k++)
                    (op == 's' ? comm.iscatter(s, r, 0) : op == 'g' ? comm.igather(s, r, 0) : comm.ibcast(r, 0)).await();
                double t = (double) (System.nanoTime() - t0) / n; if (b >= 5 && t < best) best = t;
                alloc = (mx.getCurrentThreadAllocatedBytes() - a0) / n;
            }
            System.out.printf("Java %c %d %s: %.0f ns/op, %d bytes allocated/op%n", op, sz, arrays ? "arrays" : "direct", best, alloc);
        });
    }
}
