package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The suite's workloads in a loop in one JVM: resident memory must stay
 * flat. -Dnbcx.leak.iterations=N (the pom's default is a quick 5; the
 * issue's check is 100).
 */
class LeakTest {
    static long rssKiB() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status")))
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        return -1;
    }

    static void once() {
        for (String op : Workloads.OPS) for (int n : new int[] {1, 2, 3, 4, 8}) Workloads.run(op, n);
        for (int n : new int[] {1, 2, 3, 4, 8}) PersistentTest.Workloads_persistent(n);
        new FutureTest().futuresComplete(4);
    }

    @Test
    void rssStaysFlat() throws Exception {
        int iterations = Integer.getInteger("nbcx.leak.iterations", 5);
        // Warm-up: JIT, thread stacks, nbcx's pools and the GC's heap settle.
        once();
        once();
        System.gc();
        long before = rssKiB();
        long t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            once();
            if (i % 10 == 9) System.gc();
        }
        System.gc();
        long after = rssKiB();
        System.out.printf("leak check: %d iterations in %.1f s, RSS %d KiB -> %d KiB (%+d KiB)%n", iterations,
                (System.nanoTime() - t0) / 1e9, before, after, after - before);
        // Flat: a leak of even one small block per operation would grow by
        // megabytes over the ~2,000 operations of each iteration.
        long allowed = 16 * 1024 + 64L * iterations;
        assertTrue(after - before < allowed,
                "RSS grew by " + (after - before) + " KiB over " + iterations + " iterations");
    }
}
