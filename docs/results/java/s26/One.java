// One.java: the Java twin of one.c (CPU time per start + await on 1 thread rank, 5 rounds).
//   javac -cp java/target/classes -d /tmp/p docs/results/java/s26/One.java
//   java -cp java/target/classes:/tmp/p -Dnbcx.jni=build/nompi/java/libnbcxjni.so One 200000 8192 b
import io.nbcx.*;
import java.lang.management.*;
public class One {
    public static void main(String[] a) {
        int N = Integer.parseInt(a[0]), SZ = Integer.parseInt(a[1]); boolean scat = a[2].startsWith("s");
        if (a.length > 3) Nbcx.progress(a[3].startsWith("c") ? Progress.CALLER : Progress.AUTO);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Nbcx.threads(1, comm -> {
            Buf s = Buf.allocateDirect(Datatype.BYTE, SZ), r = Buf.allocateDirect(Datatype.BYTE, SZ);
            for (int round = 0; round < 5; round++) {
                long t0 = mx.getCurrentThreadCpuTime();
                for (int k = 0; k < N; k++) (scat ? comm.iscatter(s, r, 0) : comm.ibcast(r, 0)).await();
                long t = mx.getCurrentThreadCpuTime() - t0;
                System.out.printf("Java 1 rank %s %d: %.3f us CPU per op%n", scat ? "iscatter" : "ibcast", SZ, t / 1e3 / N);
            }
        });
    }
}
