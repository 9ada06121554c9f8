/*
 * Paper 000's micro-benchmark (Ramos et al., FastMPJ, Fig. 6) in Java on
 * nbcx: bcast and scatter on thread ranks of this JVM, three variants,
 * the same as `nbcx-bench --transport inproc` measures in C:
 *
 *   block        start + await at once, caller progress (the calling thread
 *                runs the collective inside await: nbcx's blocking-style use)
 *   nbc          start + await at once, in the run's progress mode (NBCX_PROGRESS,
 *                default auto: the mode nbcx-bench's nbc runs in)
 *   nbc+overlap  start, a computation as long as nbc (with --tests K test
 *                calls in it), await; comm = the time inside start, test
 *                and await (the communication time the paper plots)
 *
 * Each figure is the maximum over ranks of one repetition; the table shows
 * the median over repetitions; block and nbc alternate within each
 * repetition (the mode switched around each block run), as in nbcx-bench.
 * Results are checked before timing. Every
 * timed run starts after the C benchmark's own barrier, a pthread_barrier
 * (io.nbcx.ThreadBarrier: Barrier below).
 *
 *   java -cp java/target/nbcx-0.1.0.jar -Dnbcx.jni=build/nompi/java/libnbcxjni.so \
 *        java/bench/NbcxBench.java [--ranks 2,4] [--op bcast,scatter]
 *        [--sizes 4k,64k,1m,16m | --min-size 4k --max-size 16m] [--reps N]
 *        [--budget SEC] [--tests K] [--arrays] [--jit-warmup N] [--json FILE]
 *
 * --arrays uses byte[] buffers (staged: copied to native memory and back)
 * instead of direct ByteBuffers (zero copy). java/bench/compare runs this
 * and the C nbcx-bench side by side and prints the ratio Java / C.
 */
import io.nbcx.Buf;
import io.nbcx.Communicator;
import io.nbcx.Datatype;
import io.nbcx.Nbcx;
import io.nbcx.NbcxException;
import io.nbcx.Progress;
import io.nbcx.Request;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

public class NbcxBench {
    static int[] ranksList = {2, 4};
    static String[] ops = {"bcast", "scatter"};
    static long[] sizes;
    static int fixedReps = 0, warmup = 2, tests = 0, jitWarmup = 20000;
    static double budget = 0.2;
    static boolean arrays = false;
    static String json = null;
    static Progress nbcMode = Progress.AUTO;

    public static void main(String[] args) throws Exception {
        long min = 4096, max = 16L << 20;
        String sizeList = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--ranks": ranksList = Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray(); i++; break;
                case "--op": ops = v.replace("i", "").split(","); i++; break;
                case "--sizes": sizeList = v; i++; break;
                case "--min-size": min = parseSize(v); i++; break;
                case "--max-size": max = parseSize(v); i++; break;
                case "--reps": fixedReps = Integer.parseInt(v); i++; break;
                case "--warmup": warmup = Integer.parseInt(v); i++; break;
                case "--budget": budget = Double.parseDouble(v); i++; break;
                case "--tests": tests = Integer.parseInt(v); i++; break;
                case "--jit-warmup": jitWarmup = Integer.parseInt(v); i++; break;
                case "--arrays": arrays = true; break;
                case "--json": json = v; i++; break;
                default:
                    System.err.println("usage: NbcxBench [--ranks 2,4] [--op bcast,scatter] [--sizes LIST | "
                            + "--min-size N --max-size N] [--reps N] [--warmup N] [--budget SEC] [--tests K] "
                            + "[--arrays] [--jit-warmup N] [--json FILE]");
                    System.exit(2);
            }
        }
        List<Long> sz = new ArrayList<>();
        if (sizeList != null) {
            for (String s : sizeList.split(",")) {
                long b = parseSize(s);
                if (b >= min && b <= max) sz.add(b);
            }
        } else {
            for (long b = Long.highestOneBit(Math.max(1, min)); b <= max; b *= 2) if (b >= min) sz.add(b);
        }
        sizes = sz.stream().mapToLong(Long::longValue).toArray();
        for (String op : ops)
            if (!op.equals("bcast") && !op.equals("scatter"))
                throw new IllegalArgumentException("--op: bcast and scatter only (paper 000), not " + op);

        Progress initial = Nbcx.progress();
        // nbc runs in the run's own mode, as nbcx-bench's does (NBCX_PROGRESS;
        // unset: auto); block in caller progress, as nbcx-bench's default
        // --block-progress caller.
        nbcMode = initial;
        // The JIT compiles the binding's Java path before anything is timed
        // (the C benchmark has nothing to warm up): small operations of each
        // kind in both progress modes, enough for C2 (tier 4 compiles a
        // method after some 5,000-15,000 calls; --jit-warmup 20000 makes
        // 10,000 of each kind per mode and rank count)...
        for (int r : ranksList) {
            for (Progress m : new Progress[] {Progress.CALLER, nbcMode}) {
                Nbcx.progress(m);
                Nbcx.threads(r, comm -> {
                    Buf b = buffer(64), s = comm.rank() == 0 ? buffer(64 * comm.size()) : null;
                    for (int k = 0; k < jitWarmup / 2; k++) {
                        comm.ibcast(b, 0).await();
                        comm.iscatter(s, b, 0).await();
                    }
                });
            }
        }
        // ... and the benchmark's own path (measure: fill, check, the timed
        // loops), per operation at the smallest size and the fifth, untimed. With
        // 2,000 warm-up operations and no dry run (session 19) HotSpot's C2
        // compiled the binding's scatter-only methods (Communicator.convert,
        // atLeast, whole) and deoptimised and recompiled the benchmark's
        // check and await during the first timed iscatter sizes (4-32 KiB:
        // -XX:+PrintCompilation, docs/java.md): compiler threads took the
        // cores from the ranks there. C has nothing to compile.
        if (jitWarmup > 0 && sizes.length > 0) {
            int savedReps = fixedReps;
            fixedReps = 300; // (the timed loops and their barrier, to C2 too)
            long second = sizes[Math.min(sizes.length - 1, 4)]; // (fill's and check's loops, longer)
            for (int r : ranksList)
                for (String op : ops) {
                    measure(op, r, (int) sizes[0]);
                    if (second != sizes[0]) measure(op, r, (int) second);
                }
            fixedReps = savedReps;
        }
        Nbcx.progress(initial);
        List<String> results = new ArrayList<>();
        for (int r : ranksList) {
            System.out.printf("# nbcx Java bench (paper 000 Fig. 6): ranks %d, cores %d, %s buffers, %s, tests %d%n", r,
                    Runtime.getRuntime().availableProcessors(), arrays ? "byte[] (staged)" : "direct ByteBuffer",
                    fixedReps > 0 ? fixedReps + " repetitions" : "automatic repetitions (budget " + budget + " s)",
                    tests);
            System.out.println("# block: start + await in caller progress; nbc: start + await in "
                    + nbcMode.name().toLowerCase(Locale.ROOT) + " progress; "
                    + "nbc+overlap: start, computation, await; comm: time in start + test + await of nbc+overlap");
            for (String op : ops) {
                System.out.printf("# op i%s%n%-10s %12s %12s %10s %12s %12s %10s%n", op, "size", "t_block(us)",
                        "nbc(us)", "nbc/block", "ovrl(us)", "comm(us)", "comm/block");
                for (long size : sizes) {
                    Result res = measure(op, r, (int) size);
                    System.out.printf(Locale.ROOT, "%-10d %12.2f %12.2f %10.3f %12.2f %12.2f %10.3f%n", size,
                            res.block * 1e6, res.nbc * 1e6, res.nbc / res.block, res.ovrl * 1e6, res.comm * 1e6,
                            res.comm / res.block);
                    results.add(String.format(Locale.ROOT,
                            "{\"op\": \"i%s\", \"ranks\": %d, \"bytes\": %d, \"reps\": %d, \"t_block\": %.9g, "
                                    + "\"t_pure\": %.9g, \"t_ovrl\": %.9g, \"comm\": %.9g}",
                            op, r, size, res.reps, res.block, res.nbc, res.ovrl, res.comm));
                }
            }
        }
        Nbcx.progress(initial);
        if (json != null) {
            try (PrintWriter w = new PrintWriter(json, "UTF-8")) {
                w.printf("{\"tool\": \"nbcx-java-bench\", \"buffers\": \"%s\", \"tests\": %d, \"results\": [%n  %s%n]}%n",
                        arrays ? "array" : "direct", tests, String.join(",\n  ", results));
            }
        }
    }

    static long parseSize(String s) {
        s = s.trim().toLowerCase(Locale.ROOT);
        long m = 1;
        if (s.endsWith("k")) m = 1L << 10;
        else if (s.endsWith("m")) m = 1L << 20;
        else if (s.endsWith("g")) m = 1L << 30;
        if (m != 1) s = s.substring(0, s.length() - 1);
        return Long.parseLong(s) * m;
    }

    static final class Result {
        double block, nbc, ovrl, comm;
        int reps;
    }

    /** One operation at one size on r thread ranks. */
    static Result measure(String op, int r, int size) {
        Barrier barrier = new Barrier(r);
        int maxReps = fixedReps > 0 ? fixedReps : 100;
        double[][] tBlock = new double[r][maxReps], tNbc = new double[r][maxReps];
        double[][] tOvrl = new double[r][maxReps], tComm = new double[r][maxReps];
        double[] warm = new double[r];
        int[] reps = new int[1];
        double[] target = new double[1];
        Nbcx.threads(r, comm -> {
            int rank = comm.rank(), p = comm.size();
            boolean scatter = op.equals("scatter");
            boolean root = rank == 0;
            // Buffers: bcast moves `size` bytes; scatter `size` bytes to each rank.
            Buf send = null, recv;
            if (scatter) {
                if (root) send = buffer(size * p);
                recv = buffer(size);
            } else {
                recv = buffer(size);
            }
            Buf s = send, rb = recv;
            Op1 start = () -> scatter ? comm.iscatter(s, rb, 0) : comm.ibcast(rb, 0);
            double rate = calibrate();

            // Check the result once, in each mode.
            for (Progress m : new Progress[] {Progress.CALLER, nbcMode}) {
                setMode(barrier, rank, m);
                fill(send, recv, root, p, size, scatter, 1);
                start.go().await();
                check(recv, rank, size, scatter, 1);
            }

            // Warm-up in both modes; the slowest run sets the repetitions.
            double slowest = 0;
            for (Progress m : new Progress[] {Progress.CALLER, nbcMode}) {
                setMode(barrier, rank, m);
                for (int w = 0; w < warmup; w++) {
                    await(barrier);
                    long t0 = System.nanoTime();
                    start.go().await();
                    slowest = Math.max(slowest, (System.nanoTime() - t0) * 1e-9);
                }
            }
            warm[rank] = slowest;
            await(barrier);
            if (rank == 0) {
                double t = 0;
                for (double x : warm) t = Math.max(t, x);
                reps[0] = fixedReps > 0 ? fixedReps : (int) Math.max(5, Math.min(100, Math.ceil(budget / t)));
            }
            await(barrier);
            int n = reps[0];

            // block and nbc alternate within every repetition, in
            // nbcx-bench's order (harness.c series_pure and measure_block,
            // driver_inproc.c): a discarded block run, the timed block run,
            // each with the mode switched to caller around it and followed,
            // back in the nbc mode, by a discarded nbc run (that brings the
            // progress thread up again); then one more discarded nbc run
            // (settle_pure: what ran before leaves the buffers' cache lines
            // where it moved them) and the timed nbc run. Session 29 had
            // one block run and one discarded nbc run per repetition: the
            // timed nbc run came right after the progress thread's start,
            // where C's comes two runs later (docs/results/java/s31).
            boolean switching = nbcMode != Progress.CALLER;
            if (!switching) setMode(barrier, rank, Progress.CALLER);
            for (int k = 0; k < n; k++) {
                for (int b = 0; b < 2; b++) {
                    if (switching) setMode(barrier, rank, Progress.CALLER);
                    await(barrier);
                    long t0 = System.nanoTime();
                    start.go().await();
                    if (b == 1) tBlock[rank][k] = (System.nanoTime() - t0) * 1e-9;
                    if (switching) {
                        setMode(barrier, rank, nbcMode);
                        start.go().await(); // discarded
                    }
                }
                start.go().await(); // discarded (settle)
                await(barrier);
                long t0 = System.nanoTime();
                start.go().await();
                tNbc[rank][k] = (System.nanoTime() - t0) * 1e-9;
            }
            await(barrier);
            if (rank == 0) target[0] = medianOfMax(tNbc, n);
            await(barrier);
            long iters = (long) (rate * target[0]);
            for (int k = 0; k < n; k++) {
                start.go().await(); // discarded, as above
                await(barrier);
                long t0 = System.nanoTime();
                Request q = start.go();
                long inside = System.nanoTime() - t0;
                long chunk = iters / (tests + 1);
                for (int j = 0; j <= tests; j++) {
                    compute(chunk);
                    if (j < tests) {
                        long a = System.nanoTime();
                        q.test();
                        inside += System.nanoTime() - a;
                    }
                }
                long a = System.nanoTime();
                q.await();
                long end = System.nanoTime();
                inside += end - a;
                tOvrl[rank][k] = (end - t0) * 1e-9;
                tComm[rank][k] = inside * 1e-9;
            }
            // The result is still right after all the runs.
            fill(send, recv, root, p, size, scatter, 2);
            start.go().await();
            check(recv, rank, size, scatter, 2);
        });
        barrier.close();
        Result res = new Result();
        res.reps = reps[0];
        res.block = medianOfMax(tBlock, reps[0]);
        res.nbc = medianOfMax(tNbc, reps[0]);
        res.ovrl = medianOfMax(tOvrl, reps[0]);
        res.comm = medianOfMax(tComm, reps[0]);
        return res;
    }

    interface Op1 {
        Request go();
    }

    static Buf buffer(int bytes) {
        return arrays ? Buf.of(new byte[bytes]) : Buf.allocateDirect(Datatype.BYTE, bytes);
    }

    static byte expect(int rank, int i, int round) {
        return (byte) (i * 31 + rank * 7 + round);
    }

    static void put(Buf b, int i, byte v) {
        if (b.isDirect()) b.byteBuffer().put(i, v);
        else ((byte[]) b.array())[i] = v;
    }

    static byte get(Buf b, int i) {
        return b.isDirect() ? b.byteBuffer().get(i) : ((byte[]) b.array())[i];
    }

    static void fill(Buf send, Buf recv, boolean root, int p, int size, boolean scatter, int round) {
        for (int i = 0; i < size; i++) put(recv, i, (byte) 0);
        if (!root) return;
        if (scatter) {
            for (int q = 0; q < p; q++) for (int i = 0; i < size; i++) put(send, q * size + i, expect(q, i, round));
        } else {
            for (int i = 0; i < size; i++) put(recv, i, expect(0, i, round));
        }
    }

    static void check(Buf recv, int rank, int size, boolean scatter, int round) {
        for (int i = 0; i < size; i++) {
            byte want = expect(scatter ? rank : 0, i, round);
            if (get(recv, i) != want)
                throw new NbcxException(NbcxException.ERR_INTERN, "wrong result at rank " + rank + ", byte " + i);
        }
    }

    /** The progress mode is process-wide: rank 0 switches it while no operation is outstanding. */
    static void setMode(Barrier barrier, int rank, Progress m) {
        await(barrier);
        if (rank == 0) {
            for (int tries = 0;; tries++) {
                try {
                    Nbcx.progress(m);
                    break;
                } catch (NbcxException e) {
                    if (e.code() != NbcxException.ERR_REQUEST || tries > 100000) throw e;
                    try {
                        Thread.sleep(0, 100_000);
                    } catch (InterruptedException ie) {
                        throw new RuntimeException(ie);
                    }
                }
            }
        }
        await(barrier);
    }

    static void await(Barrier b) {
        b.await();
    }

    /**
     * The barrier before every timed run: nbcx-bench's own, glibc's
     * pthread_barrier_wait (io.nbcx.ThreadBarrier), where the last thread
     * to arrive wakes all the waiting ranks with one FUTEX_WAKE.
     *
     * Not java.util.concurrent.CyclicBarrier: its waiters leave one after
     * the other, each woken by the one released before it (signalAll moves
     * them to its lock's queue; each unparks the next as it unlocks), so the
     * last rank started n-1 thread wake-ups after the first, and the
     * others' times (each measured from its own start) included them: on an
     * idle 2-core VM Java's 4-rank times at 4-16 KiB were 2-2.8x C's
     * (docs/results/java/s23). Nor a barrier built on LockSupport.park and
     * unpark, which session 23 put here: the last arrival then wakes each
     * waiter with a system call of its own (Parker::unpark, a
     * pthread_cond_signal each), one after the other, and every woken waiter
     * makes one more before it can leave (glibc retakes the condition
     * variable's mutex marked as contended, so Parker's unlock enters the
     * kernel): a futex call after the first rank's start in 96 % of 2-rank
     * repetitions, none in C's; with 4 ranks an 8 KiB ibcast took some
     * 8 us longer behind it (docs/results/java/s26).
     */
    static final class Barrier implements AutoCloseable {
        private final io.nbcx.ThreadBarrier b;

        Barrier(int n) {
            b = new io.nbcx.ThreadBarrier(Math.max(1, n));
        }

        void await() {
            b.await();
        }

        @Override
        public void close() {
            b.close();
        }
    }

    static volatile double sink;

    /** The computation: a dependent floating-point chain (not vectorisable). */
    static void compute(long iters) {
        double x = 1.0;
        for (long i = 0; i < iters; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }

    /** Iterations of compute() per second on this thread (after JIT warm-up). */
    static double calibrate() {
        compute(2_000_000);
        long n = 1_000_000;
        for (;;) {
            long t0 = System.nanoTime();
            compute(n);
            double t = (System.nanoTime() - t0) * 1e-9;
            if (t > 0.01) return n / t;
            n *= 4;
        }
    }

    static double medianOfMax(double[][] t, int n) {
        double[] m = new double[n];
        for (int k = 0; k < n; k++) {
            double x = 0;
            for (double[] row : t) x = Math.max(x, row[k]);
            m[k] = x;
        }
        Arrays.sort(m);
        return n % 2 == 1 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2;
    }
}
