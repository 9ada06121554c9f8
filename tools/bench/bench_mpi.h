/*
 * bench_mpi.h - the MPI side of nbcx-bench (driver_mpi.c, ops_mpi.c):
 * the only part that includes mpi.h.
 */
#ifndef NBCX_BENCH_MPI_H
#define NBCX_BENCH_MPI_H

#include "bench.h"
#include "nbcx_mpi.h"

/* The MPI library's own collectives of an operation, on the buffers of
 * struct bench_buf (MPI_DOUBLE for reductions, else MPI_BYTE). */
struct bench_mpi_op {
    int (*blocking)(const struct bench_buf *b, MPI_Comm comm);
    int (*native)(const struct bench_buf *b, MPI_Comm comm, MPI_Request *r);
    /* the persistent form (MPI_<op>_init or MPIX_<op>_init), NULL when
     * bench_native_persistent is "none" */
    int (*pinit)(const struct bench_buf *b, MPI_Comm comm, MPI_Request *r);
    /* --pmpi: native and pinit through the shim (after bench_shim_load;
     * shim_pinit NULL when bench_shim_persistent is "none") */
    int (*shim)(const struct bench_buf *b, MPI_Comm comm, MPI_Request *r);
    int (*shim_pinit)(const struct bench_buf *b, MPI_Comm comm,
                      MPI_Request *r);
};

/* Which native persistent collectives this build uses: "MPI-4", "MPIX"
 * (Open MPI 4's mpi-ext.h) or "none" (see ops_mpi.c). */
extern const char *const bench_native_persistent;

/* The shim's persistent collectives, named like bench_native_persistent. */
extern const char *const bench_shim_persistent;

/* --pmpi: loads libnbcx-pmpi (dlopen, RTLD_LOCAL: nothing else in the
 * process runs on it) and finds its entry points; path gets the file.
 * Returns 0, or -1 with a one-line message in err. */
int bench_shim_load(char *path, size_t pathlen, char *err, size_t errlen);
/* The shim's completion and request functions, and its MPI_Finalize
 * (which releases its nbcx communicators, then finalizes MPI). */
int bench_shim_wait(MPI_Request *r);
int bench_shim_test(MPI_Request *r);
int bench_shim_start(MPI_Request *r);
int bench_shim_request_free(MPI_Request *r);
int bench_shim_finalize(void);
/* This process's calls served by the shim on nbcx, and sent native. */
void bench_shim_counts(long long *served, long long *native);

/* Indexed like bench_ops. */
extern const struct bench_mpi_op bench_mpi_ops[];

#endif /* NBCX_BENCH_MPI_H */
