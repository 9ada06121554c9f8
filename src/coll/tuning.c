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
 * A rule may carry a column more, the ranks per node, after the ranks
 * (nbcx-tune/2 writes it when it tunes several node sizes):
 *
 *     # nbcx-tune/2
 *     # coll       ranks   rpn     bytes           algorithm   segsize
 *     reduce       32-127  6-23    0-11585         hier        0
 *
 * rpn is the communicator's ranks per node, ceil(ranks / nodes), where
 * its transport knows the nodes; where it does not, only "*" matches.
 * ranks, rpn and bytes are an inclusive range "lo-hi", a single value, or "*"
 * (any; "lo-*": lo and up). bytes is the size the automatic choice looks
 * at: the whole buffer for bcast and the reductions, one block for the
 * gathers, scatters, alltoalls and reduce_scatter_block, the average
 * block (the vector over the ranks) for reduce_scatter (rule_bytes in
 * select.c; nbcx-sim's and nbcx-tune's size of each). segsize
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
 * line number and what was not understood (the field and its text, or
 * the unknown name and the known ones), which is also the error detail
 * (nbcx_error_detail) of the thread that read the file, and every
 * collective call then fails with NBCX_ERR_ALGORITHM: a tuning the user
 * asked for is never silently ignored.
 *
 * Behind the user's table stands the built-in one, tuning_builtin.inc:
 * the same format, written by tools/sim/gen-builtin-tuning (nbcx-tune on
 * the reference machine of tools/sim/params/default.json, several node
 * sizes) and committed. Its rules name ranks per node, so calls on a
 * transport that does not know the nodes keep select.c's thresholds; so
 * do calls on fewer than BUILTIN_ONE_NODE_FROM (16) ranks on one node,
 * whose thresholds were measured on real runs there: below 16 ranks the
 * table serves only communicators on more than one node (ranks per node
 * below the ranks). NBCX_TUNING_BUILTIN=0 turns it off.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll.h"

struct rule {
    int coll;
    int plo, phi;
    int rlo, rhi;    /* ranks per node; 0-INT_MAX: any, known or not */
    size_t blo, bhi;
    const char *alg; /* the registered entry's name; NULL: a split rule */
    size_t segsize;
    int split;       /* a split rule's S */
};

struct table {
    struct rule *rules;
    int n;
};

/* Below this many ranks the built-in table serves only communicators on
 * more than one node (tools/sim/gen-builtin-tuning: RANKS_FROM, SMALL). */
enum { BUILTIN_ONE_NODE_FROM = 16 };

static struct table user;     /* NBCX_TUNING's */
static struct table builtin;  /* tuning_builtin.inc's */
static char source[256];

static const char *const builtin_lines[] = {
#include "tuning_builtin.inc"
    NULL
};

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

/* The name a rule keeps: the entry's, or "knomialK" (its radix). */
static const char *find_alg(int coll, const char *name)
{
    int radix;
    const struct nbcxi_algorithm *a = nbcxi_coll_find(coll, name, &radix);
    return !a ? NULL : radix ? nbcxi_knomial_name(radix) : a->name;
}

/* One line into r; true, or false with what is wrong with it in why:
 * the field, the text that did not parse, and what it should be. */
static bool parse_line(char *line, struct rule *r, char *why, size_t len)
{
    char *f[6], *save = NULL, have[400];
    int n = 0;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == 6) {
            snprintf(why, len, "more than 6 fields (\"%s\" is the 7th)", tok);
            return false;
        }
        f[n++] = tok;
    }
    unsigned long long lo, hi, seg;
    bool split = n > 0 && strcasecmp(f[0], "split") == 0;
    r->rlo = 0;
    r->rhi = INT_MAX;
    if (n == 6 && !split) { /* coll ranks rpn bytes algorithm segsize */
        if (!parse_range(f[2], INT_MAX, &lo, &hi) || hi < 1) {
            snprintf(why, len, "bad ranks-per-node range \"%s\" (lo-hi, a "
                     "number, or *)", f[2]);
            return false;
        }
        r->rlo = (int)lo;
        r->rhi = (int)hi;
        for (int i = 2; i < 5; i++)
            f[i] = f[i + 1];
        n = 5;
    }
    if (n != 5) {
        snprintf(why, len, "%d field%s, expected 5 or 6: coll ranks [rpn] "
                 "bytes algorithm segsize (or split coll ranks bytes S)", n,
                 n == 1 ? "" : "s");
        return false;
    }
    if (split) { /* split COLL RANKS BYTES S: f[0..3] as a rule's */
        if (!parse_range(f[4], 127, &seg, &hi) || seg != hi) {
            snprintf(why, len, "bad split levels S \"%s\" (a number from 0 "
                     "to 127)", f[4]);
            return false;
        }
        r->split = (int)seg;
        r->alg = NULL;
        r->segsize = 0;
        for (int i = 0; i < 4; i++)
            f[i] = f[i + 1];
    }
    if ((r->coll = nbcxi_coll_by_name(f[0])) < 0) {
        snprintf(why, len, "unknown collective \"%s\" (have: %s)", f[0],
                 nbcxi_coll_names(-1, have, sizeof have));
        return false;
    }
    if (!parse_range(f[1], INT_MAX, &lo, &hi) || hi < 1) {
        snprintf(why, len, "bad ranks range \"%s\" (lo-hi, a number, or *)",
                 f[1]);
        return false;
    }
    r->plo = (int)lo;
    r->phi = (int)hi;
    if (!parse_range(f[2], SIZE_MAX, &lo, &hi)) {
        snprintf(why, len, "bad bytes range \"%s\" (lo-hi, a number, or *)",
                 f[2]);
        return false;
    }
    r->blo = (size_t)lo;
    r->bhi = (size_t)hi;
    if (split)
        return true;
    r->split = -1;
    if (!(r->alg = find_alg(r->coll, f[3]))) {
        nbcxi_coll_names(r->coll, have, sizeof have);
        snprintf(why, len, "unknown algorithm \"%s\" for %s (have: %s%s)",
                 f[3], nbcxi_coll_name(r->coll), have,
                 strstr(have, "knomial") ? "; knomialK: radix K = 2..8" : "");
        return false;
    }
    if (!parse_range(f[4], SIZE_MAX, &seg, &hi) || seg != hi) {
        snprintf(why, len, "bad segsize \"%s\" (bytes, 0: default)", f[4]);
        return false;
    }
    r->segsize = (size_t)seg;
    return true;
}

/* Parses one line (comments and blanks skipped) onto t: true, or false
 * with what is wrong with it in why (*nomem: out of memory). */
static bool add_line(struct table *t, int *cap, char *line, char *why,
                     size_t len, bool *nomem)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    if (strspn(line, " \t\r\n") == strlen(line))
        return true;
    if (t->n == *cap) {
        int more_cap = *cap ? 2 * *cap : 32;
        struct rule *more = realloc(t->rules,
                                    (size_t)more_cap * sizeof *more);
        if (!more) {
            *nomem = true;
            snprintf(why, len, "out of memory");
            return false;
        }
        t->rules = more;
        *cap = more_cap;
    }
    if (!parse_line(line, &t->rules[t->n], why, len))
        return false;
    t->n++;
    return true;
}

/* A bad NBCX_TUNING: on stderr, and this thread's error detail
 * (nbcx_error_detail) for the call that read it. */
static int refuse(int err, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "nbcx: %s\n", msg);
    return nbcxi_error(err, "%s", msg);
}

int nbcxi_tuning_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return refuse(NBCX_ERR_ALGORITHM, "NBCX_TUNING=%s: %s", path,
                      strerror(errno));
    struct table t = { 0 };
    int cap = 0, lineno = 0, err = NBCX_SUCCESS;
    char line[512], why[768];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            err = refuse(NBCX_ERR_ALGORITHM, "NBCX_TUNING=%s:%d: line too "
                         "long (over %zu bytes)", path, lineno,
                         sizeof line - 2);
            break;
        }
        bool nomem = false;
        if (!add_line(&t, &cap, line, why, sizeof why, &nomem)) {
            err = refuse(nomem ? NBCX_ERR_NOMEM : NBCX_ERR_ALGORITHM,
                         "NBCX_TUNING=%s:%d: %s", path, lineno, why);
            break;
        }
    }
    if (!err && ferror(f))
        err = refuse(NBCX_ERR_ALGORITHM, "NBCX_TUNING=%s: read error", path);
    fclose(f);
    if (err) {
        free(t.rules);
        return err;
    }
    user = t;
    snprintf(source, sizeof source, "%s", path);
    return NBCX_SUCCESS;
}

int nbcxi_tuning_load_builtin(void)
{
    struct table t = { 0 };
    int cap = 0;
    for (size_t i = 0; builtin_lines[i]; i++) {
        char line[512], why[768];
        bool nomem = false;
        snprintf(line, sizeof line, "%s", builtin_lines[i]);
        if (!add_line(&t, &cap, line, why, sizeof why, &nomem)) { /* a bug of the generated table: tests catch it */
            fprintf(stderr, "nbcx: built-in tuning table, line %zu: %s\n",
                    i + 1, why);
            free(t.rules);
            return nomem ? NBCX_ERR_NOMEM : NBCX_ERR_INTERN;
        }
    }
    builtin = t;
    return NBCX_SUCCESS;
}

static const struct rule *match(const struct table *t, bool split, int coll,
                                int p, int rpn, size_t bytes)
{
    for (int i = 0; i < t->n; i++) {
        const struct rule *r = &t->rules[i];
        if ((r->alg == NULL) == split && r->coll == coll && p >= r->plo &&
            p <= r->phi && rpn >= r->rlo && rpn <= r->rhi &&
            bytes >= r->blo && bytes <= r->bhi)
            return r;
    }
    return NULL;
}

const char *nbcxi_tuning_choose(int coll, int p, int rpn, size_t bytes,
                                size_t *segsize)
{
    const struct rule *r = match(&user, false, coll, p, rpn, bytes);
    /* rpn < p: more than one node (rpn is ceil(p / nodes); 0: unknown) */
    if (!r && (p >= BUILTIN_ONE_NODE_FROM || (rpn > 0 && rpn < p)))
        r = match(&builtin, false, coll, p, rpn, bytes);
    if (r && r->segsize)
        *segsize = r->segsize;
    return r ? r->alg : NULL;
}

int nbcxi_tuning_split(int coll, int p, size_t bytes)
{
    const struct rule *r = match(&user, true, coll, p, 0, bytes);
    return r ? r->split : -1;
}

int nbcxi_tuning_describe(char *buf, size_t len)
{
    int n = 0;
    if (source[0])
        n = snprintf(buf, len, " tuning=%s(%d rules)", source, user.n);
    if (n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " tuning_builtin=%d rules",
                      builtin.n);
    return n;
}
