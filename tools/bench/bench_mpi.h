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
};

/* Which native persistent collectives this build uses: "MPI-4", "MPIX"
 * (Open MPI 4's mpi-ext.h) or "none" (see ops_mpi.c). */
extern const char *const bench_native_persistent;

/* Indexed like bench_ops. */
extern const struct bench_mpi_op bench_mpi_ops[];

#endif /* NBCX_BENCH_MPI_H */
