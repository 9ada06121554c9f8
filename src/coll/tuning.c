/* tuning.c - a selection table read from a file (NBCX_TUNING).
 *
 * nbcx-tune (tools/sim) writes one from simulations of this machine's
 * measured parameters; a user may write one by hand. The format is text,
 * one rule per line, '#' starts a comment:
 *
 *     # nbcx-tune/1
 *     # coll       ranks   bytes           algorithm   segsize
 *     bcast        2-8     0-131071        binomial    0
 *     allreduce    9-*     65536-*         ring        0
 *     alltoall     *       *               pairwise    0
 *
 * ranks and bytes are an inclusive range "lo-hi", a single value, or "*"
 * (any; "lo-*": lo and up). bytes is the size the automatic choice looks
 * at: the whole buffer for bcast and the reductions, one block for the
 * gathers, scatters and alltoalls (message_bytes in select.c). segsize
 * is the fragment size of pipelined algorithms in bytes, 0 to keep the
 * default (NBCX_SEGSIZE). The k-nomial trees take their radix from the
 * name: "knomial3" (K = 2..8; "knomial" is radix 4). The first rule
 * that matches a call names its algorithm; a call no rule matches, or
 * whose rule names an algorithm that cannot serve it (ring for a
 * non-commutative operation, say), gets the built-in choice. A forced algorithm (NBCX_<COLL>_ALG,
 * nbcx_algorithm_set) still wins over the table.
 *
 * A line starting with the word "split" is a rule for split progress
 * (progress/mode_split.c) instead: `split COLL RANKS BYTES S` gives the number
 * S of binomial-tree levels to run on the application for COLL on those
 * ranks and bytes (bytes as above), when NBCX_SPLIT_LEVELS does not force
 * one; nbcx-tune --split writes them from simulations of the split mode
 * (S = 0..H, the fastest). Calls no split rule matches keep the split
 * mode's analytic model.
 *
 *     split        bcast   2-48    0-*             1
 *
 * A file that cannot be read, or a line that does not parse or names an
 * unknown collective or algorithm, is reported once on stderr with its
 * line number, and every collective call then fails with
 * NBCX_ERR_ALGORITHM: a tuning the user asked for is never silently
 * ignored.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll.h"

struct rule {
    int coll;
    int plo, phi;
    size_t blo, bhi;
    const char *alg; /* the registered entry's name; NULL: a split rule */
    size_t segsize;
    int split;       /* a split rule's S */
};

static struct rule *rules;
static int nrules;
static char source[256];

/* "lo-hi", "v", "*", "lo-*" into [lo, hi]; false: not a range. */
static bool parse_range(const char *s, unsigned long long max,
                        unsigned long long *lo, unsigned long long *hi)
{
    if (strcmp(s, "*") == 0) {
        *lo = 0;
        *hi = max;
        return true;
    }
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    *lo = strtoull(s, &end, 10);
    if (errno || *lo > max)
        return false;
    if (*end == '\0') {
        *hi = *lo;
        return true;
    }
    if (*end != '-')
        return false;
    s = end + 1;
    if (strcmp(s, "*") == 0) {
        *hi = max;
        return true;
    }
    if (*s < '0' || *s > '9')
        return false;
    *hi = strtoull(s, &end, 10);
    return !errno && *end == '\0' && *hi <= max && *lo <= *hi;
}

static int find_coll(const char *name)
{
    for (int c = 0; c < NBCXI_NCOLL; c++)
        if (strcasecmp(name, nbcxi_coll_name(c)) == 0)
            return c;
    return -1;
}

/* The name a rule keeps: the entry's, or "knomialK" (its radix). */
static const char *find_alg(int coll, const char *name)
{
    int radix;
    const struct nbcxi_algorithm *a = nbcxi_coll_find(coll, name, &radix);
    return !a ? NULL : radix ? nbcxi_knomial_name(radix) : a->name;
}

/* One line into r; NULL, or what is wrong with it. */
static const char *parse_line(char *line, struct rule *r)
{
    char *f[5];
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok;
         tok = strtok(NULL, " \t\r\n")) {
        if (n == 5)
            return "more than 5 fields";
        f[n++] = tok;
    }
    if (n != 5)
        return "expected 5 fields: coll ranks bytes algorithm segsize "
               "(or split coll ranks bytes S)";
    unsigned long long lo, hi, seg;
    bool split = strcasecmp(f[0], "split") == 0;
    if (split) { /* split COLL RANKS BYTES S: f[0..3] as a rule's */
        if (!parse_range(f[4], 127, &seg, &hi) || seg != hi)
            return "bad split levels S (a number from 0 to 127)";
        r->split = (int)seg;
        r->alg = NULL;
        r->segsize = 0;
        for (int i = 0; i < 4; i++)
            f[i] = f[i + 1];
    }
    if ((r->coll = find_coll(f[0])) < 0)
        return "unknown collective";
    if (!parse_range(f[1], INT_MAX, &lo, &hi) || hi < 1)
        return "bad ranks range (lo-hi, a number, or *)";
    r->plo = (int)lo;
    r->phi = (int)hi;
    if (!parse_range(f[2], SIZE_MAX, &lo, &hi))
        return "bad bytes range (lo-hi, a number, or *)";
    r->blo = (size_t)lo;
    r->bhi = (size_t)hi;
    if (split)
        return NULL;
    r->split = -1;
    if (!(r->alg = find_alg(r->coll, f[3])))
        return "unknown algorithm for this collective";
    if (!parse_range(f[4], SIZE_MAX, &seg, &hi) || seg != hi)
        return "bad segsize (bytes, 0: default)";
    r->segsize = (size_t)seg;
    return NULL;
}

int nbcxi_tuning_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "nbcx: NBCX_TUNING=%s: %s\n", path, strerror(errno));
        return NBCX_ERR_ALGORITHM;
    }
    struct rule *list = NULL;
    int n = 0, cap = 0, lineno = 0, err = NBCX_SUCCESS;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "nbcx: NBCX_TUNING=%s:%d: line too long\n", path,
                    lineno);
            err = NBCX_ERR_ALGORITHM;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            struct rule *more = realloc(list, (size_t)cap * sizeof *list);
            if (!more) {
                err = NBCX_ERR_NOMEM;
                break;
            }
            list = more;
        }
        const char *why = parse_line(line, &list[n]);
        if (why) {
            fprintf(stderr, "nbcx: NBCX_TUNING=%s:%d: %s\n", path, lineno,
                    why);
            err = NBCX_ERR_ALGORITHM;
            break;
        }
        n++;
    }
    if (!err && ferror(f)) {
        fprintf(stderr, "nbcx: NBCX_TUNING=%s: read error\n", path);
        err = NBCX_ERR_ALGORITHM;
    }
    fclose(f);
    if (err) {
        free(list);
        return err;
    }
    rules = list;
    nrules = n;
    snprintf(source, sizeof source, "%s", path);
    return NBCX_SUCCESS;
}

const char *nbcxi_tuning_choose(int coll, int p, size_t bytes,
                                size_t *segsize)
{
    for (int i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (r->alg && r->coll == coll && p >= r->plo && p <= r->phi &&
            bytes >= r->blo && bytes <= r->bhi) {
            if (r->segsize)
                *segsize = r->segsize;
            return r->alg;
        }
    }
    return NULL;
}

int nbcxi_tuning_split(int coll, int p, size_t bytes)
{
    for (int i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (!r->alg && r->coll == coll && p >= r->plo && p <= r->phi &&
            bytes >= r->blo && bytes <= r->bhi)
            return r->split;
    }
    return -1;
}

int nbcxi_tuning_describe(char *buf, size_t len)
{
    if (!source[0])
        return 0;
    return snprintf(buf, len, " tuning=%s(%d rules)", source, nrules);
}
