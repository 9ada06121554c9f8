/*
 * bench.h - declarations shared by the parts of nbcx-bench.
 *
 *   nbcx-bench.c  main: the measurements, one function each
 *   options.c     command line
 *   ops.c         the table of operations (blocking MPI, native
 *                 nonblocking MPI and nbcx start functions), buffers,
 *                 input patterns and result check
 *   cpu.c         the synthetic computation and the CPU time of the
 *                 process's other threads
 *   report.c      machine description, statistics, table and JSON
 */
#ifndef NBCX_BENCH_H
#define NBCX_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "nbcx_mpi.h"

/* ------------------------------------------------------------------ */
/* Operations (ops.c)                                                  */
/* ------------------------------------------------------------------ */

/* Shape of a send or receive buffer: absent, one block of `count`
 * elements, or one block per rank. */
enum bench_blocks { BLOCKS_NONE, BLOCKS_ONE, BLOCKS_PER_RANK };

/* Where the result is defined, i.e. what the check compares. */
enum bench_result_at { RESULT_NONE, RESULT_ALL, RESULT_ROOT,
                       RESULT_NOT_ROOT /* iexscan: rank 0's is undefined */ };

#define BENCH_ROOT 0

/* One operation at one size, on this rank. */
struct bench_buf {
    int count;           /* elements per block (0 for ibarrier)       */
    size_t elem;         /* bytes per element                         */
    MPI_Datatype mtype;  /* MPI_DOUBLE or MPI_BYTE                    */
    nbcx_datatype ntype; /* NBCX_DOUBLE or NBCX_BYTE                  */
    void *sbuf, *rbuf;   /* NULL when the operation has none          */
    size_t sbytes, rbytes;
    int rank, ranks;
    MPI_Comm mcomm;      /* native MPI communicator                   */
    nbcx_comm ncomm;     /* nbcx communicator over the same ranks     */
    int *counts, *displs; /* v variants: count and i * count per rank */
    /* --persistent: the requests made once for these buffers (the native
     * one MPI_REQUEST_NULL when MPI has no persistent collectives) */
    struct bench_persistent *persistent;
};

struct bench_persistent {
    MPI_Request mpi;
    nbcx_request nbcx;
};

struct bench_op {
    const char *name; /* "iallreduce" */
    int reduction;    /* 1: doubles with SUM; 0: bytes             */
    enum bench_blocks send, recv;
    enum bench_result_at result;
    int root_input_in_rbuf; /* ibcast: the root's rbuf is the input */
    int (*blocking)(const struct bench_buf *b);
    int (*native)(const struct bench_buf *b, MPI_Request *req);
    int (*nbcx)(const struct bench_buf *b, nbcx_request *req);
    /* --persistent: the persistent forms with the same arguments (native
     * NULL when MPI has no reliable persistent collectives) */
    int (*native_init)(const struct bench_buf *b, MPI_Request *req);
    int (*nbcx_init)(const struct bench_buf *b, nbcx_request *req);
};

/* Which native persistent collectives nbcx-bench uses: "MPI-4"
 * (MPI_<op>_init), "MPIX" (Open MPI 4's MPIX_<op>_init, mpi-ext.h) or
 * "none" (the native side keeps the nonblocking call). */
extern const char *const bench_native_persistent;

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
                   int rank, int ranks, MPI_Comm mcomm, nbcx_comm ncomm);
void bench_buf_free(struct bench_buf *b);
/* Inputs get a pattern that depends on rank and position; outputs get a
 * poison value. bench_poison() resets the outputs only. */
void bench_fill(const struct bench_op *op, struct bench_buf *b);
void bench_poison(const struct bench_op *op, struct bench_buf *b);
/* The bytes of the result on this rank (*n = 0 where it is undefined). */
void bench_result(const struct bench_op *op, const struct bench_buf *b,
                  const void **p, size_t *n);

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                 */
/* ------------------------------------------------------------------ */

#define BENCH_MAX_OPS 16
#define BENCH_AUTO_REPS_MIN 5
#define BENCH_AUTO_REPS_MAX 100

/* What the computation of t_ovrl lasts, per implementation: its median
 * t_pure (as IMB-NBC), or the median t_block of the blocking collective
 * (as Denis et al. size it, the same for both implementations). */
enum bench_compute { COMPUTE_PURE, COMPUTE_BLOCK };

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
    int persistent;   /* --persistent: nbcx_<op>_init once per size,
                         then nbcx_start + wait per run */
    const char *json; /* NULL: no JSON                              */
    int verbose;      /* calibration details on stderr              */
    int help;
};

/* Parses the command line. On error returns -1 with a one-line message
 * (no newline) in err. */
int options_parse(int argc, char **argv, struct bench_options *o, char *err,
                  size_t errlen);
void options_free(struct bench_options *o);
void options_usage(FILE *f);
/* "pure" or "block". */
const char *bench_compute_name(enum bench_compute c);

/* ------------------------------------------------------------------ */
/* Computation and CPU accounting (cpu.c)                              */
/* ------------------------------------------------------------------ */

/* The synthetic computation: `units` fixed slices of floating-point
 * work on a cache-resident array. */
void cpu_work(long units);
/* Units per second of cpu_work on this rank, measured once. */
double cpu_calibrate(void);

/* CPU time consumed so far by every thread of the process except the
 * calling one. */
#define CPU_MAX_THREADS 256
struct cpu_snapshot {
    int n;
    pid_t tid[CPU_MAX_THREADS];
    double sec[CPU_MAX_THREADS];
};
void cpu_snapshot_take(struct cpu_snapshot *s);
/* Seconds of CPU the other threads used between two snapshots (threads
 * born in between count from zero). */
double cpu_snapshot_delta(const struct cpu_snapshot *before,
                          const struct cpu_snapshot *after);
/* "thread-cpu-clock" or "proc-stat": how the snapshots are taken. */
const char *cpu_snapshot_method(void);

/* ------------------------------------------------------------------ */
/* Results and reports (report.c)                                      */
/* ------------------------------------------------------------------ */

enum bench_impl { IMPL_NATIVE, IMPL_NBCX, IMPL_COUNT };

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
    struct bench_impl_result impl[IMPL_COUNT];
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
    char network[128];
    char progress[32];
    char progress_cpus[96]; /* where the progress thread runs */
    char nbcx_info[1024];
    int ranks;
};

/* Fills meta (call on rank 0; comm gives the transport name). */
void meta_collect(struct bench_meta *m, nbcx_comm comm, int ranks);

/* The column names of the table, in order. */
extern const char *const bench_columns[];
extern const int bench_ncolumns;

void table_header(FILE *f, const struct bench_meta *m,
                  const struct bench_options *o, const struct bench_op *op);
void table_row(FILE *f, const struct bench_result *r);

/* Writes the whole JSON document (to path.tmp, then renamed, so an
 * interrupted run leaves the previous complete file). Returns 0 or -1. */
int json_write(const char *path, const struct bench_meta *m,
               const struct bench_options *o, const struct bench_result *r,
               int nresults);

#endif /* NBCX_BENCH_H */
