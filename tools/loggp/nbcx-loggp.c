/* nbcx-loggp: measures the LogGP parameters (L, o, g, G) of the link
 * between two MPI ranks with the PRTT method of Netgauge, and the local
 * per-byte costs of a copy and of a reduction, and writes them as JSON
 * (format "nbcx-loggp/1", read by the simulator of issue 17).
 *
 * Method: T. Hoefler, A. Lichei, W. Rehm, "Low-Overhead LogGP Parameter
 * Assessment for Modern Interconnection Networks", IPDPS 2007. The
 * parametrised round-trip time PRTT(n, d, s): the client (rank 0) sends
 * n messages of s bytes to the server (rank 1), busy-waiting d us between
 * consecutive sends; the server receives all n and answers with one
 * message of s bytes; PRTT is the client's time from the first send to
 * the end of the receive of the answer. In LogGP (o_s, o_r: send and
 * receive overhead) the paper's model is
 *
 *   (1) PRTT(1, 0, s) = 2 (o_s + L + o_r + (s-1) G)
 *   (2) PRTT(n, 0, s) = PRTT(1, 0, s) + (n-1) G_all(s),
 *                       G_all(s) = g + (s-1) G
 *   (3) PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) max(o_s + d, G_all(s))
 *
 * from which
 *
 *   (4) G_all(s) = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n-1), and g, G by a
 *       least-squares fit of g + (s-1) G to G_all over the sizes;
 *   (5) o_s = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n-1) - d, for d large
 *       enough that o_s + d > G_all(s) (Netgauge takes d = PRTT(1,0,s));
 *   (6) o_r, on the server: the client sends n messages back to back;
 *       the server receives the first, then busy-waits d before each of
 *       the n-1 others (d >= G_all: each has arrived when it is
 *       received), and o_r = (T_server - (n-1) d) / (n-1);
 *   (7) L = PRTT(1, 0, 1) / 2 - o_s - o_r   (from (1) with s = 1).
 *
 * The numbering (1)-(7) is ours, not the paper's (its text was not at
 * hand): the model and derivations follow the paper as Netgauge's LogGP
 * pattern implements it (ptrn_loggp.c), except (6), see docs/loggp.md,
 * and L, which Netgauge's code reports as PRTT(1,0,s_min)/2.
 *
 * The JSON has one o per side of a message: o = (o_s + o_r) / 2, so that
 * 2o = o_s + o_r and (1) holds with it.
 *
 * nbcx's own engine, which LogGP does not see (rank 0 alone, nbcx on
 * MPI_COMM_SELF, caller progress, no message):
 *   node_cost  = (T(65 calls) - T(1 call)) / 64, T(k) the start + wait
 *                of a user schedule of k independent no-op call nodes
 *                (built before the clock starts): the executor's work
 *                per node, dispatch and completion;
 *   start_cost = T(nbcx_iallreduce of 1 double) - node_cost: a cached
 *                nonblocking call (cache lookup, request, schedule reset,
 *                executor passes, wait) whose schedule on one rank is a
 *                single 8-byte copy node;
 * and on both ranks (nbcx on MPI_COMM_WORLD, caller progress):
 * With --as intra (shared memory), the CPUs' share of moving the bytes:
 *   intra_cpu_share = (X(s) - 2o - (s-1)G) / ((s-1)G), clamped to [0, 1],
 *                X(s) the time of both ranks sending s bytes to each
 *                other at once (MPI_Isend + MPI_Irecv + MPI_Waitall, 8 in
 *                a row, median), s = a quarter of the largest size: the
 *                simulator's exchange is 2o + (1 + f)(s-1)G, f = 0 when
 *                NICs move the bytes, 1 when each CPU copies both ways.
 *   message_cost = (RT/2 - start_cost - node_cost - L - 2o) / 2, RT the
 *                round trip of two 1-byte nbcx_ibcast (root 0, then root
 *                1, each waited for): what each end of an nbcx message
 *                costs beyond the o of blocking MPI (nonblocking
 *                requests, MPI_Testsome polling), the simulator's model
 *                of a 2-rank bcast being s + n + L + 2(o + message_cost).
 *
 * Copies (memcpy) and reductions (nbcx_reduce_local, sum of doubles) are
 * timed twice: on 32 MiB buffers, far beyond the caches (copy_per_byte,
 * reduce_per_byte), and on 64 KiB buffers used again and again
 * (copy_per_byte_cached, reduce_per_byte_cached), which the simulator
 * applies up to cache_bytes = half the core's L2 cache. docs/loggp.md explains the
 * choices (sizes, weighting of the fit, held-out sizes, limits).
 */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nbcx.h"
#include "nbcx_mpi.h"
#include "../common/tool_args.h"

#define TOOL "nbcx-loggp"
#define MAX_SIZES 64
#define MAX_HELD 2
#define TAG_DATA 17
#define TAG_RESULT 18

/* ---------- options ---------- */

struct options {
    const char *as;     /* "intra" or "inter" */
    const char *out;    /* output file, NULL: stdout (or the merge file) */
    const char *merge;  /* existing parameter file to fill */
    int raw, quick;
    int n;              /* messages per PRTT(n, ., s) */
    int reps;           /* samples per PRTT point (median) */
    long max_size;      /* largest message of the g/G fit */
};

static void usage(FILE *f)
{
    fprintf(f,
"Usage: mpiexec -n 2 " TOOL " [OPTIONS]\n"
"\n"
"Measures the LogGP parameters of the link between the two ranks with the\n"
"PRTT method of Netgauge (Hoefler, Lichei, Rehm, IPDPS 2007) and the local\n"
"per-byte costs of memcpy and of a sum of doubles, and writes them as JSON\n"
"(format nbcx-loggp/1, times in us, G and per-byte costs in us/byte).\n"
"\n"
"Options:\n"
"  --as intra|inter   which block the run fills: intra (ranks on one node,\n"
"                     shared memory) or inter (between nodes; here: under\n"
"                     tools/emunet). Default intra.\n"
"  --out FILE         write the JSON to FILE (default: stdout, or the\n"
"                     --merge file)\n"
"  --merge FILE       fill the block into the existing parameter file FILE\n"
"                     and keep its other block, its cores_per_node and its\n"
"                     per-byte costs; FILE is rewritten unless --out is given\n"
"  --raw              print the PRTT table, the fit and the derivation on\n"
"                     stderr\n"
"  --quick            a fast run: sizes up to 64 KiB, 15 samples per point\n"
"  --reps N           samples per PRTT point, the median is used (default 21)\n"
"  --n N              messages per PRTT(n, d, s) (default 16)\n"
"  --max-size S       largest message of the g/G fit, e.g. 256k, 1m\n"
"                     (default 1m; 64k with --quick)\n"
"  -h, --help         this text\n"
"\n"
"Runs on exactly 2 ranks. Environment: NBCX_BENCH_NETWORK (set by\n"
"tools/emunet) names the network in the output's source; without it the\n"
"run is taken to be on shared memory.\n"
"Exit status: 0, 1 on a failure while measuring or writing, 2 on bad\n"
"arguments or a rank count other than 2.\n");
}

static int rank_me = 0;

/* One line on stderr from rank 0 only. */
static void say(const char *fmt, ...)
{
    if (rank_me != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs(TOOL ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int parse_size(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v <= 0)
        return -1;
    long mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mult = 1024 * 1024, end++;
    if (*end != '\0' || v > (1L << 30) / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* 0: run, 1: --help shown, 2: bad arguments (message said). */
static int parse_args(int argc, char **argv, struct options *o)
{
    int reps_set = 0, max_set = 0;
    *o = (struct options){.as = "intra", .n = 16, .reps = 21,
                          .max_size = 1024 * 1024};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--as") || !strcmp(a, "--out") ||
                    !strcmp(a, "--merge") || !strcmp(a, "--reps") ||
                    !strcmp(a, "--n") || !strcmp(a, "--max-size");
        if (takes && !v) {
            say("%s needs a value (see --help)", a);
            return 2;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank_me == 0)
                usage(stdout);
            return 1;
        } else if (!strcmp(a, "--as")) {
            if (strcmp(v, "intra") && strcmp(v, "inter")) {
                say("--as takes intra or inter, not '%s'", v);
                return 2;
            }
            o->as = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--merge")) {
            o->merge = v;
        } else if (!strcmp(a, "--raw")) {
            o->raw = 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--reps")) {
            if (parse_int(v, 3, 100000, &o->reps)) {
                say("--reps takes a whole number from 3 to 100000, not '%s'", v);
                return 2;
            }
            reps_set = 1;
        } else if (!strcmp(a, "--n")) {
            if (parse_int(v, 2, 4096, &o->n)) {
                say("--n takes a whole number from 2 to 4096, not '%s'", v);
                return 2;
            }
        } else if (!strcmp(a, "--max-size")) {
            if (parse_size(v, &o->max_size) || o->max_size < 64) {
                say("--max-size takes a size from 64 to 1g (e.g. 256k, 1m), "
                    "not '%s'", v);
                return 2;
            }
            max_set = 1;
        } else {
            say("unknown option '%s' (see --help)", a);
            return 2;
        }
        if (takes)
            i++;
    }
    if (o->quick) {
        if (!reps_set)
            o->reps = 15;
        if (!max_set)
            o->max_size = 64 * 1024;
    }
    return 0;
}

/* ---------- a small JSON reader, for --merge ---------- */

/* The parameter file is an object of strings, numbers and objects of
 * numbers (our own format); this reads that much of JSON. */
struct jblock {
    int present;
    double L, o, g, G;
};
struct params {
    char source[2048];
    double cores_per_node, copy_per_byte, reduce_per_byte;
    double start_cost, node_cost, message_cost; /* optional: nbcx's engine */
    double intra_cpu_share; /* optional: CPUs' share of intra transfers */
    /* optional, not measured: oversubscribed cores' switch-in cost
     * (the simulator's time-sharing, docs/sim.md); kept when merging */
    double sched_latency;
    int has_sched_latency;
    /* optional, not measured (Open MPI's limit; docs/sim.md), kept */
    double eager_limit, rndv_latency;
    /* optional: copies and reductions in the cache */
    double cache_bytes, copy_per_byte_cached, reduce_per_byte_cached;
    struct jblock intra, inter;
    char inter_link[16]; /* "" (duplex, the default) or "shared" */
    char intra_link[16]; /* "" (nic, the default) or "cpu" */
};

struct jp {
    const char *p;
};

static void jws(struct jp *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
        j->p++;
}

static int jstring(struct jp *j, char *buf, size_t cap)
{
    jws(j);
    if (*j->p != '"')
        return -1;
    j->p++;
    size_t n = 0;
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            c = *j->p++;
            if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c != '"' && c != '\\' && c != '/')
                return -1; /* \uXXXX etc.: not written by us */
        }
        if (n + 1 < cap)
            buf[n++] = c;
    }
    if (*j->p != '"')
        return -1;
    j->p++;
    buf[n] = '\0';
    return 0;
}

static int jnumber(struct jp *j, double *v)
{
    jws(j);
    char *end;
    *v = strtod(j->p, &end);
    if (end == j->p)
        return -1;
    j->p = end;
    return 0;
}

static int jblock(struct jp *j, struct jblock *b)
{
    int seen = 0;
    char key[64];
    jws(j);
    if (*j->p++ != '{')
        return -1;
    jws(j);
    if (*j->p == '}') {
        j->p++;
        return -1;
    }
    for (;;) {
        double v;
        if (jstring(j, key, sizeof key))
            return -1;
        jws(j);
        if (*j->p++ != ':' || jnumber(j, &v))
            return -1;
        if (!strcmp(key, "L"))
            b->L = v, seen |= 1;
        else if (!strcmp(key, "o"))
            b->o = v, seen |= 2;
        else if (!strcmp(key, "g"))
            b->g = v, seen |= 4;
        else if (!strcmp(key, "G"))
            b->G = v, seen |= 8;
        jws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p++ != '}')
            return -1;
        break;
    }
    if (seen != 15)
        return -1;
    b->present = 1;
    return 0;
}

/* 0, or -1 with a reason in why. */
static int read_params(const char *path, struct params *pr, const char **why)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *why = strerror(errno);
        return -1;
    }
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    memset(pr, 0, sizeof *pr);
    struct jp j = {text};
    char key[64], format[64] = "";
    int seen = 0;
    *why = "not a nbcx-loggp/1 parameter file";
    jws(&j);
    if (*j.p++ != '{')
        return -1;
    for (;;) {
        if (jstring(&j, key, sizeof key))
            return -1;
        jws(&j);
        if (*j.p++ != ':')
            return -1;
        if (!strcmp(key, "format")) {
            if (jstring(&j, format, sizeof format))
                return -1;
        } else if (!strcmp(key, "source")) {
            if (jstring(&j, pr->source, sizeof pr->source))
                return -1;
        } else if (!strcmp(key, "inter_link")) {
            if (jstring(&j, pr->inter_link, sizeof pr->inter_link))
                return -1;
        } else if (!strcmp(key, "intra_link")) {
            if (jstring(&j, pr->intra_link, sizeof pr->intra_link))
                return -1;
        } else if (!strcmp(key, "intra") || !strcmp(key, "inter")) {
            if (jblock(&j, key[3] == 'r' && key[4] == 'a' ? &pr->intra
                                                           : &pr->inter))
                return -1;
        } else {
            double v;
            if (jnumber(&j, &v))
                return -1;
            if (!strcmp(key, "cores_per_node"))
                pr->cores_per_node = v, seen |= 1;
            else if (!strcmp(key, "copy_per_byte"))
                pr->copy_per_byte = v, seen |= 2;
            else if (!strcmp(key, "reduce_per_byte"))
                pr->reduce_per_byte = v, seen |= 4;
            else if (!strcmp(key, "start_cost"))
                pr->start_cost = v;
            else if (!strcmp(key, "node_cost"))
                pr->node_cost = v;
            else if (!strcmp(key, "message_cost"))
                pr->message_cost = v;
            else if (!strcmp(key, "intra_cpu_share"))
                pr->intra_cpu_share = v;
            else if (!strcmp(key, "sched_latency"))
                pr->sched_latency = v, pr->has_sched_latency = 1;
            else if (!strcmp(key, "eager_limit"))
                pr->eager_limit = v;
            else if (!strcmp(key, "rndv_latency"))
                pr->rndv_latency = v;
            else if (!strcmp(key, "cache_bytes"))
                pr->cache_bytes = v;
            else if (!strcmp(key, "copy_per_byte_cached"))
                pr->copy_per_byte_cached = v;
            else if (!strcmp(key, "reduce_per_byte_cached"))
                pr->reduce_per_byte_cached = v;
        }
        jws(&j);
        if (*j.p == ',') {
            j.p++;
            continue;
        }
        if (*j.p++ != '}')
            return -1;
        break;
    }
    if (strcmp(format, "nbcx-loggp/1") || seen != 7)
        return -1;
    return 0;
}

static void json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void write_block(FILE *f, const char *name, const struct jblock *b)
{
    fprintf(f, " \"%s\": {\"L\": %.6g, \"o\": %.6g, \"g\": %.6g, \"G\": %.6g},\n",
            name, b->L, b->o, b->g, b->G);
}

static int write_params(const char *path, const struct params *pr)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        say("cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"format\": \"nbcx-loggp/1\", \"source\": ");
    json_escape(f, pr->source);
    fprintf(f, ", \"cores_per_node\": %d,\n", (int)pr->cores_per_node);
    if (pr->intra.present)
        write_block(f, "intra", &pr->intra);
    if (pr->inter.present)
        write_block(f, "inter", &pr->inter);
    if (pr->intra_link[0])
        fprintf(f, " \"intra_link\": \"%s\",\n", pr->intra_link);
    if (pr->intra.present)
        fprintf(f, " \"intra_cpu_share\": %.4g,\n", pr->intra_cpu_share);
    if (pr->inter_link[0])
        fprintf(f, " \"inter_link\": \"%s\",\n", pr->inter_link);
    if (pr->has_sched_latency)
        fprintf(f, " \"sched_latency\": %.6g,\n", pr->sched_latency);
    if (pr->eager_limit > 0)
        fprintf(f, " \"eager_limit\": %.0f, \"rndv_latency\": %.6g,\n",
                pr->eager_limit, pr->rndv_latency);
    fprintf(f, " \"copy_per_byte\": %.6g, \"reduce_per_byte\": %.6g,\n",
            pr->copy_per_byte, pr->reduce_per_byte);
    fprintf(f, " \"start_cost\": %.6g, \"node_cost\": %.6g, "
               "\"message_cost\": %.6g,\n",
            pr->start_cost, pr->node_cost, pr->message_cost);
    fprintf(f, " \"cache_bytes\": %.0f, \"copy_per_byte_cached\": %.6g, "
               "\"reduce_per_byte_cached\": %.6g}\n",
            pr->cache_bytes, pr->copy_per_byte_cached,
            pr->reduce_per_byte_cached);
    if (path && fclose(f) != 0) {
        say("cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (!path)
        fflush(stdout);
    return 0;
}

/* ---------- timing ---------- */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Busy-waits d us without calling MPI, as Netgauge's my_wait. */
static void spin(double d)
{
    double end = now_us() + d;
    while (now_us() < end) {
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---------- the PRTT measurements ---------- */

static char *buf;

/* Client side of PRTT(n, d, s): n sends with d between, one receive. */
static double prtt_client(int n, double d, int s)
{
    double t0 = now_us();
    MPI_Send(buf, s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
    for (int i = 1; i < n; i++) {
        if (d > 0)
            spin(d);
        MPI_Send(buf, s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
    }
    MPI_Recv(buf, s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return now_us() - t0;
}

/* Server side: n receives, one answer. With d > 0 (the o_r measurement
 * (6)) it busy-waits d before each receive after the first and returns
 * the time from the end of the first receive to the end of the last;
 * otherwise 0. */
static double prtt_server(int n, double d, int s)
{
    MPI_Recv(buf, s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t0 = now_us();
    for (int i = 1; i < n; i++) {
        if (d > 0)
            spin(d);
        MPI_Recv(buf, s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    double t = now_us() - t0;
    MPI_Send(buf, s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
    return t;
}

/* One sample of a PRTT point on both ranks; the client returns its
 * PRTT, the server what prtt_server returns. */
static double prtt(int n, double d_client, double d_server, int s)
{
    return rank_me == 0 ? prtt_client(n, d_client, s)
                        : prtt_server(n, d_server, s);
}

struct point {
    long s;
    int held;    /* held out of the g/G fit */
    int dropped; /* an outlier of the large-message fit */
    double p1, pn;          /* medians of PRTT(1,0,s), PRTT(n,0,s) */
    double gall;            /* (4) */
};

/* Least squares of y = a + b x, x = s - 1, y = G_all(s), over the
 * points with smin <= s <= smax neither held out nor dropped, weighted
 * by 1/y^2: relative errors, as the sizes are geometric and an unweighted
 * fit would let the largest size alone decide. The residual is the RMS
 * relative one, sqrt(sum r^2 / (m - 2)) as Netgauge's lsquares (which is
 * absolute: its sizes are evenly spaced). Returns the number of points. */
static int fit_line(const struct point *pt, int np, long smin, long smax,
                    double *a, double *b, double *res)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < np; i++) {
        if (pt[i].held || pt[i].dropped || pt[i].s < smin || pt[i].s > smax)
            continue;
        double x = (double)(pt[i].s - 1), y = pt[i].gall;
        double w = 1.0 / fmax(y * y, 1e-12);
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
        m++;
    }
    double det = sw * sxx - sx * sx;
    *b = (sw * sxy - sx * sy) / det;
    *a = (sy - *b * sx) / sw;
    double r2 = 0;
    for (int i = 0; i < np; i++) {
        if (pt[i].held || pt[i].dropped || pt[i].s < smin || pt[i].s > smax)
            continue;
        double r = (*a + *b * (double)(pt[i].s - 1) - pt[i].gall) / pt[i].gall;
        r2 += r * r;
    }
    *res = m > 2 ? sqrt(r2 / (m - 2)) : 0;
    return m;
}

/* g and G from G_all(s) = g + (s-1) G, (4). The paper fits the line per
 * protocol range (Netgauge detects the changes of protocol, e.g. eager
 * to rendezvous, as jumps of the residual, and removes outliers); the
 * simulator needs one g and one G, so the two ends are fitted: g is the
 * intercept of the fit over the small messages (1 to 64 B: there (s-1) G
 * is negligible and G_all is the gap per message), G the slope of the fit
 * over the large ones (the five powers of two up to max_size: there
 * G_all is the time per byte). As Netgauge, a point far off the large
 * fit is an outlier (a burst of load on the machine): one more than 50%
 * off is dropped and the line fitted again, at most twice, never below 3
 * points. What lies between the ends (the protocol changes) shows as
 * the relative residual of the resulting line over all fitted sizes. */
struct gfit {
    double g, G;
    double res_small, res_large; /* relative, per segment */
    double g_large;              /* intercept of the large fit (--raw) */
    double rel_res;              /* RMS relative error of g + (s-1) G */
    long large_min;
    int dropped;
};

static void fit_gG(struct point *pt, int np, long max_pow2, struct gfit *f)
{
    double slope_small;
    fit_line(pt, np, 1, 64, &f->g, &slope_small, &f->res_small);
    f->large_min = max_pow2 / 16 > 1 ? max_pow2 / 16 : 1;
    f->dropped = 0;
    for (;;) {
        int m = fit_line(pt, np, f->large_min, max_pow2, &f->g_large, &f->G,
                         &f->res_large);
        int worst = -1;
        double wr = 0.5;
        for (int i = 0; i < np; i++) {
            if (pt[i].held || pt[i].dropped || pt[i].s < f->large_min ||
                pt[i].s > max_pow2)
                continue;
            double pred = f->g_large + f->G * (double)(pt[i].s - 1);
            double r = fabs(pred - pt[i].gall) / pt[i].gall;
            if (r > wr)
                wr = r, worst = i;
        }
        if (worst < 0 || m <= 3 || f->dropped == 2)
            break;
        pt[worst].dropped = 1;
        f->dropped++;
    }
    double r2 = 0;
    int m = 0;
    for (int i = 0; i < np; i++) {
        if (pt[i].held || pt[i].dropped)
            continue;
        double pred = f->g + f->G * (double)(pt[i].s - 1);
        double r = (pred - pt[i].gall) / pt[i].gall;
        r2 += r * r;
        m++;
    }
    f->rel_res = m > 2 ? sqrt(r2 / (m - 2)) : 0;
}

/* ---------- local per-byte costs ---------- */

static double copy_cost(size_t bytes, int reps)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) {
        free(a), free(b);
        return NAN;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        a[r % bytes] = (char)r;
        double t0 = now_us();
        memcpy(b, a, bytes);
        t[r] = now_us() - t0;
        /* Keep the copy observable. */
        if (b[r % bytes] != (char)r)
            abort();
    }
    double m = median(t, reps) / (double)bytes;
    free(t), free(a), free(b);
    return m;
}

static volatile double reduce_sink;

static double reduce_cost(size_t bytes, int reps)
{
    size_t n = bytes / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return NAN;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = 1.0, b[i] = 0.0;
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        /* b += a, nbcx's own kernel (the one its reduce nodes run), as a
         * reduction with MPI_SUM of MPI_DOUBLE combines an incoming
         * buffer into the accumulated one. */
        if (nbcx_reduce_local(a, b, (int)n, NBCX_DOUBLE, NBCX_SUM) !=
            NBCX_SUCCESS)
            abort();
        t[r] = now_us() - t0;
        reduce_sink = b[(size_t)r % n];
    }
    double m = median(t, reps) / (double)(n * sizeof(double));
    free(t), free(a), free(b);
    return m;
}

/* ---------- nbcx's engine ---------- */

static int noop(void *arg)
{
    (void)arg;
    return NBCX_SUCCESS;
}

/* Start + wait of a user schedule of k no-op call nodes, built before
 * the clock starts; -1 on an error. */
static double sched_calls(nbcx_comm comm, int k)
{
    nbcx_sched sc;
    if (nbcx_sched_create(comm, &sc) != NBCX_SUCCESS)
        return -1;
    for (int i = 0; i < k; i++) {
        nbcx_node nd;
        if (nbcx_sched_call(sc, noop, NULL, &nd) != NBCX_SUCCESS) {
            nbcx_sched_free(&sc);
            return -1;
        }
    }
    nbcx_request req;
    double t0 = now_us();
    if (nbcx_sched_start(&sc, &req) != NBCX_SUCCESS ||
        nbcx_wait(&req) != NBCX_SUCCESS)
        return -1;
    return now_us() - t0;
}

/* start_cost and node_cost (the file's header comment), medians of reps
 * samples, interleaved; 0 with *why set when nbcx fails. */
static int engine_cost(int reps, double *start, double *node,
                       const char **why)
{
    *start = *node = 0;
    nbcx_comm comm;
    *why = "the caller progress mode cannot be set";
    if (nbcx_progress_set(NBCX_PROGRESS_CALLER) != NBCX_SUCCESS)
        return -1;
    *why = "nbcx_comm_from_mpi(MPI_COMM_SELF) failed";
    if (nbcx_comm_from_mpi(MPI_COMM_SELF, &comm) != NBCX_SUCCESS)
        return -1;
    double *t1 = malloc((size_t)reps * sizeof *t1);
    double *tk = malloc((size_t)reps * sizeof *tk);
    double *ta = malloc((size_t)reps * sizeof *ta);
    double in = 1, out = 0;
    int rc = t1 && tk && ta ? 0 : -1;
    *why = "out of memory";
    for (int r = -reps / 4; r < reps && rc == 0; r++) { /* warm-up first */
        double a = sched_calls(comm, 1), b = sched_calls(comm, 65);
        nbcx_request req;
        double t0 = now_us();
        int e = nbcx_iallreduce(&in, &out, 1, NBCX_DOUBLE, NBCX_SUM, comm,
                                &req);
        if (e == NBCX_SUCCESS)
            e = nbcx_wait(&req);
        double c = now_us() - t0;
        if (a < 0 || b < 0 || e != NBCX_SUCCESS || out != in) {
            *why = "an nbcx operation on MPI_COMM_SELF failed";
            rc = -1;
        } else if (r >= 0) {
            t1[r] = a, tk[r] = b, ta[r] = c;
        }
    }
    if (rc == 0) {
        double n = (median(tk, reps) - median(t1, reps)) / 64;
        *node = n > 0 ? n : 0;
        double st = median(ta, reps) - *node;
        *start = st > 0 ? st : 0;
    }
    free(t1), free(tk), free(ta);
    nbcx_comm_free(&comm);
    return rc;
}

/* The median time (on rank 0) of the two ranks sending s bytes to each
 * other at once, 8 exchanges in a row per sample. */
static double exchange(int s, int reps)
{
    enum { K = 8 };
    char *in = malloc((size_t)s);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!in || !t) {
        say("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank_me;
    for (int r = -2; r < reps; r++) { /* two warm-ups */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_us();
        for (int k = 0; k < K; k++) {
            MPI_Request rq[2];
            MPI_Status st[2]; /* (MPICH's MPI_STATUSES_IGNORE trips GCC's
                                 access check under -Werror) */
            MPI_Irecv(in, s, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(buf, s, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                      &rq[1]);
            MPI_Waitall(2, rq, st);
        }
        if (r >= 0)
            t[r] = (now_us() - t0) / K;
    }
    double m = median(t, reps);
    free(in), free(t);
    return m;
}

/* The median round trip (on rank 0) of two 1-byte nbcx_ibcast on the 2
 * ranks, root 0 then root 1, each waited for; -1 when nbcx fails (on
 * either rank: both learn it). */
static double nbcx_round_trip(int reps)
{
    nbcx_comm comm;
    int ok = nbcx_progress_set(NBCX_PROGRESS_CALLER) == NBCX_SUCCESS &&
             nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm) == NBCX_SUCCESS;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (ok)
            nbcx_comm_free(&comm);
        return -1;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    char byte = 0;
    int err = t ? 0 : 1;
    for (int r = -reps / 4; r < reps && !err; r++) { /* warm-up first */
        double t0 = now_us();
        for (int root = 0; root < 2 && !err; root++) {
            nbcx_request req;
            err = nbcx_ibcast(&byte, 1, NBCX_BYTE, root, comm, &req) ||
                  nbcx_wait(&req);
        }
        if (r >= 0 && !err)
            t[r] = now_us() - t0;
    }
    int any = 0;
    MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double rt = any ? -1 : median(t, reps);
    free(t);
    nbcx_comm_free(&comm);
    return rt;
}

/* ---------- main ---------- */

static void mpi_library(char *out, size_t cap)
{
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(s, &len);
    s[len < (int)sizeof s ? len : (int)sizeof s - 1] = '\0';
    const char *v;
    if (!strncmp(s, "Open MPI", 8)) {
        size_t n = strcspn(s, ",\n");
        snprintf(out, cap, "%.*s", (int)n, s);
    } else if ((v = strstr(s, "MPICH Version:"))) {
        v += strlen("MPICH Version:");
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, cap, "MPICH %.*s", (int)strcspn(v, " \t\n"), v);
    } else {
        snprintf(out, cap, "%.*s", (int)strcspn(s, "\n"), s);
    }
}

int main(int argc, char **argv)
{
    /* Before MPI_Init: answered without mpiexec. */
    nbcx_tool_version(argc, argv, TOOL);
    if (nbcx_tool_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    int nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct options opt;
    int rc = parse_args(argc, argv, &opt);
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    if (nranks != 2) {
        say("runs on exactly 2 ranks, not %d (mpiexec -n 2 %s ...)", nranks,
            TOOL);
        MPI_Finalize();
        return 2;
    }

    /* A --merge file that cannot be read is a bad argument: refuse it
     * before measuring. */
    struct params pr;
    memset(&pr, 0, sizeof pr);
    int bad = 0;
    if (rank_me == 0 && opt.merge) {
        const char *why;
        if (read_params(opt.merge, &pr, &why)) {
            say("--merge %s: %s", opt.merge, why);
            bad = 1;
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) {
        MPI_Finalize();
        return 2;
    }

    /* Sizes: powers of two from 1 B to max_size for the fit, and two
     * held-out sizes 3 * 2^k that the fit does not see, for the
     * consistency check: 3/32 and 3/4 of the largest power of two (6 KiB
     * and 48 KiB with --quick), in the range of the collectives the
     * simulator predicts (1 KiB and up; docs/loggp.md). */
    struct point pt[MAX_SIZES];
    int np = 0;
    for (long s = 1; s <= opt.max_size && np < MAX_SIZES - MAX_HELD; s *= 2)
        pt[np++] = (struct point){.s = s};
    {
        int top = 0;
        while ((2L << top) <= opt.max_size)
            top++; /* 2^top = largest power of two <= max_size */
        long held[MAX_HELD] = {3L << (top - 5 > 0 ? top - 5 : 0),
                               3L << (top - 2 > 0 ? top - 2 : 0)};
        for (int h = 0; h < MAX_HELD; h++) {
            /* sorted insert */
            int i = np;
            while (i > 0 && pt[i - 1].s > held[h]) {
                pt[i] = pt[i - 1];
                i--;
            }
            pt[i] = (struct point){.s = held[h], .held = 1};
            np++;
        }
    }
    long max_s = pt[np - 1].s;
    buf = malloc((size_t)max_s);
    if (!buf) {
        say("cannot allocate %ld bytes", max_s);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 0x5a, (size_t)max_s);

    int n = opt.n, reps = opt.reps;
    double *s1 = malloc((size_t)np * (size_t)reps * sizeof *s1);
    double *sn = malloc((size_t)np * (size_t)reps * sizeof *sn);
    if (!s1 || !sn) {
        say("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t_start = now_us();

    /* Local per-byte costs on rank 0, before the link is measured (rank 1
     * waits in the barrier). Buffers of 32 MiB (8 MiB with --quick): far
     * beyond the caches, as the copies and reductions of large
     * collectives. */
    double copy_pb = 0, reduce_pb = 0, start_c = 0, node_c = 0;
    double cache_b = 0, copy_cpb = 0, reduce_cpb = 0;
    if (rank_me == 0) {
        size_t lb = opt.quick ? (size_t)8 << 20 : (size_t)32 << 20;
        int lreps = opt.quick ? 5 : 11;
        copy_pb = copy_cost(lb, lreps);
        reduce_pb = reduce_cost(lb, lreps);
        /* In the cache: buffers of 64 KiB, the same again and again.
         * Copies and reductions up to half the core's L2 (both operands
         * fit; 256 KiB where the size is unknown) count as cached. */
        long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        cache_b = l2 > 0 ? (double)(l2 / 2) : 256.0 * 1024;
        int creps = opt.quick ? 201 : 2001;
        copy_cpb = copy_cost((size_t)64 << 10, creps);
        reduce_cpb = reduce_cost((size_t)64 << 10, creps);
        const char *why;
        if (engine_cost(opt.quick ? 201 : 2001, &start_c, &node_c, &why))
            say("warning: nbcx's engine costs not measured (%s): "
                "start_cost and node_cost written as 0", why);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Warm-up: one pass over the sizes, discarded. */
    for (int i = 0; i < np; i++) {
        prtt(1, 0, 0, (int)pt[i].s);
        prtt(n, 0, 0, (int)pt[i].s);
    }
    /* PRTT(1,0,s) and PRTT(n,0,s), all sizes interleaved in every
     * repetition, so that a burst of load on the machine spreads over
     * the sizes instead of spoiling one. */
    for (int r = 0; r < reps; r++) {
        /* A discarded round trip first: the pass's first point would
         * otherwise pay for the end of the previous pass's largest
         * messages (seen: PRTT(1,0,1) 4x too long on shared memory). */
        prtt(1, 0, 0, 1);
        for (int i = 0; i < np; i++) {
            s1[i * reps + r] = prtt(1, 0, 0, (int)pt[i].s);
            sn[i * reps + r] = prtt(n, 0, 0, (int)pt[i].s);
        }
    }
    double fit[6] = {0}; /* g, G, rel_res, -, d, g of 1-64 B */
    long max_pow2 = 1;
    while (max_pow2 * 2 <= opt.max_size)
        max_pow2 *= 2;
    struct gfit gf = {0};
    if (rank_me == 0) {
        for (int i = 0; i < np; i++) {
            pt[i].p1 = median(s1 + i * reps, reps);
            pt[i].pn = median(sn + i * reps, reps);
            pt[i].gall = (pt[i].pn - pt[i].p1) / (n - 1); /* (4) */
        }
        fit_gG(pt, np, max_pow2, &gf);
        fit[0] = gf.g, fit[1] = gf.G, fit[2] = gf.rel_res;
        /* d for (5) and (6): Netgauge's PRTT(1,0,s) of a small message
         * (the median over 1 to 64 B, robust to one disturbed size), at
         * least twice the small-message gap g, so that o_s + d > G_all(1)
         * and every message of (6) has arrived when the server receives
         * it. */
        double small[8];
        int ns = 0;
        for (int i = 0; i < np && ns < 8; i++)
            if (!pt[i].held && pt[i].s <= 64)
                small[ns++] = pt[i].p1;
        fit[5] = gf.g;
        fit[4] = fmax(median(small, ns), 2 * gf.g);
    }
    MPI_Bcast(fit, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double d = fit[4];

    /* (5): PRTT(n, d, 1) and PRTT(1, 0, 1) interleaved; (6): the client
     * sends back to back, the server waits d before each receive. */
    double *sd = malloc((size_t)reps * sizeof *sd);
    double *s10 = malloc((size_t)reps * sizeof *s10);
    double *sr = malloc((size_t)reps * sizeof *sr);
    if (!sd || !s10 || !sr) {
        say("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < reps; r++) {
        sd[r] = prtt(n, d, 0, 1);
        s10[r] = prtt(1, 0, 0, 1);
        sr[r] = prtt(n, 0, d, 1); /* server: T_server */
    }
    double o_r = 0;
    if (rank_me == 1) {
        for (int r = 0; r < reps; r++)
            sr[r] = (sr[r] - (n - 1) * d) / (n - 1); /* (6) */
        o_r = median(sr, reps);
        MPI_Send(&o_r, 1, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&o_r, 1, MPI_DOUBLE, 1, TAG_RESULT, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    /* nbcx's cost per message end, and the exchange (the header
     * comment) */
    double rt_nbcx = nbcx_round_trip(opt.quick ? 201 : 2001);
    int s_x = (int)(max_pow2 / 4 > 1 ? max_pow2 / 4 : 1);
    double x_time = exchange(s_x, reps);
    double elapsed = (now_us() - t_start) * 1e-6;

    rc = 0;
    if (rank_me == 0) {
        double prtt_nd = median(sd, reps), prtt_10 = median(s10, reps);
        double o_s = (prtt_nd - prtt_10) / (n - 1) - d;      /* (5) */
        double L = prtt_10 / 2 - o_s - o_r;                  /* (7) */
        double L_measured = L;
        /* L <= 0: the overheads take the whole one-way time. So on
         * loopback TCP (tools/emunet adds no propagation delay, and the
         * sender's system call does the receiver's protocol work): L is
         * set to a floor of 0.01 us, said on stderr and in --raw. */
        const double L_floor = 0.01;
        if (L < L_floor)
            L = L_floor;
        double o = (o_s + o_r) / 2;
        double g = fit[0], G = fit[1];
        double msg_c = 0;
        double body_x = (double)(s_x - 1) * G;
        double share = body_x > 0 ? (x_time - 2 * o - body_x) / body_x : 0;
        share = fmin(1, fmax(0, share));
        if (rt_nbcx < 0)
            say("warning: nbcx's round trip not measured: message_cost "
                "written as 0");
        else
            msg_c = fmax(0, (rt_nbcx / 2 - start_c - node_c - L - 2 * o) / 2);
        const char *as = opt.as;

        if (opt.raw) {
            fprintf(stderr,
                    "# nbcx-loggp raw: n=%d reps=%d (medians), as=%s, %.1f s\n"
                    "# size held(1: not fitted, 0x: outlier dropped) PRTT(1,0,s) PRTT(n,0,s) G_all(s) fit(s) "
                    "PRTT(n,0,s)_model rel_err\n",
                    n, reps, as, elapsed);
            for (int i = 0; i < np; i++) {
                double fs = g + G * (double)(pt[i].s - 1);
                /* (1)+(2) with the fitted parameters, 2(o_s+L+o_r) =
                 * PRTT(1,0,1) by (7). */
                double model = prtt_10 + 2 * (double)(pt[i].s - 1) * G +
                               (n - 1) * fs;
                fprintf(stderr, "prtt %ld %d%s %.3f %.3f %.4f %.4f %.3f %.4f\n",
                        pt[i].s, pt[i].held, pt[i].dropped ? "x" : "", pt[i].p1, pt[i].pn, pt[i].gall,
                        fs, model, (model - pt[i].pn) / pt[i].pn);
            }
            fprintf(stderr,
                    "fit g=%.6g (1-64 B: rel. residual %.4g) G=%.6g (%ld B-%ld B: "
                    "rel. residual %.4g, intercept %.4g us, %d outliers "
                    "dropped) line rel_residual=%.4g\n",
                    g, gf.res_small, G, gf.large_min, max_pow2,
                    gf.res_large, gf.g_large, gf.dropped, gf.rel_res);
            fprintf(stderr,
                    "o d=%.4g PRTT(n,d,1)=%.4f PRTT(1,0,1)=%.4f o_s=%.4g "
                    "o_r=%.4g o=%.4g\n",
                    d, prtt_nd, prtt_10, o_s, o_r, o);
            fprintf(stderr, "L L=%.4g (PRTT(1,0,1)/2 - o_s - o_r = %.4g)\n",
                    L, L_measured);
            fprintf(stderr, "local copy_per_byte=%.6g reduce_per_byte=%.6g\n",
                    copy_pb, reduce_pb);
            fprintf(stderr, "engine start_cost=%.6g node_cost=%.6g "
                            "message_cost=%.6g (nbcx 1-byte bcast round "
                            "trip %.4g us)\n",
                    start_c, node_c, msg_c, rt_nbcx);
            fprintf(stderr, "exchange of %d B: %.4g us (one way, model: "
                            "%.4g us) intra_cpu_share=%.4g\n",
                    s_x, x_time, L + 2 * o + body_x, share);
            fprintf(stderr, "cached cache_bytes=%.0f copy_per_byte=%.6g "
                            "reduce_per_byte=%.6g\n",
                    cache_b, copy_cpb, reduce_cpb);
        }
        if (o_s + d <= fit[5])
            say("warning: o_s + d = %.3g us is not above g = %.3g us: (5) "
                "measured the gap, not o_s",
                o_s + d, fit[5]);
        if (L_measured < L_floor)
            say("warning: PRTT(1,0,1)/2 - o_s - o_r = %.4g us: the overheads "
                "take the whole one-way time; L set to %.2g us",
                L_measured, L_floor);
        const char *what[] = {"L", "o_s", "o_r", "g", "G", "copy_per_byte",
                              "reduce_per_byte", "copy_per_byte_cached",
                              "reduce_per_byte_cached"};
        double val[] = {L, o_s, o_r, g, G, copy_pb, reduce_pb, copy_cpb,
                        reduce_cpb};
        for (int k = 0; k < 9; k++)
            if (!isfinite(val[k]) || val[k] <= 0) {
                say("measured %s = %.4g is not positive: the model does not "
                    "fit this run (load? see --raw); no output written",
                    what[k], val[k]);
                rc = 1;
            }

        if (!rc) {
            char lib[256], host[256] = "unknown", date[32];
            mpi_library(lib, sizeof lib);
            gethostname(host, sizeof host - 1);
            time_t tt = time(NULL);
            struct tm tm;
            gmtime_r(&tt, &tm);
            strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", &tm);
            const char *net = getenv("NBCX_BENCH_NETWORK");
            char how[128];
            if (net && *net)
                snprintf(how, sizeof how, "tcp/emunet (%s)", net);
            else
                snprintf(how, sizeof how, "shm");
            char src[1024];
            snprintf(src, sizeof src, "nbcx-loggp %d.%d.%d, %s, %s, %s, %s",
                     NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR,
                     NBCX_VERSION_PATCH, lib, date, host, how);
            struct jblock blk = {1, L, o, g, G};
            if (opt.merge) {
                /* Keep the file's other block, cores_per_node and
                 * per-byte costs; the sources are joined. */
                char old[sizeof pr.source];
                snprintf(old, sizeof old, "%s", pr.source);
                snprintf(pr.source, sizeof pr.source, "%s: %.900s; %.1000s", as,
                         src, old);
                /* a file from before the engine costs: add them */
                if (pr.start_cost == 0 && pr.node_cost == 0 &&
                    pr.message_cost == 0) {
                    pr.start_cost = start_c;
                    pr.node_cost = node_c;
                    pr.message_cost = msg_c;
                }
                if (pr.cache_bytes == 0) {
                    pr.cache_bytes = cache_b;
                    pr.copy_per_byte_cached = copy_cpb;
                    pr.reduce_per_byte_cached = reduce_cpb;
                }
            } else {
                long cores = sysconf(_SC_NPROCESSORS_ONLN);
                pr.cores_per_node = cores > 0 ? (double)cores : 1;
                pr.copy_per_byte = copy_pb;
                pr.reduce_per_byte = reduce_pb;
                pr.start_cost = start_c;
                pr.node_cost = node_c;
                pr.message_cost = msg_c;
                pr.cache_bytes = cache_b;
                pr.copy_per_byte_cached = copy_cpb;
                pr.reduce_per_byte_cached = reduce_cpb;
                snprintf(pr.source, sizeof pr.source, "%s", src);
            }
            if (!strcmp(as, "intra")) {
                pr.intra = blk;
                pr.intra_cpu_share = share;
                /* "intra_link" (the simulator's "cpu" model of copy-in/
                 * copy-out) is not measured: a file's own is kept */
            } else {
                pr.inter = blk;
                /* tools/emunet: one rate-limited loopback carries both
                 * directions, which the simulator must know */
                snprintf(pr.inter_link, sizeof pr.inter_link, "%s",
                         net && *net ? "shared" : "");
            }
            const char *path = opt.out ? opt.out : opt.merge;
            if (write_params(path, &pr))
                rc = 1;
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(sd), free(s10), free(sr), free(s1), free(sn), free(buf);
    MPI_Finalize();
    return rc;
}
