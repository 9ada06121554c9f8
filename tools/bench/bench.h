/*
 * bench.h - declarations shared by the parts of nbcx-bench.
 *
 * A transport-neutral core measures; a driver per transport runs it:
 *
 *   nbcx-bench.c     main: picks the driver (--transport)
 *   harness.c        the measurements, one function each, and the loop
 *                    over operations and sizes (no MPI, no threads)
 *   driver_mpi.c     --transport mpi: ranks are MPI processes; the
 *                    blocking reference is the MPI library's blocking
 *                    collective, native MPI_I... runs next to nbcx
 *   driver_inproc.c  --transport inproc: ranks are threads
 *                    (nbcx_inproc_run); the blocking reference is nbcx's
 *                    blocking-style call path, no native library
 *   ops.c            the operations: nbcx start functions, buffers,
 *                    input patterns, the result and its sequential
 *                    reference
 *   ops_mpi.c        the MPI library's blocking and nonblocking
 *                    collectives on the same buffers, and (--pmpi) the
 *                    same calls through libnbcx-pmpi, loaded with dlopen
 *   options.c        command line
 *   cpu.c            the synthetic computation and the CPU time of the
 *                    process's other threads
 *   report.c         machine description, statistics, table and JSON
 *
 * Only driver_mpi.c and ops_mpi.c include mpi.h; a build without MPI
 * leaves them out (NBCX_BENCH_MPI 0) and has --transport inproc only.
 */
#ifndef NBCX_BENCH_H
#define NBCX_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "nbcx.h"

#ifndef NBCX_BENCH_MPI
#define NBCX_BENCH_MPI 0
#endif

/* ------------------------------------------------------------------ */
/* Operations (ops.c)                                                  */
/* ------------------------------------------------------------------ */

/* Shape of a send or receive buffer: absent, one block of `count`
 * elements, one block per rank, or one per neighbour of the ring (the
 * neighbourhood collectives). */
enum bench_blocks { BLOCKS_NONE, BLOCKS_ONE, BLOCKS_PER_RANK,
                    BLOCKS_PER_NEIGHBOR };

/* The topology of the neighbourhood collectives: every rank's
 * communicator is a periodic 1-D Cartesian grid of all ranks (a ring, no
 * reordering: MPI_Cart_create in the MPI driver, nbcx_comm_set_cart in
 * the in-process one). Each rank has BENCH_NEIGHBORS neighbours, the one
 * at -1 then the one at +1 (the same rank on 2 ranks, itself on 1). */
#define BENCH_NEIGHBORS 2

/* Where the result is defined, i.e. what the check compares. */
enum bench_result_at { RESULT_NONE, RESULT_ALL, RESULT_ROOT,
                       RESULT_NOT_ROOT /* iexscan: rank 0's is undefined */ };

/* Which ranks' inputs a reduction sums: all (reduce, allreduce,
 * reduce_scatter_block), ranks 0..rank (scan) or 0..rank-1 (exscan). */
enum bench_sum { SUM_ALL, SUM_INCLUSIVE, SUM_EXCLUSIVE };

#define BENCH_ROOT 0

/* One operation at one size, on this rank. */
struct bench_buf {
    int count;           /* elements per block (0 for ibarrier)       */
    size_t elem;         /* bytes per element                         */
    nbcx_datatype ntype; /* NBCX_DOUBLE or NBCX_BYTE                  */
    void *sbuf, *rbuf;   /* NULL when the operation has none          */
    size_t sbytes, rbytes;
    int rank, ranks;
    nbcx_comm ncomm;     /* the nbcx communicator                     */
    int *counts, *displs; /* v variants: count and i * count per rank */
    int *bdispls;         /* ialltoallw: displs in bytes              */
    ptrdiff_t *adispls;   /* ineighbor_alltoallw: the same, address-sized */
    nbcx_datatype *ntypes; /* ialltoallw: ntype per rank              */
    /* --persistent: the requests made once for these buffers and started
     * by every run (harness.c), else NULL: nbcx's, and the native
     * library's (the driver's, BENCH_NATIVE_REQ bytes) where it has
     * persistent collectives */
    nbcx_request *npers;
    void *native_pers;
    void *shim_pers; /* --pmpi: the shim's persistent request, likewise */
};

struct bench_op {
    const char *name; /* "iallreduce" */
    int reduction;    /* 1: doubles with SUM; 0: bytes             */
    enum bench_blocks send, recv;
    enum bench_result_at result;
    int root_input_in_rbuf; /* ibcast: the root's rbuf is the input */
    int (*nbcx)(const struct bench_buf *b, nbcx_request *req);
    enum bench_sum sum; /* reductions */
    /* --persistent: nbcx_<op>_init with the arguments of nbcx */
    int (*nbcx_init)(const struct bench_buf *b, nbcx_request *req);
};

extern const struct bench_op bench_ops[];
extern const int bench_nops;

/* Index of the operation called name, or -1. */
int bench_op_find(const char *name);

/* Elements per block for a requested size in bytes: bytes / element
 * size rounded down, at least 1 (0 for ibarrier). Returns -1 when the
 * count, or count * ranks for per-rank buffers, does not fit an int. */
long long bench_op_count(const struct bench_op *op, size_t bytes, int ranks);
/* Bytes per element: 8 for reductions (doubles), else 1. */
size_t bench_op_elem(const struct bench_op *op);
/* "double", "byte" or "none" (ibarrier). */
const char *bench_op_datatype(const struct bench_op *op);

/* Allocates the buffers of op with count elements per block and fills
 * them (bench_fill). Returns 0, or -1 when out of memory. */
int bench_buf_init(struct bench_buf *b, const struct bench_op *op, int count,
                   int rank, int ranks, nbcx_comm ncomm);
void bench_buf_free(struct bench_buf *b);
/* Inputs get a pattern that depends on rank and position; outputs get a
 * poison value. bench_poison() resets the outputs only. */
void bench_fill(const struct bench_op *op, struct bench_buf *b);
void bench_poison(const struct bench_op *op, struct bench_buf *b);
/* The bytes of the result on this rank (*n = 0 where it is undefined). */
void bench_result(const struct bench_op *op, const struct bench_buf *b,
                  const void **p, size_t *n);
/* Writes into ref (bench_result's *n bytes) the result this rank must
 * get, computed sequentially from the input patterns of every rank. */
void bench_reference(const struct bench_op *op, const struct bench_buf *b,
                     void *ref);

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                 */
/* ------------------------------------------------------------------ */

#define BENCH_MAX_OPS 32
#define BENCH_AUTO_REPS_MIN 5
#define BENCH_AUTO_REPS_MAX 100
#define BENCH_MAX_RANKS 1024

/* What the computation of t_ovrl lasts, per implementation: its median
 * t_pure (as IMB-NBC), or the median t_block of the blocking collective
 * (as Denis et al. size it, the same for both implementations). */
enum bench_compute { COMPUTE_PURE, COMPUTE_BLOCK };

enum bench_transport { TRANSPORT_MPI, TRANSPORT_INPROC };

struct bench_options {
    int ops[BENCH_MAX_OPS]; /* indices into bench_ops, in given order */
    int nops;
    size_t *sizes; /* requested sizes in bytes, ascending, distinct */
    int nsizes;
    int reps;      /* fixed repetitions, or 0: automatic (budget)    */
    double budget; /* seconds per measurement series (automatic reps)*/
    int warmup;
    int tests;
    enum bench_compute compute;
    int persistent; /* --persistent: nbcx_<op>_init once per size, then
                       nbcx_start + wait per run (native likewise) */
    int pmpi;       /* --pmpi: the MPI_I... calls also through the shim */
    int pure_only;  /* --pure-only: t_block and t_pure, no overlap run */
    enum bench_transport transport;
    int ranks;     /* inproc: thread ranks                           */
    /* inproc: progress mode of the blocking variant (an
     * nbcx_progress_mode), 0: the same as the nonblocking variants */
    int block_progress;
    const char *json; /* NULL: no JSON                              */
    int verbose;      /* calibration details on stderr              */
    int help;
};

/* The driver for the command line, chosen before MPI_Init: this build's
 * default transport (MPI when built with it) without --transport or with
 * --transport mpi, else TRANSPORT_INPROC, whose driver never touches MPI
 * and reports a bad value itself. The full check is options_parse's. */
enum bench_transport options_transport(int argc, char **argv);
/* Parses the command line. On error returns -1 with a one-line message
 * (no newline) in err. */
int options_parse(int argc, char **argv, struct bench_options *o, char *err,
                  size_t errlen);
void options_free(struct bench_options *o);
void options_usage(FILE *f);
/* "pure" or "block". */
const char *bench_compute_name(enum bench_compute c);
/* "caller", "thread", "split", or "same" for 0. */
const char *bench_progress_name(int mode);

/* ------------------------------------------------------------------ */
/* Computation and CPU accounting (cpu.c)                              */
/* ------------------------------------------------------------------ */

/* The synthetic computation: `units` fixed slices of floating-point
 * work on a cache-resident array of the calling thread. */
void cpu_work(long units);
/* Units per second of cpu_work on the calling thread, measured with the
 * clock `now` (seconds). */
double cpu_calibrate(double (*now)(void));

/* CPU time consumed so far by every thread of the process except the
 * calling one and those in skip (inproc: the other ranks). */
#define CPU_MAX_THREADS 256
struct cpu_snapshot {
    int n;
    pid_t tid[CPU_MAX_THREADS];
    double sec[CPU_MAX_THREADS];
};
void cpu_snapshot_take(struct cpu_snapshot *s, const pid_t *skip, int nskip);
/* Seconds of CPU the other threads used between two snapshots (threads
 * born in between count from zero). */
double cpu_snapshot_delta(const struct cpu_snapshot *before,
                          const struct cpu_snapshot *after);
/* "thread-cpu-clock" or "proc-stat": how the snapshots are taken. */
const char *cpu_snapshot_method(void);
/* The calling thread's id. */
pid_t cpu_thread_id(void);

/* ------------------------------------------------------------------ */
/* Results and reports (report.c)                                      */
/* ------------------------------------------------------------------ */

/* The nonblocking implementations: the MPI library's own (MPI_I...,
 * --transport mpi only), nbcx, and with --pmpi the same MPI_I... calls
 * through libnbcx-pmpi (the shim, on nbcx). */
enum bench_impl { IMPL_NATIVE, IMPL_NBCX, IMPL_SHIM, IMPL_COUNT };

/* Per-repetition figures, each already the maximum over ranks. */
struct bench_impl_result {
    double *t_pure, *t_cpu, *t_ovrl, *overhead, *cpu_progress, *overlap;
};

struct bench_result {
    const struct bench_op *op;
    size_t bytes; /* real per-rank (per-peer) bytes */
    int count;
    int reps;
    double *t_block;
    struct bench_impl_result impl[IMPL_COUNT]; /* NATIVE: MPI only;
                                                  SHIM: --pmpi only */
};

struct bench_stat {
    double median, min, max;
};
struct bench_stat bench_stat_of(const double *v, int n);

struct bench_meta {
    char date[32];
    char hostname[256];
    char cpu_model[256];
    char os[512];
    long cores;
    char mpi_library[32];
    char mpi_version[64];
    char mpi_version_string[512];
    char transport[32];
    char transport_desc[256]; /* for the header: "ucx(tls=tcp;...)" */
    char network[128];
    char progress[32];
    char progress_cpus[96]; /* where the progress thread runs */
    char nbcx_info[1024];
    int ranks;
    int has_native;     /* a native library runs next to nbcx (MPI)   */
    int block_progress; /* inproc: see struct bench_options           */
    /* --persistent: the native library's persistent collectives, "MPI-4"
     * (MPI_<op>_init), "MPIX" (Open MPI 4's MPIX_<op>_init) or "none"
     * (the native runs keep the nonblocking call) */
    char native_persistent[8];
    /* --pmpi: the shim runs next to the native library (IMPL_SHIM) */
    int has_shim;
    char shim_library[512];    /* the file loaded */
    char shim_persistent[8];   /* like native_persistent, for the shim */
    long long shim_served;     /* the shim's calls served by nbcx and   */
    long long shim_native;     /* sent to the native library (all ranks,
                                  updated by the driver before reports) */
};

/* Copies src into dst (size len), cut at the first newline. */
void bench_copy_line(char *dst, size_t len, const char *src);

/* Fills meta (call on rank 0; comm gives the transport name). The MPI
 * fields say "none"; the MPI driver fills them in. */
void meta_collect(struct bench_meta *m, nbcx_comm comm, int ranks);

/* The column names of the table, in order: with a native library (MPI)
 * and without (inproc). */
extern const char *const bench_columns[];
extern const int bench_ncolumns;
extern const char *const bench_columns_inproc[];
extern const int bench_ncolumns_inproc;
/* With --pmpi: every figure for native, shim and nbcx side by side. */
extern const char *const bench_columns_pmpi[];
extern const int bench_ncolumns_pmpi;

void table_header(FILE *f, const struct bench_meta *m,
                  const struct bench_options *o, const struct bench_op *op);
void table_row(FILE *f, const struct bench_meta *m,
               const struct bench_result *r);

/* Writes the whole JSON document (to path.tmp, then renamed, so an
 * interrupted run leaves the previous complete file). Returns 0 or -1. */
int json_write(const char *path, const struct bench_meta *m,
               const struct bench_options *o, const struct bench_result *r,
               int nresults);

/* ------------------------------------------------------------------ */
/* The measurements (harness.c) and the drivers                        */
/* ------------------------------------------------------------------ */

struct bench;

/* An MPI-style nonblocking implementation (the native library's, or the
 * shim's): req points to BENCH_NATIVE_REQ bytes. */
struct bench_calls {
    int (*start)(const struct bench *c, const struct bench_op *op,
                 const struct bench_buf *b, void *req);
    void (*test)(void *req);
    void (*wait)(void *req);
    /* --persistent, optional: makes the persistent request of op on b in
     * req (returns 1), or returns 0 when there is none; starts and frees
     * one. Test and wait are test/wait. */
    int (*pinit)(const struct bench *c, const struct bench_op *op,
                 const struct bench_buf *b, void *req);
    void (*pstart)(void *req);
    void (*pfree)(void *req);
};

/* What a transport provides to the harness. Every function is called by
 * every rank at the same point (collectively), except wtime and die. */
struct bench_driver {
    /* Synchronises the ranks (before every timed run). */
    void (*barrier)(const struct bench *c);
    /* v[i] = max over ranks of v[i], on every rank. */
    void (*max_doubles)(const struct bench *c, double *v, int n);
    /* The maximum over ranks of v, on every rank. */
    int (*max_int)(const struct bench *c, int v);
    /* Wall clock, seconds. */
    double (*wtime)(void);
    /* Ends the whole run after a fatal error (other ranks may be stuck
     * in a collective). */
    void (*die)(void);
    /* The blocking reference: one run, timed by the harness. begin and
     * end (optional) run around it, untimed, e.g. to change nbcx's
     * progress mode; end gets the operation to bring the nonblocking
     * path back to speed. */
    void (*block_begin)(const struct bench *c);
    int (*block)(const struct bench *c, const struct bench_op *op,
                 const struct bench_buf *b);
    void (*block_end)(const struct bench *c, const struct bench_op *op,
                      const struct bench_buf *b);
    /* The native nonblocking implementation, or NULL (inproc). */
    const struct bench_calls *native;
    /* The name of the reference results are checked against, for the
     * message when they differ: "MPI's" or "the sequential reference". */
    const char *reference;
};

#define BENCH_NATIVE_REQ 64

/* One rank's state. */
struct bench {
    const struct bench_options *o;
    const struct bench_driver *d;
    void *dstate;       /* the driver's own                           */
    int rank, ranks;
    nbcx_comm ncomm;
    double rate;        /* units of cpu_work per second on this rank  */
    const pid_t *skip;  /* threads whose CPU is not progress          */
    int nskip;          /* (inproc: the rank threads)                 */
    const struct bench_calls *shim; /* --pmpi: the shim's, else NULL  */
    /* --pmpi: refreshes meta's shim counts (collective), or NULL */
    void (*shim_counts)(const struct bench *c, struct bench_meta *m);
};

/* A failure in the middle of a collective: prints "nbcx-bench: ..." and
 * ends the run through the driver of the calling rank. */
_Noreturn void bench_die(const struct bench *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Checks that every (op, size) has an element count that fits an int,
 * also times ranks for per-rank buffers. Returns 0 or -1 with err. */
int bench_check_counts(const struct bench_options *o, int ranks, char *err,
                       size_t errlen);
/* Whether the --json file can be written (its directory too). */
int bench_json_writable(const char *path);

/* Runs every operation at every size on this rank; rank 0 prints the
 * table and writes the JSON (meta is rank 0's). Measures c->rate first.
 * Returns 0, or 1 when a result was wrong. */
int bench_run(struct bench *c, struct bench_meta *meta);

#if NBCX_BENCH_MPI
/* --transport mpi: the whole program (MPI_Init to MPI_Finalize). */
int bench_mpi_main(int argc, char **argv);
#endif
/* --transport inproc: the whole program. */
int bench_inproc_main(int argc, char **argv);

#endif /* NBCX_BENCH_H */
