/*
 * io_scatter.c - paper 000's I/O-intensive application (Ramos et al.,
 * Section 4.3, Fig. 12-14) on nbcx, with ranks as threads
 * (nbcx_inproc_run): no MPI needed.
 *
 * Rank 0 reads text files line by line and packs the lines into a
 * buffer of one block per rank; a scatter hands every rank its block;
 * every rank, rank 0 included, processes the lines of its block with a
 * synthetic workload. Variants, timed in the same run:
 *   sequential    rank 0 reads and processes everything alone (the
 *                 other ranks wait): the reference result and time;
 *   blocking      Fig. 12: read a buffer, scatter (nbcx_iscatter +
 *                 nbcx_wait at once), process, again;
 *   iscatter xK   Fig. 13: up to K = MaxConcurrent iscatters in flight.
 *                 Rank 0 starts one as soon as a buffer is read and goes
 *                 on reading and processing its own block while the
 *                 others receive; it reuses a buffer only once that
 *                 buffer's iscatter is complete. The other ranks keep K
 *                 iscatters posted and process each block as its
 *                 iscatter completes, re-posting it at once.
 * The end of the input is a scatter of blocks flagged "final" (K of them
 * with K in flight, one per iscatter the others have posted: matched
 * operations, nothing left pending). The time is the wall time of the
 * parallel section, max over ranks (the reduction of the result after
 * it is not timed, as in the paper), median over --reps repetitions; the
 * gain is (t_blocking - t) / t_blocking.
 *
 * Every variant must produce the same result: the number of lines and
 * the sum of their hashes (a commutative sum, so it does not depend on
 * which rank processed which line) equal those of the sequential run.
 * The program exits with 1 when they do not.
 *
 * Lines are cut where a block is full (the rest starts the next block),
 * and longer than a block's payload never travel whole: every variant
 * packs with the same code, so all see the same line pieces.
 *
 *   io_scatter [--ranks N] [--corpus SIZE [--files F] | --dir DIR]
 *              [--block SIZE] [--work N] [--decode N]
 *              [--concurrent 4,8,16] [--reps R]
 *
 * The corpus is generated at run time (deterministic, SIZE bytes of
 * financial-market-like records in F files in a temporary directory,
 * removed at exit), or is every regular file under DIR (recursively,
 * in name order). --work N: N extra hashing rounds over each line (the
 * paper's "operations per line"); --decode N: N rounds of work on each
 * line as rank 0 reads it, standing in for the paper's unzipping.
 * NBCX_PROGRESS selects nbcx's progress mode (default auto).
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nbcx.h"

#define MAX_VARIANTS 10
#define HEADER 8 /* bytes: uint32 payload length, uint32 flags */
#define FLAG_FINAL 1u
#define FLAG_ERROR 2u

/* ---- configuration -------------------------------------------------- */

struct config {
    int ranks;
    size_t corpus; /* bytes to generate (0 with --dir)             */
    int files;
    const char *dir;
    size_t block;  /* bytes per rank per scatter, header included  */
    int work;
    int decode;
    int conc[MAX_VARIANTS]; /* MaxConcurrent of each iscatter variant */
    int nconc;
    int reps;
};

static void usage(FILE *f)
{
    fputs("usage: io_scatter [--ranks N]\n"
          "                  [--corpus SIZE [--files F] | --dir DIR]\n"
          "                  [--block SIZE] [--work N] [--decode N]\n"
          "                  [--concurrent K1,K2,...] [--reps R]\n"
          "  --ranks N         thread ranks (default 4)\n"
          "  --corpus SIZE     generate SIZE bytes of text (k, m, g suffixes;\n"
          "                    default 32m) in F files (--files, default 8)\n"
          "  --dir DIR         read every regular file under DIR instead\n"
          "  --block SIZE      bytes each rank receives per scatter\n"
          "                    (default 64k)\n"
          "  --work N          hashing rounds per line and rank (default 4)\n"
          "  --decode N        rounds of work per line read by rank 0\n"
          "                    (default 0)\n"
          "  --concurrent LIST MaxConcurrent of the iscatter variants\n"
          "                    (default 4,8,16)\n"
          "  --reps R          repetitions, median reported (default 3)\n",
          f);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > ((unsigned long long)1 << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_list(const char *s, struct config *c)
{
    c->nconc = 0;
    while (*s) {
        char item[16];
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof item || c->nconc == MAX_VARIANTS - 2)
            return -1;
        memcpy(item, s, len);
        item[len] = '\0';
        if (parse_int(item, 1, 1024, &c->conc[c->nconc++]) < 0)
            return -1;
        s += len + (s[len] == ',');
    }
    return c->nconc > 0 ? 0 : -1;
}

/* Returns 0, 1 after --help, or -1 with a message printed. */
static int parse_args(int argc, char **argv, struct config *c)
{
    *c = (struct config){ .ranks = 4, .corpus = (size_t)32 << 20,
                          .files = 8, .block = (size_t)64 << 10,
                          .work = 4, .conc = { 4, 8, 16 }, .nconc = 3,
                          .reps = 3 };
    int have_corpus = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        static const char *const known[] = { "--ranks", "--corpus",
                                             "--files", "--dir", "--block",
                                             "--work", "--decode",
                                             "--concurrent", "--reps" };
        int is_known = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            is_known |= strcmp(a, known[k]) == 0;
        if (!is_known) {
            fprintf(stderr, "io_scatter: unknown option '%s' (see --help)\n",
                    a);
            return -1;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = !v;
        if (bad) {
            /* reported below */
        } else if (strcmp(a, "--ranks") == 0) {
            bad = parse_int(v, 1, 4096, &c->ranks);
        } else if (strcmp(a, "--corpus") == 0) {
            bad = parse_size(v, &c->corpus) || c->corpus == 0;
            have_corpus = 1;
        } else if (strcmp(a, "--files") == 0) {
            bad = parse_int(v, 1, 100000, &c->files);
        } else if (strcmp(a, "--dir") == 0) {
            c->dir = v;
        } else if (strcmp(a, "--block") == 0) {
            bad = parse_size(v, &c->block) || c->block < HEADER + 2 ||
                  c->block > (size_t)INT_MAX;
        } else if (strcmp(a, "--work") == 0) {
            bad = parse_int(v, 0, 1000000, &c->work);
        } else if (strcmp(a, "--decode") == 0) {
            bad = parse_int(v, 0, 1000000, &c->decode);
        } else if (strcmp(a, "--concurrent") == 0) {
            bad = parse_list(v, c);
        } else { /* --reps */
            bad = parse_int(v, 1, 1000, &c->reps);
        }
        if (bad) {
            fprintf(stderr, "io_scatter: bad or missing value for %s "
                            "(see --help)\n", a);
            return -1;
        }
        i++;
    }
    if (c->dir && have_corpus) {
        fputs("io_scatter: --corpus and --dir exclude each other\n", stderr);
        return -1;
    }
    if ((size_t)c->ranks * c->block > (size_t)INT_MAX) {
        fputs("io_scatter: --ranks times --block exceeds 2 GiB\n", stderr);
        return -1;
    }
    return 0;
}

/* ---- the input files ---------------------------------------------------- */

struct files {
    char **path;
    int n, cap;
    char tmpdir[PATH_MAX]; /* generated corpus: removed at exit */
};

static struct files *g_files; /* for nftw's callback */

static int add_file(const char *path, const struct stat *st, int type,
                    struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type != FTW_F)
        return 0;
    struct files *f = g_files;
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        char **p = realloc(f->path, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        f->path = p;
        f->cap = cap;
    }
    if (!(f->path[f->n] = strdup(path)))
        return -1;
    f->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A deterministic pseudo-random generator (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Writes `bytes` of records like those of the paper's market data: date,
 * time, instrument, kind, price, volume and a free-text remark. */
static int write_corpus_file(const char *path, size_t bytes, uint64_t seed)
{
    static const char *const inst[] = { "IBEX35", "MINI-IBEX", "BONO10",
                                        "SAN", "TEF", "BBVA", "ITX", "REP" };
    static const char *const kind[] = { "FUT", "OPC", "OPV", "SPOT" };
    static const char *const word[] = { "open", "close", "bid", "ask",
                                        "cross", "auction", "cancel",
                                        "amend", "settle", "expiry" };
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    uint64_t s = seed | 1;
    size_t written = 0;
    while (written < bytes) {
        char line[512];
        int n = snprintf(line, sizeof line,
                         "2012-%02d-%02d %02d:%02d:%02d;%s;%s;%" PRIu64
                         ".%02d;%d;",
                         (int)(rnd(&s) % 12) + 1, (int)(rnd(&s) % 28) + 1,
                         (int)(rnd(&s) % 9) + 9, (int)(rnd(&s) % 60),
                         (int)(rnd(&s) % 60), inst[rnd(&s) % 8],
                         kind[rnd(&s) % 4], 5000 + rnd(&s) % 5000,
                         (int)(rnd(&s) % 100), (int)(rnd(&s) % 500) + 1);
        int words = (int)(rnd(&s) % 24);
        for (int w = 0; w < words && n < (int)sizeof line - 16; w++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %s",
                          word[rnd(&s) % 10]);
        line[n++] = '\n';
        if (written + (size_t)n > bytes)
            n = (int)(bytes - written);
        if (fwrite(line, 1, (size_t)n, f) != (size_t)n)
            break;
        written += (size_t)n;
    }
    return fclose(f) == 0 && written == bytes ? 0 : -1;
}

static void remove_corpus(struct files *f)
{
    for (int i = 0; i < f->n; i++)
        if (f->tmpdir[0])
            remove(f->path[i]);
    if (f->tmpdir[0])
        rmdir(f->tmpdir);
    for (int i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
}

static int make_files(const struct config *c, struct files *f)
{
    memset(f, 0, sizeof *f);
    g_files = f;
    if (c->dir) {
        if (nftw(c->dir, add_file, 32, FTW_PHYS) != 0) {
            fprintf(stderr, "io_scatter: cannot read %s: %s\n", c->dir,
                    strerror(errno));
            return -1;
        }
        if (f->n == 0) {
            fprintf(stderr, "io_scatter: no files under %s\n", c->dir);
            return -1;
        }
        qsort(f->path, (size_t)f->n, sizeof *f->path, cmp_str);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(f->tmpdir, sizeof f->tmpdir, "%s/io_scatter.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->tmpdir)) {
        fprintf(stderr, "io_scatter: cannot make a directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        f->tmpdir[0] = '\0';
        return -1;
    }
    for (int i = 0; i < c->files; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/part-%04d.txt", f->tmpdir, i);
        size_t bytes = c->corpus / (size_t)c->files +
                       ((size_t)i < c->corpus % (size_t)c->files);
        uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        if (add_file(path, NULL, FTW_F, NULL) != 0 ||
            write_corpus_file(path, bytes, seed) != 0) {
            fprintf(stderr, "io_scatter: cannot write %s\n", path);
            return -1;
        }
    }
    return 0;
}

/* ---- reading and packing (rank 0) --------------------------------------- */

struct reader {
    const struct files *files;
    int next;   /* index of the next file to open */
    FILE *f;
    int decode;
    int error;
};

/* Reads bytes of the current line into dst, up to max or through '\n';
 * returns how many (0 at the end of all files). */
static size_t read_line(struct reader *r, char *dst, size_t max)
{
    for (;;) {
        if (!r->f) {
            if (r->next == r->files->n)
                return 0;
            const char *path = r->files->path[r->next++];
            if (!(r->f = fopen(path, "r"))) {
                fprintf(stderr, "io_scatter: cannot open %s: %s\n", path,
                        strerror(errno));
                r->error = 1;
                r->next = r->files->n;
                return 0;
            }
        }
        size_t n = 0;
        int ch = 0;
        while (n < max && (ch = getc_unlocked(r->f)) != EOF) {
            dst[n++] = (char)ch;
            if (ch == '\n')
                break;
        }
        if (ch == EOF) {
            if (ferror(r->f)) {
                fputs("io_scatter: read error\n", stderr);
                r->error = 1;
                r->next = r->files->n;
            }
            fclose(r->f);
            r->f = NULL;
        }
        if (n > 0)
            return n;
    }
}

static uint64_t hash_bytes(const char *p, size_t n, uint64_t h);

/* Fills the block of every rank with lines; returns the payload bytes
 * (0: the input is exhausted). */
static size_t pack(struct reader *r, char *buf, int ranks, size_t block)
{
    size_t total = 0;
    for (int k = 0; k < ranks; k++) {
        char *b = buf + (size_t)k * block;
        size_t len = 0, cap = block - HEADER;
        while (len < cap) {
            size_t n = read_line(r, b + HEADER + len, cap - len);
            if (n == 0)
                break;
            /* --decode: work on the line as it is read (the paper's
             * unzipping); its result is discarded. */
            volatile uint64_t sink = 0;
            for (int d = 0; d < r->decode; d++)
                sink += hash_bytes(b + HEADER + len, n, (uint64_t)d);
            len += n;
        }
        uint32_t hdr[2] = { (uint32_t)len, 0 };
        memcpy(b, hdr, sizeof hdr);
        total += len;
    }
    return total;
}

/* A block of every rank that says the input has ended. */
static void pack_final(char *buf, int ranks, size_t block, int error)
{
    uint32_t hdr[2] = { 0, FLAG_FINAL | (error ? FLAG_ERROR : 0) };
    for (int k = 0; k < ranks; k++)
        memcpy(buf + (size_t)k * block, hdr, sizeof hdr);
}

/* ---- processing (every rank) --------------------------------------------- */

struct result {
    uint64_t lines, sum;
};

/* FNV-1a over n bytes from h. */
static uint64_t hash_bytes(const char *p, size_t n, uint64_t h)
{
    h ^= 0xCBF29CE484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001B3ULL;
    return h;
}

/* The workload on one line: a hash, then `work` more rounds over the
 * line, each seeded by the last. */
static uint64_t process_line(const char *p, size_t n, int work)
{
    uint64_t h = hash_bytes(p, n, 0);
    for (int w = 0; w < work; w++)
        h = hash_bytes(p, n, h * 0x9E3779B97F4A7C15ULL + (uint64_t)w);
    return h;
}

/* Processes the lines of a block; returns its flags. */
static uint32_t process_block(const char *b, int work, struct result *res)
{
    uint32_t hdr[2];
    memcpy(hdr, b, sizeof hdr);
    const char *p = b + HEADER, *end = p + hdr[0];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        res->sum += process_line(p, (size_t)(stop - p), work);
        res->lines++;
        p = stop;
    }
    return hdr[1];
}

/* ---- the variants ------------------------------------------------------- */

struct shared {
    const struct config *cfg;
    const struct files *files;
    int nvariants;                 /* sequential, blocking, K...      */
    double *time;                  /* [variant * reps + rep], rank 0  */
    struct result *result;         /* [variant * reps + rep], rank 0  */
    int error;                     /* rank 0: reading failed          */
};

struct rank {
    const struct config *cfg;
    struct shared *sh;
    nbcx_comm comm;
    int rank, ranks;
    char **buf;         /* [maxK] rank 0: ranks * block; others: block */
    nbcx_request *req;  /* [maxK]                                      */
};

#define TRY(call)                                                         \
    do {                                                                  \
        int err_ = (call);                                                \
        if (err_ != NBCX_SUCCESS) {                                       \
            fprintf(stderr, "io_scatter: rank %d: %s: %s\n", me->rank,     \
                    #call, nbcx_error_string(err_));                      \
            return err_;                                                  \
        }                                                                 \
    } while (0)

static int scatter_start(struct rank *me, char *buf, nbcx_request *req)
{
    int block = (int)me->cfg->block;
    if (me->rank == 0)
        return nbcx_iscatter(buf, block, NBCX_BYTE, NBCX_IN_PLACE, block,
                             NBCX_BYTE, 0, me->comm, req);
    return nbcx_iscatter(NULL, 0, NBCX_BYTE, buf, block, NBCX_BYTE, 0,
                         me->comm, req);
}

static struct reader reader_open(const struct rank *me)
{
    return (struct reader){ .files = me->sh->files,
                            .decode = me->cfg->decode };
}

/* Rank 0 alone: read, process, no communication. */
static int run_sequential(struct rank *me, struct result *res)
{
    if (me->rank != 0)
        return NBCX_SUCCESS;
    struct reader r = reader_open(me);
    while (pack(&r, me->buf[0], me->ranks, me->cfg->block) > 0)
        for (int k = 0; k < me->ranks; k++)
            process_block(me->buf[0] + (size_t)k * me->cfg->block,
                          me->cfg->work, res);
    me->sh->error |= r.error;
    return NBCX_SUCCESS;
}

/* Fig. 12: read, scatter at once, process. */
static int run_blocking(struct rank *me, struct result *res)
{
    char *buf = me->buf[0];
    struct reader r = reader_open(me);
    for (;;) {
        if (me->rank == 0 && pack(&r, buf, me->ranks, me->cfg->block) == 0)
            pack_final(buf, me->ranks, me->cfg->block, r.error);
        nbcx_request req;
        TRY(scatter_start(me, buf, &req));
        TRY(nbcx_wait(&req));
        if (process_block(buf, me->cfg->work, res) & FLAG_FINAL)
            break;
    }
    if (me->rank == 0)
        me->sh->error |= r.error;
    return NBCX_SUCCESS;
}

/* Tests every outstanding request once (progress in caller mode). */
static int test_all(struct rank *me, int K)
{
    for (int i = 0; i < K; i++) {
        int flag;
        TRY(nbcx_test(&me->req[i], &flag));
    }
    return NBCX_SUCCESS;
}

/* Fig. 13, rank 0: an iscatter per buffer read, up to K in flight; its
 * own block is processed in place at once (the send buffer of a pending
 * iscatter may be read). A buffer is refilled only after its iscatter
 * completed. The end: K final blocks, one for each iscatter the other
 * ranks keep posted. */
static int root_concurrent(struct rank *me, int K, struct result *res)
{
    struct reader r = reader_open(me);
    int finals = 0;
    for (long j = 0; finals < K; j++) {
        int i = (int)(j % K);
        TRY(nbcx_wait(&me->req[i]));
        char *buf = me->buf[i];
        if (finals || pack(&r, buf, me->ranks, me->cfg->block) == 0) {
            pack_final(buf, me->ranks, me->cfg->block, r.error);
            finals++;
        }
        TRY(scatter_start(me, buf, &me->req[i]));
        process_block(buf, me->cfg->work, res);
        TRY(test_all(me, K));
    }
    TRY(nbcx_waitall(K, me->req));
    me->sh->error |= r.error;
    return NBCX_SUCCESS;
}

/* Fig. 13, the other ranks: K iscatters posted; each block is processed
 * as its iscatter completes (in order) and the iscatter posted again,
 * until a final block arrives; the ones still posted then receive the
 * root's remaining final blocks. */
static int other_concurrent(struct rank *me, int K, struct result *res)
{
    for (int i = 0; i < K; i++)
        TRY(scatter_start(me, me->buf[i], &me->req[i]));
    for (long j = 0;; j++) {
        int i = (int)(j % K);
        TRY(nbcx_wait(&me->req[i]));
        if (process_block(me->buf[i], me->cfg->work, res) & FLAG_FINAL)
            break;
        TRY(scatter_start(me, me->buf[i], &me->req[i]));
        TRY(test_all(me, K));
    }
    TRY(nbcx_waitall(K, me->req));
    return NBCX_SUCCESS;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Variant v: 0 sequential, 1 blocking, 2.. iscatter with conc[v - 2]. */
static int run_variant(struct rank *me, int v, int rep)
{
    struct result res = { 0, 0 };
    nbcx_request req;
    TRY(nbcx_ibarrier(me->comm, &req));
    TRY(nbcx_wait(&req));
    double t0 = now();
    int err;
    if (v == 0)
        err = run_sequential(me, &res);
    else if (v == 1)
        err = run_blocking(me, &res);
    else if (me->rank == 0)
        err = root_concurrent(me, me->cfg->conc[v - 2], &res);
    else
        err = other_concurrent(me, me->cfg->conc[v - 2], &res);
    double t = now() - t0;
    if (err != NBCX_SUCCESS)
        return err;
    /* Not timed: the slowest rank's time, and the result at rank 0. */
    double tmax;
    TRY(nbcx_iallreduce(&t, &tmax, 1, NBCX_DOUBLE, NBCX_MAX, me->comm, &req));
    TRY(nbcx_wait(&req));
    uint64_t mine[2] = { res.lines, res.sum }, total[2];
    TRY(nbcx_ireduce(mine, total, 2, NBCX_UINT64, NBCX_SUM, 0, me->comm,
                     &req));
    TRY(nbcx_wait(&req));
    if (me->rank == 0) {
        size_t at = (size_t)v * (size_t)me->cfg->reps + (size_t)rep;
        me->sh->time[at] = tmax;
        me->sh->result[at] = (struct result){ total[0], total[1] };
    }
    return NBCX_SUCCESS;
}

static int rank_main(nbcx_comm comm, void *arg)
{
    struct shared *sh = arg;
    struct rank me_ = { .cfg = sh->cfg, .sh = sh, .comm = comm };
    struct rank *me = &me_;
    TRY(nbcx_comm_rank(comm, &me->rank));
    TRY(nbcx_comm_size(comm, &me->ranks));
    int maxK = 1;
    for (int i = 0; i < sh->cfg->nconc; i++)
        if (sh->cfg->conc[i] > maxK)
            maxK = sh->cfg->conc[i];
    size_t bytes = me->rank == 0 ? (size_t)me->ranks * sh->cfg->block
                                 : sh->cfg->block;
    me->buf = calloc((size_t)maxK, sizeof *me->buf);
    me->req = calloc((size_t)maxK, sizeof *me->req);
    int err = me->buf && me->req ? NBCX_SUCCESS : NBCX_ERR_NOMEM;
    for (int i = 0; i < maxK && err == NBCX_SUCCESS; i++)
        if (!(me->buf[i] = malloc(bytes)))
            err = NBCX_ERR_NOMEM;
    /* Every rank learns whether every rank has its buffers. */
    int ok = err == NBCX_SUCCESS, all_ok = 0;
    nbcx_request req;
    TRY(nbcx_iallreduce(&ok, &all_ok, 1, NBCX_INT32, NBCX_MIN, comm, &req));
    TRY(nbcx_wait(&req));
    if (!all_ok)
        err = NBCX_ERR_NOMEM;
    /* Variants alternate within each repetition: a change of the
     * machine's speed during the run hits them all alike. */
    for (int rep = 0; rep < sh->cfg->reps && err == NBCX_SUCCESS; rep++)
        for (int v = 0; v < sh->nvariants && err == NBCX_SUCCESS; v++)
            err = run_variant(me, v, rep);
    for (int i = 0; me->buf && i < maxK; i++)
        free(me->buf[i]);
    free(me->buf);
    free(me->req);
    return err;
}

/* ---- main --------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return v[0];
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

static void variant_name(const struct config *c, int v, char *buf, size_t len)
{
    if (v == 0)
        snprintf(buf, len, "sequential");
    else if (v == 1)
        snprintf(buf, len, "blocking");
    else
        snprintf(buf, len, "iscatter x%d", c->conc[v - 2]);
}

static int report(const struct config *c, const struct shared *sh)
{
    int status = 0;
    const struct result *ref = &sh->result[0];
    double t_block = median(&sh->time[(size_t)c->reps], c->reps);
    printf("%-14s %12s %9s %12s %18s\n", "# variant", "time(s)", "gain",
           "lines", "checksum");
    for (int v = 0; v < sh->nvariants; v++) {
        char name[32];
        variant_name(c, v, name, sizeof name);
        double t = median(&sh->time[(size_t)v * (size_t)c->reps], c->reps);
        char gain[16] = "-";
        if (v >= 2 && t_block > 0)
            snprintf(gain, sizeof gain, "%.1f%%",
                     100 * (t_block - t) / t_block);
        const struct result *res = &sh->result[(size_t)v * (size_t)c->reps];
        printf("%-14s %12.4f %9s %12" PRIu64 " 0x%016" PRIx64 "\n", name, t,
               gain, res->lines, res->sum);
        for (int rep = 0; rep < c->reps; rep++) {
            const struct result *x = &res[rep];
            if (x->lines != ref->lines || x->sum != ref->sum) {
                fprintf(stderr,
                        "io_scatter: %s, repetition %d: %" PRIu64
                        " lines, checksum 0x%016" PRIx64 "; the sequential "
                        "run has %" PRIu64 ", 0x%016" PRIx64 "\n",
                        name, rep + 1, x->lines, x->sum, ref->lines,
                        ref->sum);
                status = 1;
            }
        }
    }
    puts(status ? "# checksums DIFFER" : "# checksums agree");
    return status;
}

int main(int argc, char **argv)
{
    struct config c;
    int p = parse_args(argc, argv, &c);
    if (p != 0)
        return p > 0 ? 0 : 2;
    struct files files;
    if (make_files(&c, &files) != 0) {
        remove_corpus(&files);
        return 1;
    }
    size_t total = 0;
    for (int i = 0; i < files.n; i++) {
        struct stat st;
        if (stat(files.path[i], &st) == 0)
            total += (size_t)st.st_size;
    }
    struct shared sh = { .cfg = &c, .files = &files, .nvariants = 2 + c.nconc };
    size_t slots = (size_t)sh.nvariants * (size_t)c.reps;
    sh.time = calloc(slots, sizeof *sh.time);
    sh.result = calloc(slots, sizeof *sh.result);
    if (!sh.time || !sh.result) {
        fputs("io_scatter: out of memory\n", stderr);
        remove_corpus(&files);
        return 1;
    }
    const char *progress = getenv("NBCX_PROGRESS");
    printf("# io_scatter: %d thread ranks, %.1f %s in %d files (%s), "
           "%zu bytes per rank per scatter, work %d, decode %d, "
           "progress %s, median of %d\n",
           c.ranks,
           total >= (1 << 20) ? (double)total / (1 << 20)
                              : (double)total / (1 << 10),
           total >= (1 << 20) ? "MiB" : "KiB", files.n,
           c.dir ? c.dir : "generated", c.block, c.work, c.decode,
           progress && *progress ? progress : "default", c.reps);
    fflush(stdout);
    int err = nbcx_inproc_run(c.ranks, rank_main, &sh);
    int status;
    if (err != NBCX_SUCCESS) {
        fprintf(stderr, "io_scatter: %s\n", nbcx_error_string(err));
        status = 1;
    } else if (sh.error) {
        fputs("io_scatter: reading the input failed\n", stderr);
        status = 1;
    } else {
        status = report(&c, &sh);
    }
    free(sh.time);
    free(sh.result);
    remove_corpus(&files);
    return status;
}
