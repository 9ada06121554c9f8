package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The suite's workloads in a loop in one JVM: resident memory must stay
 * flat. -Dnbcx.leak.iterations=N (the pom's default is a quick 20; the
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
        for (int n : new int[] {1, 2, 3, 4, 8}) PersistentTest.persistent(n);
        new FutureTest().futuresComplete(4);
    }

    @Test
    void rssStaysFlat() throws Exception {
        int iterations = Math.max(2, Integer.getInteger("nbcx.leak.iterations", 20));
        // Warm-up: JIT, thread stacks, nbcx's pools and malloc's arenas settle.
        for (int i = 0; i < 3; i++) once();
        System.gc();
        long before = rssKiB(), mid = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            once();
            if (i % 10 == 9) System.gc();
            if (i == iterations / 2 - 1) {
                System.gc();
                mid = rssKiB();
            }
        }
        System.gc();
        long after = rssKiB();
        System.out.printf("leak check: %d iterations in %.1f s, RSS %d KiB -> %d KiB (half-way) -> %d KiB%n",
                iterations, (System.nanoTime() - t0) / 1e9, before, mid, after);
        // Flat: a leak grows linearly, so the second half grows as much as the
        // first; a leak of one small block per operation would add megabytes
        // over the ~2,000 operations of each iteration. (The pom fixes the
        // Java heap, -Xms = -Xmx, and touches it at start, -XX:+AlwaysPreTouch,
        // so that its growth is not taken for a leak.)
        long allowed = 4 * 1024 + 16L * iterations;
        assertTrue(after - mid < allowed, "RSS grew by " + (after - mid) + " KiB over the last "
                + (iterations - iterations / 2) + " iterations (" + (after - before) + " KiB in all)");
    }
}
