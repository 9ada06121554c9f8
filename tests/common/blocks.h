/*
 * blocks.h - blocks of self-describing words (words.h) in a rank's own
 * typed layout, for the tests of the data-moving collectives.
 *
 * A rank sends or receives a block as `count` elements of `type`;
 * element e holds data words dpe * e + k at memory word w * e + off[k]
 * (the other words of the element are gaps or padding, never written).
 */
#ifndef NBCX_TEST_BLOCKS_H
#define NBCX_TEST_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "nbcx.h"
#include "words.h"

struct tsel {
    nbcx_datatype type;
    int count;
    int w, dpe, off[3];
};

static const struct tsel SEL_INT32 = { NBCX_INT32, 0, 1, 1, { 0 } };
static const struct tsel SEL_INT64 = { NBCX_INT64, 0, 2, 2, { 0, 1 } };

/* Words of memory per block in t's layout. */
static inline size_t mem_words(struct tsel t)
{
    return (size_t)t.count * (size_t)t.w;
}

/* Data word j of block blk lives here. */
static inline uint32_t *at(uint32_t *buf, struct tsel t, size_t blk,
                           size_t j)
{
    return buf + blk * mem_words(t) + (j / (size_t)t.dpe) * (size_t)t.w +
           (size_t)t.off[j % (size_t)t.dpe];
}

/* Writes bw words from (src, sblk) of case salt into block blk of buf
 * (t's layout). */
static inline void put_block(uint32_t *buf, struct tsel t, size_t blk,
                             int salt, int src, int sblk, size_t bw)
{
    for (size_t j = 0; j < bw; j++)
        *at(buf, t, blk, j) = word(salt, src, sblk, (int)j);
}

#endif /* NBCX_TEST_BLOCKS_H */
