package io.nbcx;

/** The code every rank runs in {@link Nbcx#threads(int, RankBody)}. */
@FunctionalInterface
public interface RankBody {
    void run(Communicator comm) throws Exception;
}
