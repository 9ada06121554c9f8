/*
 * words.h - self-describing data words, sentinels and a hash, shared by
 * the unit (loopback) and in-process tests.
 *
 * Every word of data names its origin: word(salt, src, blk, i) is word i
 * of block blk sent by rank src in the case with this salt (the salt
 * changes with every case, so data left over from another case is
 * recognised too). Ranks and blocks have 6 bits each (worlds of up to 64
 * ranks), the index 15 and the salt 5. Memory that must never be written
 * starts as SENTINEL.
 */
#ifndef NBCX_TEST_WORDS_H
#define NBCX_TEST_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Word i of block blk of rank src in case salt. */
static inline uint32_t word(int salt, int src, int blk, int i)
{
    return (uint32_t)(salt & 31) << 27 | (uint32_t)src << 21 |
           (uint32_t)blk << 15 | (uint32_t)(i & 0x7fff);
}

static const uint32_t SENTINEL = 0xdeadbeefu;

/* malloc that never returns NULL (exits with status 2), not even for 0
 * bytes. */
static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* n words, every one the sentinel. */
static inline uint32_t *words(size_t n)
{
    uint32_t *p = xmalloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = SENTINEL;
    return p;
}

static inline uint32_t *copy_words(const uint32_t *src, size_t n)
{
    uint32_t *p = words(n);
    memcpy(p, src, n * sizeof *p);
    return p;
}

/* What word w says of itself, for messages. */
static inline void describe_word(char *out, size_t len, uint32_t w)
{
    if (w == SENTINEL)
        snprintf(out, len, "the sentinel (never written)");
    else
        snprintf(out, len, "0x%08x = word %u of block %u from rank %u, "
                 "salt %u", w, w & 0x7fff, (w >> 15) & 63, (w >> 21) & 63,
                 w >> 27);
}

/* A hash of three numbers: the pseudo-random sizes, degrees and values
 * of the cases. */
static inline uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^
                 (c + 0x165667b1u) * 0xc2b2ae35u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    return h ^ (h >> 13);
}

#endif /* NBCX_TEST_WORDS_H */
