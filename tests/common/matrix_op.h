/* matrix_op.h - the non-commutative operation of the unit tests: 2x2
 * matrices modulo 251, one byte per entry, packed in a uint32. */
#ifndef NBCX_TEST_MATRIX_OP_H
#define NBCX_TEST_MATRIX_OP_H

#include <stdint.h>

static inline uint32_t mat_mul(uint32_t x, uint32_t y)
{
    unsigned a[4], b[4], r[4];
    for (int k = 0; k < 4; k++) {
        a[k] = (x >> (8 * k)) & 0xff;
        b[k] = (y >> (8 * k)) & 0xff;
    }
    r[0] = (a[0] * b[0] + a[1] * b[2]) % 251;
    r[1] = (a[0] * b[1] + a[1] * b[3]) % 251;
    r[2] = (a[2] * b[0] + a[3] * b[2]) % 251;
    r[3] = (a[2] * b[1] + a[3] * b[3]) % 251;
    return r[0] | r[1] << 8 | r[2] << 16 | (uint32_t)r[3] << 24;
}

/* inout[i] = in[i] * inout[i], as an nbcx user operation would. */
static inline void mat_mul_into(const void *in, void *inout, int count)
{
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < count; i++)
        b[i] = mat_mul(a[i], b[i]);
}

#endif
