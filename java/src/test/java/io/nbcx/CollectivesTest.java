package io.nbcx;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every collective on 1, 2, 3, 4 and 8 thread ranks against a sequential reference. */
class CollectivesTest {
    static Stream<Arguments> cases() {
        return Stream.of(Workloads.OPS)
                .flatMap(op -> Stream.of(1, 2, 3, 4, 8).map(n -> Arguments.of(op, n)));
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("cases")
    void collective(String op, int n) {
        Workloads.run(op, n);
    }
}
