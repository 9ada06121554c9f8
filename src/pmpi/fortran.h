/* fortran.h - the Fortran side of libnbcx-pmpi: helpers shared by the
 * generated entry points (fortran.c, from gen_fortran.py) and the
 * request, environment and completion functions (fortran_rt.c).
 *
 * One C function serves each Fortran routine in every binding whose
 * calling convention is that of mpif.h (arguments by address, MPI_Fint
 * handles, ierror last): mpif.h and `use mpi` of both libraries, Open
 * MPI's `use mpi_f08` (TYPE(MPI_Comm) and friends hold one INTEGER, its
 * choice buffers are plain addresses, its optional ierror is NULL when
 * absent), and the calls without choice buffers of MPICH's `use mpi_f08`
 * (its calls with buffers pass TS 29113 descriptors to mpi_*_f08ts_,
 * which call the C MPI_* functions: the shim's C wrappers serve them).
 * The entry points call the shim's C MPI_* functions, so a Fortran call
 * is served, counted and reported exactly as a C call.
 *
 * LOGICAL results are written as 1 and 0 (gfortran's .TRUE. and .FALSE.,
 * as both libraries' gfortran builds use).
 */
#ifndef NBCX_PMPI_FORTRAN_H
#define NBCX_PMPI_FORTRAN_H

#include <mpi.h>

#define NBCXF_HIDDEN __attribute__((visibility("hidden")))

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "Fortran INTEGER count arrays passed as int arrays");

/* A Fortran choice buffer: the library's MPI_IN_PLACE and MPI_BOTTOM
 * (addresses of common blocks or module variables) become the C ones. */
NBCXF_HIDDEN void *nbcxf_buf(void *p);
/* Comm size for a type array of alltoallw (the remote group's on an
 * intercommunicator); 0 when unknown. */
NBCXF_HIDDEN int nbcxf_comm_size(MPI_Comm comm);
/* In and out degrees of a communicator with a topology (0 without). */
NBCXF_HIDDEN void nbcxf_degrees(MPI_Comm comm, int *in, int *out);
/* n Fortran datatype handles as C handles: small (n <= 16) or a heap
 * array the caller frees with nbcxf_types_free. NULL: no memory. */
NBCXF_HIDDEN MPI_Datatype *nbcxf_types(int n, const MPI_Fint *f,
                                       MPI_Datatype *small);
NBCXF_HIDDEN void nbcxf_types_free(MPI_Datatype *t, MPI_Datatype *small);
/* NBCX_PMPI_REPORT: around the call of the C wrapper, the call site is
 * this entry point's caller (the Fortran program), not the entry point
 * itself. Nothing but a test when the report is off. */
#define NBCXF_SITE_ENTER()                                                 \
    void *nbcxf_site_ = shim_report ? __builtin_return_address(0) : NULL; \
    if (nbcxf_site_)                                                       \
    shim_fsite = nbcxf_site_
#define NBCXF_SITE_LEAVE()                                                 \
    if (nbcxf_site_)                                                       \
    shim_fsite = NULL

/* ierror (NULL when an optional mpi_f08 ierror is absent). */
static inline void nbcxf_ierr(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = (MPI_Fint)rc;
}

/* Request, completion and environment functions (fortran_rt.c), one per
 * Fortran routine; the generated file gives them their Fortran names. */
NBCXF_HIDDEN void nbcxf_init(MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_init_thread(MPI_Fint *required, MPI_Fint *provided,
                                    MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_finalize(MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_query_thread(MPI_Fint *provided, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_wait(MPI_Fint *request, MPI_Fint *status,
                             MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_test(MPI_Fint *request, MPI_Fint *flag,
                             MPI_Fint *status, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_waitall(MPI_Fint *count, MPI_Fint *requests,
                                MPI_Fint *statuses, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_testall(MPI_Fint *count, MPI_Fint *requests,
                                MPI_Fint *flag, MPI_Fint *statuses,
                                MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_waitany(MPI_Fint *count, MPI_Fint *requests,
                                MPI_Fint *index, MPI_Fint *status,
                                MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_testany(MPI_Fint *count, MPI_Fint *requests,
                                MPI_Fint *index, MPI_Fint *flag,
                                MPI_Fint *status, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_waitsome(MPI_Fint *incount, MPI_Fint *requests,
                                 MPI_Fint *outcount, MPI_Fint *indices,
                                 MPI_Fint *statuses, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_testsome(MPI_Fint *incount, MPI_Fint *requests,
                                 MPI_Fint *outcount, MPI_Fint *indices,
                                 MPI_Fint *statuses, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_start(MPI_Fint *request, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_startall(MPI_Fint *count, MPI_Fint *requests,
                                 MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_request_free(MPI_Fint *request, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_cancel(MPI_Fint *request, MPI_Fint *ierror);
NBCXF_HIDDEN void nbcxf_request_get_status(MPI_Fint *request, MPI_Fint *flag,
                                           MPI_Fint *status,
                                           MPI_Fint *ierror);

#endif
