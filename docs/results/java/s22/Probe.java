package io.nbcx;
/** Where a direct-buffer operation's time goes in the binding (1 rank, caller progress). */
public class Probe {
    interface Step { void run(); }
    static double best(int n, Step s) {
        double b = 1e30;
        for (int k = 0; k < 12; k++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) s.run();
            double t = (double) (System.nanoTime() - t0) / n;
            if (k >= 4 && t < b) b = t;
        }
        return b;
    }
    public static void main(String[] a) {
        int n = 100000, sz = Integer.parseInt(a[0]);
        Nbcx.progress(Progress.CALLER);
        Nbcx.threads(1, comm -> {
            Buf s = Buf.allocateDirect(Datatype.BYTE, sz), r = Buf.allocateDirect(Datatype.BYTE, sz);
            long ch = commHandle(comm);
            long sa = s.address(), ra = r.address();
            long[] h = new long[1];
            System.out.printf("full iscatter+await      %6.0f ns%n", best(n, () -> comm.iscatter(s, r, 0).await()));
            System.out.printf("Native.coll+await only   %6.0f ns%n", best(n, () -> {
                Native.coll(Native.K_SCATTER, false, ch, sa, sz, null, null, 1, ra, sz, null, null, 1, 0, 0, h);
                Native.await(h);
            }));
            System.out.printf("new Request only         %6.0f ns%n", best(n, () -> sinkR = new Request("iscatter", false)));
            System.out.printf("Native.progressGet (JNI) %6.0f ns%n", best(n, () -> sinkI = Native.progressGet()));
            System.out.printf("full ibcast+await        %6.0f ns%n", best(n, () -> comm.ibcast(r, 0).await()));
            System.out.printf("Native ibcast+await only %6.0f ns%n", best(n, () -> {
                Native.coll(Native.K_BCAST, false, ch, 0, 0, null, null, 0, ra, sz, null, null, 1, 0, 0, h);
                Native.await(h);
            }));
        });
    }
    static volatile Request sinkR; static volatile int sinkI;
    static long commHandle(Communicator c) {
        try { var f = Communicator.class.getDeclaredField("handle"); f.setAccessible(true); return f.getLong(c); }
        catch (Exception e) { throw new RuntimeException(e); }
    }
}
