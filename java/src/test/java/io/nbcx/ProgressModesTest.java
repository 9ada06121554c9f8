package io.nbcx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The collectives and futures in every progress mode. In caller mode
 * nothing moves unless someone calls nbcx: the binding's driver thread does
 * while futures are pending (in the other modes nbcx's progress thread
 * completes them, through the completion callback).
 */
class ProgressModesTest {
    private Progress before;

    @AfterEach
    void restore() {
        if (before != null) Nbcx.progress(before);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Progress.class)
    void everyMode(Progress mode) {
        before = Nbcx.progress();
        Nbcx.progress(mode);
        assertEquals(mode, Nbcx.progress());
        for (int n : new int[] {1, 3, 4}) {
            for (String op : new String[] {"bcast", "reduce", "allreduce_userop", "gatherv", "scatter",
                    "alltoall", "exscan", "reduce_scatter"})
                Workloads.run(op, n);
            Nbcx.threads(n, FutureTest::futuresBody);
            Nbcx.threads(n, ComposeTest::chainBody);
            Nbcx.threads(n, PersistentTest::persistentBody);
            Nbcx.threads(n, ScheduleTest::callNodes);
        }
    }
}
