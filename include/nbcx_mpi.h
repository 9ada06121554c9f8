/**
 * @file
 * nbcx_mpi.h - the MPI face of nbcx: communicators, datatypes and
 * operations taken from MPI.
 *
 * The MPI transport runs nonblocking point-to-point (MPI_Isend/MPI_Irecv)
 * on a private duplicate of the user's communicator, so nbcx never touches
 * the application's tag space. MPI must be initialised before any of
 * these calls and finalised only after every nbcx communicator, datatype
 * and operation made from MPI objects has been freed.
 */
#ifndef NBCX_MPI_H
#define NBCX_MPI_H

#include <mpi.h>

#include "nbcx.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over comm: duplicates it (MPI_Comm_dup) for nbcx's private
 * use. Free the result with nbcx_comm_free(). A topology attached to comm
 * (MPI_Cart_create, MPI_Dist_graph_create(_adjacent), MPI_Graph_create)
 * becomes the nbcx communicator's neighbourhood (nbcx_comm_set_cart /
 * nbcx_comm_set_neighbors), in the neighbour order MPI's neighbourhood
 * collectives use. Every member gets a communicator, or none does: where
 * one member fails (say NBCX_ERR_NOMEM), the others fail with
 * NBCX_ERR_TRANSPORT and a detail that names it. */
NBCX_API int nbcx_comm_from_mpi(MPI_Comm comm, nbcx_comm *out);

/** Any MPI datatype, derived and non-contiguous included. Predefined MPI
 * types whose values are C types nbcx knows (C and Fortran integers,
 * float, double, the logical types, bytes, characters, the C pair types)
 * map to the built-in handle (free is then a no-op that resets *out);
 * other predefined types (long double, complex, ...) keep the program's
 * handle and are reduced with MPI_Reduce_local on it; derived types are
 * duplicated (MPI_Type_dup: the program may free its own) and moved with
 * MPI's own machinery: sent with the datatype, copied with
 * MPI_Pack/MPI_Unpack, reduced with MPI_Reduce_local where the library
 * reduces them (NBCX_ERR_OP when an operation starts otherwise). A NULL
 * buffer is MPI_BOTTOM with a derived type. Release with
 * nbcx_datatype_free(). */
NBCX_API int nbcx_datatype_from_mpi(MPI_Datatype type, nbcx_datatype *out);

/** Any MPI reduction operation, user-defined included (applied with
 * MPI_Reduce_local; commutativity from MPI_Op_commutative). Predefined
 * operations map to the built-in nbcx operation. Release with
 * nbcx_op_free(). */
NBCX_API int nbcx_op_from_mpi(MPI_Op op, nbcx_op *out);
/** The same for an operation used with `type`: MPI calls a user function
 * with the datatype handle the program passed, so a user operation is
 * given `type` itself when it is a predefined type (an nbcx built-in
 * would otherwise be given as the MPI type of the same C type, e.g.
 * MPI_INT32_T for MPI_INT or MPI_INTEGER), and nbcx's duplicate when it
 * is a derived one (the program may free its own while the operation is
 * in flight). */
NBCX_API int nbcx_op_from_mpi_typed(MPI_Op op, MPI_Datatype type,
                                    nbcx_op *out);

/** The MPI error class that corresponds to an nbcx error code. */
NBCX_API int nbcx_error_to_mpi(int err);

#ifdef __cplusplus
}
#endif

#endif /**< NBCX_MPI_H */
