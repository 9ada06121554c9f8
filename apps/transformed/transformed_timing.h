/*
 * transformed_timing.h - times the MPI communication calls of the
 * transformed variant (apps/transformed/extract_blocking.py includes it
 * right before run_transformed(), the kernel's blocking code path as
 * rewritten by nbcx-transform). Every collective, start, wait and
 * persistent init that follows is wrapped so that its time is added to
 * app_comm_s, as app.h's wrappers do in the other variants.
 *
 * Not when nbcx-transform parses the file (-DAPP_TRANSFORM_PARSE): the
 * tool must see the plain calls (it does not rewrite macro expansions).
 */
#ifndef APP_TRANSFORM_PARSE
#ifndef APPS_TRANSFORMED_TIMING_H
#define APPS_TRANSFORMED_TIMING_H

/* Open MPI 4's MPIX_*_init, declared before they become macros here
 * (nbcx-transform includes it again after this: it has a guard). */
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif

static double app_tt0_;
static inline void app_timed_begin_(void)
{
    app_tt0_ = MPI_Wtime();
}
static inline int app_timed_end_(int rc)
{
    app_comm_s += MPI_Wtime() - app_tt0_;
    return rc;
}
/* The call's result, its time added to app_comm_s (the comma operator
 * starts the clock before the call). */
#define APP_TIMED_(call) app_timed_end_((app_timed_begin_(), (call)))

#define MPI_Allreduce(...) APP_TIMED_(MPI_Allreduce(__VA_ARGS__))
#define MPI_Bcast(...) APP_TIMED_(MPI_Bcast(__VA_ARGS__))
#define MPI_Allgatherv(...) APP_TIMED_(MPI_Allgatherv(__VA_ARGS__))
#define MPI_Alltoall(...) APP_TIMED_(MPI_Alltoall(__VA_ARGS__))
#define MPI_Gather(...) APP_TIMED_(MPI_Gather(__VA_ARGS__))
#define MPI_Gatherv(...) APP_TIMED_(MPI_Gatherv(__VA_ARGS__))
#define MPI_Neighbor_alltoall(...) APP_TIMED_(MPI_Neighbor_alltoall(__VA_ARGS__))
#define MPI_Neighbor_alltoallv(...) APP_TIMED_(MPI_Neighbor_alltoallv(__VA_ARGS__))
#define MPI_Neighbor_alltoallw(...) APP_TIMED_(MPI_Neighbor_alltoallw(__VA_ARGS__))

#define MPI_Iallreduce(...) APP_TIMED_(MPI_Iallreduce(__VA_ARGS__))
#define MPI_Ibcast(...) APP_TIMED_(MPI_Ibcast(__VA_ARGS__))
#define MPI_Iallgatherv(...) APP_TIMED_(MPI_Iallgatherv(__VA_ARGS__))
#define MPI_Ialltoall(...) APP_TIMED_(MPI_Ialltoall(__VA_ARGS__))
#define MPI_Igather(...) APP_TIMED_(MPI_Igather(__VA_ARGS__))
#define MPI_Igatherv(...) APP_TIMED_(MPI_Igatherv(__VA_ARGS__))
#define MPI_Ineighbor_alltoall(...) APP_TIMED_(MPI_Ineighbor_alltoall(__VA_ARGS__))
#define MPI_Ineighbor_alltoallv(...) APP_TIMED_(MPI_Ineighbor_alltoallv(__VA_ARGS__))
#define MPI_Ineighbor_alltoallw(...) APP_TIMED_(MPI_Ineighbor_alltoallw(__VA_ARGS__))

#define MPI_Allreduce_init(...) APP_TIMED_(MPI_Allreduce_init(__VA_ARGS__))
#define MPI_Bcast_init(...) APP_TIMED_(MPI_Bcast_init(__VA_ARGS__))
#define MPI_Allgatherv_init(...) APP_TIMED_(MPI_Allgatherv_init(__VA_ARGS__))
#define MPI_Alltoall_init(...) APP_TIMED_(MPI_Alltoall_init(__VA_ARGS__))
#define MPI_Gather_init(...) APP_TIMED_(MPI_Gather_init(__VA_ARGS__))
#define MPI_Gatherv_init(...) APP_TIMED_(MPI_Gatherv_init(__VA_ARGS__))
#define MPI_Neighbor_alltoall_init(...) APP_TIMED_(MPI_Neighbor_alltoall_init(__VA_ARGS__))
#define MPI_Neighbor_alltoallv_init(...) APP_TIMED_(MPI_Neighbor_alltoallv_init(__VA_ARGS__))
#define MPI_Neighbor_alltoallw_init(...) APP_TIMED_(MPI_Neighbor_alltoallw_init(__VA_ARGS__))

/* Open MPI 4's persistent collectives (mpi-ext.h). */
#define MPIX_Allreduce_init(...) APP_TIMED_(MPIX_Allreduce_init(__VA_ARGS__))
#define MPIX_Bcast_init(...) APP_TIMED_(MPIX_Bcast_init(__VA_ARGS__))
#define MPIX_Allgatherv_init(...) APP_TIMED_(MPIX_Allgatherv_init(__VA_ARGS__))
#define MPIX_Alltoall_init(...) APP_TIMED_(MPIX_Alltoall_init(__VA_ARGS__))
#define MPIX_Gather_init(...) APP_TIMED_(MPIX_Gather_init(__VA_ARGS__))
#define MPIX_Gatherv_init(...) APP_TIMED_(MPIX_Gatherv_init(__VA_ARGS__))
#define MPIX_Neighbor_alltoall_init(...) APP_TIMED_(MPIX_Neighbor_alltoall_init(__VA_ARGS__))
#define MPIX_Neighbor_alltoallv_init(...) APP_TIMED_(MPIX_Neighbor_alltoallv_init(__VA_ARGS__))
#define MPIX_Neighbor_alltoallw_init(...) APP_TIMED_(MPIX_Neighbor_alltoallw_init(__VA_ARGS__))

#define MPI_Start(...) APP_TIMED_(MPI_Start(__VA_ARGS__))
#define MPI_Startall(...) APP_TIMED_(MPI_Startall(__VA_ARGS__))
#define MPI_Wait(...) APP_TIMED_(MPI_Wait(__VA_ARGS__))
#define MPI_Waitall(...) APP_TIMED_(MPI_Waitall(__VA_ARGS__))

#endif
#endif

/* APP_DIE of the blocking code path, as a function (nbcx-transform
 * leaves functions with braces from macro expansions alone). */
#ifndef APPS_TRANSFORMED_DIE
#define APPS_TRANSFORMED_DIE
static inline void app_die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif
