/*
 * What each buffer path of nbcx for Java costs (issue 40): a nonblocking
 * alltoall of `size` bytes per rank (long elements) on thread ranks,
 * started and awaited in a loop, with the buffers
 *
 *   critical  long[] arrays, windows copied to native memory and back with
 *             GetPrimitiveArrayCritical + memcpy (the array pinned for the
 *             memcpy)
 *   region    long[] arrays, copied with Get/SetLongArrayRegion (the JVM
 *             copies; nothing pinned)
 *   auto      long[] arrays, the binding's default (region up to 16 KiB,
 *             critical above)
 *   direct    direct ByteBuffers: no copy at all
 *
 * On 1 rank the collective is a local copy, so the figures show the
 * staging cost itself (malloc/free, one copy in, one copy out); on 2 and
 * more the exchange as well. Each figure: microseconds per operation, the
 * median of --rounds loops of --iters operations on rank 0 (after a
 * warm-up). Timing-sensitive: run it on an idle machine.
 *
 *   java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=build/nompi/java/libnbcxjni.so \
 *        java/bench/BufBench.java [--ranks 1,2] [--sizes 64,1k,16k,256k,4m]
 *        [--rounds 5] [--iters 200]
 */
import io.nbcx.Buf;
import io.nbcx.Communicator;
import io.nbcx.Datatype;
import io.nbcx.Nbcx;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

public class BufBench {
    static final String[] PATHS = {"critical", "region", "auto", "direct"};

    static long parseSize(String s) {
        s = s.trim().toLowerCase(Locale.ROOT);
        long m = 1;
        if (s.endsWith("k")) m = 1024;
        else if (s.endsWith("m")) m = 1024 * 1024;
        if (m > 1) s = s.substring(0, s.length() - 1);
        return Long.parseLong(s) * m;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    /** Microseconds per operation on rank 0 (median of rounds), every rank checking its result once. */
    static double run(int ranks, long bytes, String path, int rounds, int iters) {
        double[] us = new double[1];
        Nbcx.threads(ranks, comm -> {
            int p = comm.size(), me = comm.rank();
            int block = (int) Math.max(1, bytes / 8 / p), n = block * p;
            Buf send, recv;
            long[] sa = null, ra = null;
            if (path.equals("direct")) {
                send = Buf.allocateDirect(Datatype.LONG, n);
                recv = Buf.allocateDirect(Datatype.LONG, n);
                for (int i = 0; i < n; i++) send.byteBuffer().putLong(8 * i, 1000L * me + i);
            } else {
                sa = new long[n];
                ra = new long[n];
                for (int i = 0; i < n; i++) sa[i] = 1000L * me + i;
                send = Buf.of(sa);
                recv = Buf.of(ra);
            }
            comm.ialltoall(send, recv).await();
            for (int q = 0; q < p; q++) { // block q came from rank q (its block me)
                long got = path.equals("direct") ? recv.byteBuffer().getLong(8 * q * block) : ra[q * block];
                if (got != 1000L * q + (long) me * block) throw new AssertionError(path + ": wrong result");
            }
            for (int w = 0; w < Math.min(iters, 50); w++) comm.ialltoall(send, recv).await();
            double[] t = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                comm.ibarrier().await();
                long t0 = System.nanoTime();
                for (int i = 0; i < iters; i++) comm.ialltoall(send, recv).await();
                t[r] = (System.nanoTime() - t0) / 1e3 / iters;
            }
            if (me == 0) us[0] = median(t);
        });
        return us[0];
    }

    public static void main(String[] args) {
        List<Integer> ranks = List.of(1, 2);
        List<Long> sizes = new ArrayList<>(List.of(64L, 1024L, 16384L, 262144L, 4194304L));
        int rounds = 5, iters = 200;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--ranks": {
                    List<Integer> l = new ArrayList<>();
                    for (String s : args[++i].split(",")) l.add(Integer.parseInt(s.trim()));
                    ranks = l;
                    break;
                }
                case "--sizes": {
                    sizes.clear();
                    for (String s : args[++i].split(",")) sizes.add(parseSize(s));
                    break;
                }
                case "--rounds": rounds = Integer.parseInt(args[++i]); break;
                case "--iters": iters = Integer.parseInt(args[++i]); break;
                default:
                    System.err.println("usage: BufBench [--ranks 1,2] [--sizes 64,1k,16k,256k,4m] [--rounds N] [--iters N]");
                    System.exit(2);
            }
        }
        if (rounds < 1 || iters < 1) {
            System.err.println("BufBench: --rounds and --iters must be at least 1");
            System.exit(2);
        }
        // Warm-up: every path compiled before the first figure.
        for (String path : PATHS) {
            Nbcx.arrayCopy(path.equals("direct") ? "auto" : path);
            run(Math.min(2, ranks.get(0)), 1024, path, 1, Math.min(iters, 100));
            run(Math.min(2, ranks.get(0)), 65536, path, 1, Math.min(iters, 20));
        }
        System.out.printf("# ialltoall of long blocks on thread ranks, us per operation (median of %d x %d)%n", rounds, iters);
        System.out.printf("%5s %9s %10s %10s %10s %10s%n", "ranks", "bytes", "critical", "region", "auto", "direct");
        for (int p : ranks)
            for (long b : sizes) {
                double[] v = new double[PATHS.length];
                for (int k = 0; k < PATHS.length; k++) {
                    Nbcx.arrayCopy(PATHS[k].equals("direct") ? "auto" : PATHS[k]);
                    int it = (int) Math.max(5, Math.min(iters, iters * 16384L / Math.max(b, 16384L)));
                    v[k] = run(p, b, PATHS[k], rounds, it);
                }
                Nbcx.arrayCopy("auto");
                System.out.printf(Locale.ROOT, "%5d %9d %10.2f %10.2f %10.2f %10.2f%n", p, b, v[0], v[1], v[2], v[3]);
            }
    }
}
