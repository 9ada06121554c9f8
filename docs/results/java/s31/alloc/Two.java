import io.nbcx.*;
import java.nio.file.*;
public class Two {
    static long minflt() throws Exception {
        String s = new String(Files.readAllBytes(Paths.get("/proc/self/stat")));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[7]);
    }
    public static void main(String[] a) {
        int size = Integer.parseInt(a[0]), n = Integer.parseInt(a[1]), rounds = Integer.parseInt(a[2]);
        Nbcx.threads(1, comm -> {
            Buf b = Buf.allocateDirect(Datatype.BYTE, size);
            for (int w = 0; w < 40000; w++) comm.ibcast(b, 0).await();
            try {
                for (int rd = 0; rd < rounds; rd++) {
                    long f0 = minflt(), t0 = System.nanoTime();
                    for (int k = 0; k < n; k++) comm.ibcast(b, 0).await();
                    long t1 = System.nanoTime(), f1 = minflt();
                    System.out.printf("round %d: %.1f ns/op, %d faults%n", rd, (t1 - t0) / (double) n, f1 - f0);
                }
            } catch (Exception e) { throw new RuntimeException(e); }
        });
    }
}
