/*
 * driver_mpi.c - nbcx-bench with --transport mpi (the default of a
 * build with MPI): ranks are the MPI processes of mpiexec. The blocking
 * reference is the MPI library's blocking collective, and the library's
 * own nonblocking collective (MPI_I...) runs next to nbcx's on the same
 * inputs. Barriers and maxima over ranks are MPI's.
 *
 *   mpiexec -n 4 nbcx-bench --op iallreduce,ialltoall --sizes 64k,1M
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench_mpi.h"

/* Library name and version from MPI_Get_library_version: Open MPI says
 * "Open MPI v4.1.4, package: ...", MPICH "MPICH Version:\t4.0.2\n...". */
static void mpi_library(struct bench_meta *m)
{
    static char s[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(s, &len);
    s[len < (int)sizeof s ? len : (int)sizeof s - 1] = '\0';
    bench_copy_line(m->mpi_version_string, sizeof m->mpi_version_string, s);
    snprintf(m->mpi_library, sizeof m->mpi_library, "unknown");
    snprintf(m->mpi_version, sizeof m->mpi_version, "unknown");
    const char *v = NULL;
    if (strncmp(s, "Open MPI", 8) == 0) {
        snprintf(m->mpi_library, sizeof m->mpi_library, "Open MPI");
        v = strstr(s, " v");
        v = v ? v + 2 : NULL;
    } else if (strstr(s, "MPICH")) {
        snprintf(m->mpi_library, sizeof m->mpi_library, "MPICH");
        v = strstr(s, "Version:");
        if (v) {
            v += strlen("Version:");
            while (*v == ' ' || *v == '\t')
                v++;
        }
    }
    if (v) {
        size_t n = strcspn(v, ", \t\r\n");
        if (n > 0 && n < sizeof m->mpi_version) {
            memcpy(m->mpi_version, v, n);
            m->mpi_version[n] = '\0';
        }
    }
}

/* ---- the driver --------------------------------------------------------- */

/* Every operation runs on MPI_COMM_WORLD's ranks as a periodic 1-D
 * Cartesian grid, not reordered (bench.h, BENCH_NEIGHBORS): the
 * neighbourhood collectives need a topology, and the others run on the
 * same communicator, native and nbcx alike (nbcx_comm_from_mpi takes the
 * grid with it). Barriers and maxima stay on MPI_COMM_WORLD. */
static MPI_Comm ring = MPI_COMM_NULL;

static void mpi_barrier(const struct bench *c)
{
    (void)c;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void mpi_max_doubles(const struct bench *c, double *v, int n)
{
    (void)c;
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static int mpi_max_int(const struct bench *c, int v)
{
    (void)c;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

static double mpi_wtime(void)
{
    return MPI_Wtime();
}

/* The other ranks may be blocked in a collective: only MPI_Abort ends
 * the run reliably. */
static void mpi_die(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static const struct bench_mpi_op *mpi_op(const struct bench_op *op)
{
    return &bench_mpi_ops[op - bench_ops];
}

/* MPI calls use MPI_ERRORS_ARE_FATAL: nothing to return. */
static int mpi_block(const struct bench *c, const struct bench_op *op,
                     const struct bench_buf *b)
{
    (void)c;
    mpi_op(op)->blocking(b, ring);
    return NBCX_SUCCESS;
}

static int mpi_native_start(const struct bench *c, const struct bench_op *op,
                            const struct bench_buf *b, void *req)
{
    (void)c;
    return mpi_op(op)->native(b, ring, req);
}

static void mpi_native_test(void *req)
{
    int flag;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
}

static void mpi_native_wait(void *req)
{
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* --persistent: the library's persistent collective, where it has one. */
static int mpi_native_pinit(const struct bench *c, const struct bench_op *op,
                            const struct bench_buf *b, void *req)
{
    (void)c;
    if (!mpi_op(op)->pinit)
        return 0;
    mpi_op(op)->pinit(b, ring, req);
    return 1;
}

static void mpi_native_pstart(void *req)
{
    MPI_Start(req);
}

static void mpi_native_pfree(void *req)
{
    MPI_Request_free(req);
}

static const struct bench_calls mpi_native = {
    .start = mpi_native_start,
    .test = mpi_native_test,
    .wait = mpi_native_wait,
    .pinit = mpi_native_pinit,
    .pstart = mpi_native_pstart,
    .pfree = mpi_native_pfree,
};

/* --pmpi: the same calls through the shim's entry points. */
static int mpi_shim_start(const struct bench *c, const struct bench_op *op,
                          const struct bench_buf *b, void *req)
{
    (void)c;
    return mpi_op(op)->shim(b, ring, req);
}

static void mpi_shim_test(void *req)
{
    bench_shim_test(req);
}

static void mpi_shim_wait(void *req)
{
    bench_shim_wait(req);
}

static int mpi_shim_pinit(const struct bench *c, const struct bench_op *op,
                          const struct bench_buf *b, void *req)
{
    (void)c;
    if (!mpi_op(op)->shim_pinit)
        return 0;
    mpi_op(op)->shim_pinit(b, ring, req);
    return 1;
}

static void mpi_shim_pstart(void *req)
{
    bench_shim_start(req);
}

static void mpi_shim_pfree(void *req)
{
    bench_shim_request_free(req);
}

static const struct bench_calls mpi_shim = {
    .start = mpi_shim_start,
    .test = mpi_shim_test,
    .wait = mpi_shim_wait,
    .pinit = mpi_shim_pinit,
    .pstart = mpi_shim_pstart,
    .pfree = mpi_shim_pfree,
};

/* The shim's counts summed over ranks, into rank 0's meta. */
static void mpi_shim_counts(const struct bench *c, struct bench_meta *m)
{
    long long v[2], sum[2] = { 0, 0 };
    bench_shim_counts(&v[0], &v[1]);
    MPI_Reduce(v, sum, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (c->rank == 0) {
        m->shim_served = sum[0];
        m->shim_native = sum[1];
    }
}

static const struct bench_driver mpi_driver = {
    .barrier = mpi_barrier,
    .max_doubles = mpi_max_doubles,
    .max_int = mpi_max_int,
    .wtime = mpi_wtime,
    .die = mpi_die,
    .block = mpi_block,
    .native = &mpi_native,
    .reference = "MPI's",
};

_Static_assert(sizeof(MPI_Request) <= BENCH_NATIVE_REQ,
               "BENCH_NATIVE_REQ must hold an MPI_Request");

/* ---- main --------------------------------------------------------------- */

int bench_mpi_main(int argc, char **argv)
{
    /* MPI_THREAD_MULTIPLE lets nbcx run its progress thread. */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    /* Bad arguments: one line on rank 0, exit code 2 on every rank. */
    struct bench_options o;
    char err[512];
    int bad = options_parse(argc, argv, &o, err, sizeof err) != 0;
    if (!bad && o.help) {
        if (rank == 0)
            options_usage(stdout);
        options_free(&o);
        MPI_Finalize();
        return 0;
    }
    bad = bad || bench_check_counts(&o, ranks, err, sizeof err) != 0;
    if (!bad && o.json) {
        /* Rank 0 writes the file. */
        int ok = rank == 0 ? bench_json_writable(o.json) : 1;
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok) {
            snprintf(err, sizeof err, "cannot write --json file '%s'", o.json);
            bad = 1;
        }
    }
    char shim_path[PATH_MAX] = "";
    if (!bad && o.pmpi) {
        /* Every rank loads it; any failure fails the run everywhere. */
        char why[512];
        int failed = bench_shim_load(shim_path, sizeof shim_path, why,
                                     sizeof why) != 0;
        int any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) {
            snprintf(err, sizeof err, "%s",
                     failed ? why : "--pmpi: another rank cannot load "
                                    "libnbcx-pmpi");
            bad = 1;
        }
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "nbcx-bench: %s\n", err);
        options_free(&o);
        MPI_Finalize();
        return 2;
    }

    struct bench c = { .o = &o, .d = &mpi_driver, .rank = rank,
                       .ranks = ranks };
    if (o.pmpi) {
        c.shim = &mpi_shim;
        c.shim_counts = mpi_shim_counts;
    }
    int periodic = 1;
    if (MPI_Cart_create(MPI_COMM_WORLD, 1, &ranks, &periodic, 0, &ring) !=
        MPI_SUCCESS)
        bench_die(&c, "MPI_Cart_create of the ring failed");
    int e = nbcx_comm_from_mpi(ring, &c.ncomm);
    if (e != NBCX_SUCCESS)
        bench_die(&c, "nbcx_comm_from_mpi: %s (%s)", nbcx_error_string(e),
                  nbcx_error_detail(e));
    struct bench_meta meta = { 0 };
    if (rank == 0) {
        meta_collect(&meta, c.ncomm, ranks);
        mpi_library(&meta);
        meta.has_native = 1;
        snprintf(meta.native_persistent, sizeof meta.native_persistent, "%s",
                 o.persistent ? bench_native_persistent : "none");
        if (o.pmpi) {
            meta.has_shim = 1;
            snprintf(meta.shim_library, sizeof meta.shim_library, "%.*s",
                     (int)sizeof meta.shim_library - 1, shim_path);
            snprintf(meta.shim_persistent, sizeof meta.shim_persistent, "%s",
                     o.persistent ? bench_shim_persistent : "none");
        }
    }
    int status = bench_run(&c, &meta);
    nbcx_comm_free(&c.ncomm);
    MPI_Comm_free(&ring);
    options_free(&o);
    /* The shim's MPI_Finalize releases its nbcx communicators first. */
    if (o.pmpi)
        bench_shim_finalize();
    else
        MPI_Finalize();
    return status;
}
