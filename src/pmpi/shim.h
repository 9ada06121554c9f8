/* shim.h - internals of libnbcx-pmpi, the PMPI profiling-interface shim
 * that runs an unmodified MPI program's nonblocking and persistent
 * collectives on nbcx. Built only on nbcx's public API (nbcx.h and
 * nbcx_mpi.h). See docs/shim.md.
 */
#ifndef NBCX_PMPI_SHIM_H
#define NBCX_PMPI_SHIM_H

#include <mpi.h>
#include <stdatomic.h>

#include "nbcx_mpi.h"

/* Open MPI 4.1 (MPI-3.1) has its persistent collectives as MPIX_*_init
 * in mpi-ext.h; MPI-4 libraries (MPICH 4) as MPI_*_init. */
#if MPI_VERSION >= 4
#define SHIM_PERSISTENT 1
#define PNAME(x) MPI_##x##_init
#define PPNAME(x) PMPI_##x##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define SHIM_PERSISTENT 1
#define PNAME(x) MPIX_##x##_init
#define PPNAME(x) PMPIX_##x##_init
#endif
#endif
#ifndef SHIM_PERSISTENT
#define SHIM_PERSISTENT 0
#endif

/* MPI-4's large-count variants (MPI_I<op>_c, MPI_<op>_init_c): MPICH 4.
 * Open MPI 4.1 (MPI-3.1) has none. */
#if MPI_VERSION >= 4
#define SHIM_LARGE_COUNT 1
#else
#define SHIM_LARGE_COUNT 0
#endif

/* Operations, in the order of shim_op_names (NBCX_PMPI_OPS names). */
enum shim_op {
    OP_IBARRIER, OP_IBCAST, OP_IREDUCE, OP_IALLREDUCE, OP_IGATHER,
    OP_ISCATTER, OP_IALLGATHER, OP_IALLTOALL, OP_IGATHERV, OP_ISCATTERV,
    OP_IALLGATHERV, OP_IALLTOALLV, OP_IALLTOALLW, OP_IREDUCE_SCATTER,
    OP_IREDUCE_SCATTER_BLOCK, OP_ISCAN, OP_IEXSCAN, OP_INEIGHBOR_ALLGATHER,
    OP_INEIGHBOR_ALLGATHERV, OP_INEIGHBOR_ALLTOALL, OP_INEIGHBOR_ALLTOALLV,
    OP_INEIGHBOR_ALLTOALLW,
    OP_FIRST_PERSISTENT,
    OP_BARRIER_INIT = OP_FIRST_PERSISTENT, OP_BCAST_INIT, OP_REDUCE_INIT,
    OP_ALLREDUCE_INIT, OP_GATHER_INIT, OP_SCATTER_INIT, OP_ALLGATHER_INIT,
    OP_ALLTOALL_INIT, OP_GATHERV_INIT, OP_SCATTERV_INIT, OP_ALLGATHERV_INIT,
    OP_ALLTOALLV_INIT, OP_ALLTOALLW_INIT, OP_REDUCE_SCATTER_INIT,
    OP_REDUCE_SCATTER_BLOCK_INIT, OP_SCAN_INIT, OP_EXSCAN_INIT,
    OP_NEIGHBOR_ALLGATHER_INIT, OP_NEIGHBOR_ALLGATHERV_INIT,
    OP_NEIGHBOR_ALLTOALL_INIT, OP_NEIGHBOR_ALLTOALLV_INIT,
    OP_NEIGHBOR_ALLTOALLW_INIT,
    OP_COUNT
};

/* Why a call went to the native library (R_SERVED: it did not). */
enum shim_reason {
    R_SERVED, R_OFF, R_NOT_LISTED, R_NESTED, R_INTERCOMM, R_COMM_SETUP,
    R_TYPE, R_OP, R_ARGS, R_OTHER, R_COUNT
};

/* One communicator's nbcx twin, cached as an attribute. */
struct shim_comm {
    nbcx_comm nc;          /* NBCX_COMM_NULL: nbcx cannot serve it */
    int reason;            /* why not, when nc is null */
    MPI_Comm comm;         /* the user's communicator (while alive) */
    atomic_int refs;       /* the attribute + requests still holding it */
    atomic_int alive;      /* 0 once the user freed the communicator */
    struct shim_comm *next, *prev; /* every live entry, for MPI_Finalize */
};

/* A call being served: the communicator and the handles converted for
 * it (released once the operation is started, or with a persistent
 * request, which keeps them). */
struct shim_call {
    int op;
    struct shim_comm *sc;
    int ntypes;
    nbcx_datatype *types; /* points at inline or to a heap array */
    nbcx_datatype inline_types[4];
    int cap;
    nbcx_op nop;
    MPI_Op uop;      /* a user operation held (MPI_OP_NULL: none) */
    int predefined;  /* a predefined operation on a predefined type */
    void *arrays[2]; /* converted type arrays (shim_types) */
    int narrays;
    int reason; /* set on failure */
    void *site;      /* NBCX_PMPI_REPORT: the caller's return address */
    long long bytes; /* NBCX_PMPI_REPORT: the call's bytes (gen_colls.py) */
    long long t0;    /* NBCX_PMPI_REPORT: when the call began (ns) */
};

extern _Thread_local int shim_in_nbcx;

/* NBCX_PMPI_REPORT (report.c, docs/shim.md): on (1) or off (0), known
 * from the shim's first call (MPI_Init). When it is off the wrappers do
 * nothing more than test it. */
extern int shim_report;
/* The Fortran entry point's caller, set around its call of the C
 * wrapper (report on only): the call site reported instead of the C
 * wrapper's caller (fortran.c). */
extern _Thread_local void *shim_fsite;

/* One row of the report: a call site (return address), an operation,
 * and how the calls went (R_SERVED or why native). */
struct shim_site;
/* The row, made at first use (NULL: no memory). */
struct shim_site *shim_site_get(void *ra, int op, int reason);
/* calls and bytes added to a row. */
void shim_site_count(struct shim_site *s, long long calls, long long bytes);
/* One completed operation of a row: start to completion and the time
 * exposed in the application's completion calls (ns). */
void shim_site_time(struct shim_site *s, long long total, long long exposed);
long long shim_now_ns(void);
/* At MPI_Finalize, before the shim releases anything: writes the
 * report where dest says ("1": stderr; else a file, %r the rank), rank
 * 0 for all ranks (a collective over MPI_COMM_WORLD) unless dest has %r. */
void shim_report_write(const char *dest, const char *const *op_names,
                       const char *const *reason_names);

/* The bytes of a call as the report counts them (0 when a type is not
 * known): n elements, the sum of n blocks of one type, of n types. */
long long shim_bytes(long long n, nbcx_datatype t);
long long shim_bytes_v(int n, const int *counts, nbcx_datatype t);
long long shim_bytes_w(int n, const int *counts, const nbcx_datatype *t);
#if SHIM_LARGE_COUNT /* the same for the _c calls' MPI_Count counts */
long long shim_bytes_vc(int n, const MPI_Count *counts, nbcx_datatype t);
long long shim_bytes_wc(int n, const MPI_Count *counts,
                        const nbcx_datatype *t);
#endif
int shim_comm_rank(struct shim_call *c);
int shim_outdegree(struct shim_call *c);

/* site: the caller's return address (the report's call site). */
int shim_begin(struct shim_call *c, int op, MPI_Comm comm, void *site);
/* Converts an MPI datatype (MPI_DATATYPE_NULL -> NBCX_DATATYPE_NULL,
 * which nbcx accepts where the argument is not significant). 0: refused. */
int shim_type(struct shim_call *c, MPI_Datatype t, nbcx_datatype *out);
int shim_types(struct shim_call *c, int n, const MPI_Datatype *t,
               nbcx_datatype **out);
/* The operation of a reduction on datatype t (a user operation is given
 * t itself, as MPI does); 0: refused. */
int shim_op(struct shim_call *c, MPI_Op o, MPI_Datatype t, nbcx_op *out);
/* err: the nbcx call's result. On success makes *req (a generalized
 * request, or for persistent operations an inactive persistent token)
 * and returns MPI_SUCCESS. Arguments that are erroneous for any MPI (a
 * negative count, a root outside the communicator) are reported through
 * the communicator's error handler, and the error is returned (MPI
 * libraries built without argument checks, like Debian's MPICH, would
 * crash on them). Otherwise counts the native fallback and returns -1:
 * the caller then makes the native call. */
int shim_finish(struct shim_call *c, int err, nbcx_request nreq,
                MPI_Request *req);
/* Releases what shim_begin took when the call goes native before the
 * nbcx call was made (reason already in c->reason). */
void shim_native(struct shim_call *c);
/* The early refusal (gen_colls.py's REFUSED): whether the call would go
 * to nbcx on an intracommunicator, so that arguments this rank alone can
 * tell are erroneous are refused before shim_begin joins the
 * communicator; a root outside it (cheap: the library's own size and
 * rank); this rank is the root. shim_refuse reports nbcx error err
 * (as an MPI code of its class, with nbcx's message, as shim_finish
 * does) through comm's error handler, as a checking library does, and
 * returns it, with *request MPI_REQUEST_NULL. */
int shim_precheck(MPI_Comm comm, int op);
int shim_bad_root(MPI_Comm comm, int root);
int shim_is_root(MPI_Comm comm, int root);
int shim_refuse(MPI_Comm comm, int err, MPI_Request *request, int op,
                void *site);
int shim_neighbor_degrees(struct shim_call *c, int *in, int *out);
int shim_comm_size(struct shim_call *c);

/* The large-count wrappers (colls.c, SHIM_LARGE_COUNT) call nbcx's
 * large-count API (nbcx_i<op>_c) with their MPI_Count counts and MPI_Aint
 * displacements as they are, and go native for the reasons the int
 * wrappers do only: nbcx serves counts, displacements and buffers of any
 * size (issue 38). */

/* A send buffer equal to the receive buffer (or to this rank's block of
 * it), which MPI forbids, is run in place where the native library does
 * so (Open MPI's libnbc), and refused with MPI_ERR_BUFFER where it
 * refuses it (MPICH): gen_colls.py's ALIAS_IN_PLACE. */
#if defined(OPEN_MPI)
#define SHIM_ALIAS_IN_PLACE 1
#else
#define SHIM_ALIAS_IN_PLACE 0
#endif
#define SHIM_BUF(b) ((b) == MPI_IN_PLACE ? NBCX_IN_PLACE : (void *)(b))

#endif
