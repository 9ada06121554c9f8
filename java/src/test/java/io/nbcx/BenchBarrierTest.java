package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's barrier (java/bench/NbcxBench.java, {@code Barrier}) must
 * wake every waiting rank itself when the last one arrives, as the C
 * benchmark's pthread_barrier does: a barrier whose waiters are released one
 * by the other (java.util.concurrent.CyclicBarrier) makes the last rank start
 * n-1 thread wake-ups after the first, which is what made Java's 4-rank small
 * sizes 2-2.8x C's (docs/results/java/s23). Checked without timing: one
 * released waiter is kept from running (suspended), and the other must still
 * leave. With CyclicBarrier it stays parked behind the suspended one (checked
 * by putting CyclicBarrier in; {@link #cyclicBarrierChainsItsWaiters} keeps
 * that evidence). Since session 26 the benchmark's barrier is nbcx-bench's
 * own, glibc's pthread_barrier ({@link ThreadBarrier}; docs/results/java/s26).
 * Also compiles the benchmark, so it cannot rot unseen.
 */
class BenchBarrierTest {
    static Constructor<?> make;
    static Method await;

    @BeforeAll
    static void compileBench() throws Exception {
        Path src = Paths.get("bench", "NbcxBench.java");
        Assumptions.assumeTrue(Files.exists(src), "run from java/ (Maven's basedir)");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Assumptions.assumeTrue(javac != null, "no system Java compiler (a JRE)");
        Path out = Files.createTempDirectory("nbcxbench");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String cp = Paths.get("target", "classes").toString();
        int rc = javac.run(null, null, err, "-cp", cp, "-d", out.toString(), src.toString());
        assertEquals(0, rc, "javac bench/NbcxBench.java: " + err);
        URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()},
                BenchBarrierTest.class.getClassLoader());
        Class<?> barrier = Class.forName("NbcxBench$Barrier", true, loader);
        make = barrier.getDeclaredConstructor(int.class);
        make.setAccessible(true);
        await = barrier.getDeclaredMethod("await");
        await.setAccessible(true);
    }

    interface Bar {
        void await() throws Exception;
    }

    static Bar bench(int n) throws Exception {
        Object b = make.newInstance(n);
        return () -> await.invoke(b);
    }

    /**
     * Waiting in the barrier: parked (a Java barrier), or in the native
     * pthread_barrier_wait of io.nbcx.ThreadBarrier (the benchmark's since
     * session 26), where the thread is RUNNABLE in a native method.
     */
    static boolean parked(Thread t) {
        Thread.State s = t.getState();
        if (s == Thread.State.WAITING) return true;
        if (s != Thread.State.RUNNABLE) return false;
        StackTraceElement[] st = t.getStackTrace();
        return st.length > 0 && st[0].isNativeMethod() && st[0].getMethodName().equals("barrierWait");
    }

    static void waitParked(Thread t) throws InterruptedException {
        for (int i = 0; i < 200_000 && !parked(t); i++) Thread.sleep(0, 50_000);
        assertTrue(parked(t), t.getName() + " waiting in the barrier (state " + t.getState() + ")");
    }

    /**
     * Three parties: A arrives and parks, then B, then is A suspended, and
     * this thread arrives last. Returns whether B left the barrier while A
     * could not run (A is resumed afterwards either way).
     */
    @SuppressWarnings("removal")
    static boolean secondLeavesWhileFirstCannotRun(Bar bar, int seconds) throws Exception {
        CountDownLatch bLeft = new CountDownLatch(1);
        Thread a = new Thread(() -> {
            try {
                bar.await();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "A");
        Thread b = new Thread(() -> {
            try {
                bar.await();
                bLeft.countDown();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "B");
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        waitParked(a);
        b.start();
        waitParked(b);
        try {
            a.suspend(); // (deprecated, and gone from JDK 20: then the test is skipped)
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("Thread.suspend is not supported by this JDK");
        }
        boolean left;
        try {
            bar.await(); // the last arrival releases the others
            left = bLeft.await(seconds, TimeUnit.SECONDS); // (not a timing: a stall, or not)
        } finally {
            a.resume();
        }
        a.join(10_000);
        b.join(10_000);
        return left;
    }

    @Test
    void lastArrivalWakesEveryWaiterItself() throws Exception {
        assertTrue(secondLeavesWhileFirstCannotRun(bench(3), 10),
                "B stayed in the benchmark's barrier while A, released before it, could not run: "
                        + "the waiters are woken one by the other, not all at once");
    }

    @Test
    void cyclicBarrierChainsItsWaiters() throws Exception {
        java.util.concurrent.CyclicBarrier cb = new java.util.concurrent.CyclicBarrier(3);
        // What the benchmark used before session 23, and why it no longer does.
        assertTrue(!secondLeavesWhileFirstCannotRun(cb::await, 2),
                "CyclicBarrier released B while A could not run: its waiters are not chained "
                        + "(then this test's premise, docs/results/java/s23, is wrong)");
    }

    @Test
    void threadBarrierNeedsAParty() {
        org.junit.jupiter.api.Assertions.assertThrows(NbcxException.class, () -> new ThreadBarrier(0));
        try (ThreadBarrier one = new ThreadBarrier(1)) {
            one.await(); // one party: never waits
            one.await();
            assertEquals(1, one.parties());
        }
    }

    @Test
    void manyRoundsManyThreads() throws Exception {
        // Every round every party leaves, and none leaves early: 8 threads,
        // 2,000 rounds, each checking that all 8 arrived in its round.
        int n = 8, rounds = 2000;
        Bar bar = bench(n);
        java.util.concurrent.atomic.AtomicIntegerArray count = new java.util.concurrent.atomic.AtomicIntegerArray(rounds);
        java.util.concurrent.atomic.AtomicInteger bad = new java.util.concurrent.atomic.AtomicInteger();
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            ts[i] = new Thread(() -> {
                try {
                    for (int k = 0; k < rounds; k++) {
                        count.incrementAndGet(k);
                        bar.await();
                        if (count.get(k) != n) bad.incrementAndGet();
                    }
                } catch (Exception e) {
                    bad.incrementAndGet();
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join(60_000);
        for (Thread t : ts) assertTrue(!t.isAlive(), "a thread is stuck in the barrier");
        assertEquals(0, bad.get(), "threads left a round before all had arrived");
    }
}
