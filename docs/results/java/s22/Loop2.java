import io.nbcx.*;
import java.util.concurrent.CyclicBarrier;
public class Loop2 {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), sz = Integer.parseInt(a[1]);
        boolean scat = a[2].startsWith("s"), arrays = a.length > 3 && a[3].equals("arrays");
        Nbcx.progress(Progress.THREAD);
        for (int round = 0; round < 2; round++) { // round 0: JIT warm-up, round 1: marked
            if (round == 1) System.out.println("MARK");
            CyclicBarrier bar = new CyclicBarrier(2);
            int nn = n;
            Nbcx.threads(2, comm -> {
                int p = comm.size();
                Buf s = arrays ? Buf.of(new byte[sz * p]) : Buf.allocateDirect(Datatype.BYTE, sz * p);
                Buf r = arrays ? Buf.of(new byte[sz]) : Buf.allocateDirect(Datatype.BYTE, sz);
                for (int k = 0; k < nn; k++) {
                    if (System.getenv("BAR") != null) try { bar.await(); } catch (Exception e) { throw new RuntimeException(e); }
                    (scat ? comm.iscatter(comm.rank() == 0 ? s : null, r, 0) : comm.ibcast(r, 0)).await();
                }
            });
        }
    }
}
