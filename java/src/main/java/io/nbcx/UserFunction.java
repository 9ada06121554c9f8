package io.nbcx;

import java.nio.ByteBuffer;

/**
 * A user reduction: {@code inout[i] = in[i] op inout[i]} for {@code count}
 * elements of {@code type}, as MPI_User_function. {@code in} always holds
 * the contribution of the lower ranks. The buffers are views of nbcx's
 * memory in native byte order, valid only during the call; it may run on
 * nbcx's progress thread or on any rank's thread, several at once.
 */
@FunctionalInterface
public interface UserFunction {
    void apply(ByteBuffer in, ByteBuffer inout, int count, Datatype type);
}
