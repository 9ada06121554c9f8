/* mpi.h (internal) - what the MPI transport and the MPI face share. */
#ifndef NBCX_TRANSPORT_MPI_H
#define NBCX_TRANSPORT_MPI_H

#include <mpi.h>

#include "../../base/base.h"

/* The MPI datatype that moves elements of t (built-in or from MPI). */
NBCX_HIDDEN MPI_Datatype nbcxi_mpi_type(const struct nbcx_datatype_s *t);
/* The MPI operation of a built-in nbcx operation id. */
NBCX_HIDDEN MPI_Op nbcxi_mpi_op(int op_id);
/* An nbcx error code for an MPI error code. */
NBCX_HIDDEN int nbcxi_mpi_error(int mpi_err);
/* A transport over comm, which it owns and frees (MPI_Comm_free). */
NBCX_HIDDEN int nbcxi_mpi_transport_create(MPI_Comm comm,
                                           nbcxi_transport **out);
/* The MPI communicator under an MPI transport (nbcx's private one). */
NBCX_HIDDEN MPI_Comm nbcxi_mpi_comm_of(nbcxi_transport *t);

#endif
