/*
 * wordcheck.h - comparing buffers of self-describing words (words.h)
 * with the harness (harness.h): one thread at a time.
 */
#ifndef NBCX_TEST_WORDCHECK_H
#define NBCX_TEST_WORDCHECK_H

#include "harness.h"
#include "words.h"

/* Compares n words of rank's buffer with the expected ones (in memory
 * order, gaps included); reports the first difference and how many
 * words differ. One check either way. */
static inline bool same_words(const char *what, int rank,
                              const uint32_t *got, const uint32_t *want,
                              size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    if (bad == 0)
        return CHECK(true, "counted");
    char g[96], w[96];
    describe_word(g, sizeof g, got[first]);
    describe_word(w, sizeof w, want[first]);
    CHECK(bad == 0, "%s of rank %d: %zu of %zu words differ; first at word "
          "%zu: got %s, expected %s", what, rank, bad, n, first, g, w);
    return false;
}

#endif /* NBCX_TEST_WORDCHECK_H */
