/* mpi.c - the MPI transport: MPI_Isend/MPI_Irecv on a private duplicate
 * of the user's communicator, tested many at a time with MPI_Testsome;
 * for persistent operations, MPI_Send_init/MPI_Recv_init once and
 * MPI_Startall at every start.
 *
 * Errors are returned, not fatal: the duplicate has MPI_ERRORS_RETURN.
 */
#include <stdlib.h>

#include "mpi.h"

_Static_assert(sizeof(MPI_Request) <= 16, "MPI_Request fits a slot");

struct mpi_state {
    MPI_Comm comm;
};

static MPI_Comm comm_of(nbcxi_transport *t)
{
    return ((struct mpi_state *)t->state)->comm;
}

int nbcxi_mpi_error(int mpi_err)
{
    if (mpi_err == MPI_SUCCESS)
        return NBCX_SUCCESS;
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(mpi_err, &cls);
    return cls == MPI_ERR_TRUNCATE ? NBCX_ERR_TRUNCATE : NBCX_ERR_TRANSPORT;
}

MPI_Datatype nbcxi_mpi_type(const struct nbcx_datatype_s *t)
{
    switch (t->id) {
    case 1: return MPI_INT8_T;
    case 2: return MPI_UINT8_T;
    case 3: return MPI_INT16_T;
    case 4: return MPI_UINT16_T;
    case 5: return MPI_INT32_T;
    case 6: return MPI_UINT32_T;
    case 7: return MPI_INT64_T;
    case 8: return MPI_UINT64_T;
    case 9: return MPI_FLOAT;
    case 10: return MPI_DOUBLE;
    case 11: return MPI_BYTE;
    case 12: return MPI_CHAR;
    case 13: return MPI_FLOAT_INT;
    case 14: return MPI_DOUBLE_INT;
    case 15: return MPI_LONG_INT;
    case 16: return MPI_2INT;
    case 17: return MPI_SHORT_INT;
    default: return *(const MPI_Datatype *)t->handle; /* from MPI */
    }
}

static int mpi_isend(nbcxi_transport *t, const void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return nbcxi_mpi_error(MPI_Isend(buf, count, nbcxi_mpi_type(type), peer,
                                     tag, comm_of(t), (MPI_Request *)req));
}

static int mpi_irecv(nbcxi_transport *t, void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return nbcxi_mpi_error(MPI_Irecv(buf, count, nbcxi_mpi_type(type), peer,
                                     tag, comm_of(t), (MPI_Request *)req));
}

static int mpi_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                        int *idx)
{
    (void)t;
    int out = 0;
    /* GCC 12 mistakes MPICH's MPI_STATUSES_IGNORE (a constant pointer)
     * for a zero-length array and warns; the call is correct. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    int rc = MPI_Testsome(n, (MPI_Request *)reqs, &out, idx,
                          MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    *ndone = out == MPI_UNDEFINED ? 0 : out;
    return nbcxi_mpi_error(rc);
}

/* Only on error paths: a receive is cancelled; a send that cannot be
 * cancelled is left to complete on its own (MPI_Request_free). */
static void mpi_cancel(nbcxi_transport *t, void *slot)
{
    (void)t;
    MPI_Request *req = slot;
    if (*req == MPI_REQUEST_NULL)
        return;
    MPI_Cancel(req);
    int flag = 0;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (!flag && *req != MPI_REQUEST_NULL)
        MPI_Request_free(req);
}

static int mpi_send_init(nbcxi_transport *t, const void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return nbcxi_mpi_error(MPI_Send_init(buf, count, nbcxi_mpi_type(type),
                                         peer, tag, comm_of(t),
                                         (MPI_Request *)req));
}

static int mpi_recv_init(nbcxi_transport *t, void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return nbcxi_mpi_error(MPI_Recv_init(buf, count, nbcxi_mpi_type(type),
                                         peer, tag, comm_of(t),
                                         (MPI_Request *)req));
}

static int mpi_start(nbcxi_transport *t, int n, void *reqs)
{
    (void)t;
    return nbcxi_mpi_error(MPI_Startall(n, (MPI_Request *)reqs));
}

/* Error paths only: the persistent request stays allocated (an active
 * one may still be freed, MPI then releases it once it completes). */
static void mpi_cancel_prepared(nbcxi_transport *t, void *slot)
{
    (void)t;
    MPI_Cancel((MPI_Request *)slot);
}

static void mpi_free_prepared(nbcxi_transport *t, void *slot)
{
    (void)t;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && *(MPI_Request *)slot != MPI_REQUEST_NULL)
        MPI_Request_free((MPI_Request *)slot);
}

static void mpi_destroy(nbcxi_transport *t)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Comm comm = comm_of(t);
        MPI_Comm_free(&comm);
    }
    free(t->state);
    free(t);
}

static const struct nbcxi_transport_ops mpi_ops = {
    .name = "mpi",
    .req_size = sizeof(MPI_Request),
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .testsome = mpi_testsome,
    .cancel = mpi_cancel,
    .destroy = mpi_destroy,
    .send_init = mpi_send_init,
    .recv_init = mpi_recv_init,
    .start = mpi_start,
    .cancel_prepared = mpi_cancel_prepared,
    .free_prepared = mpi_free_prepared,
};

int nbcxi_mpi_transport_create(MPI_Comm comm, nbcxi_transport **out)
{
    nbcxi_transport *t = calloc(1, sizeof *t);
    struct mpi_state *st = calloc(1, sizeof *st);
    int *ub = NULL, flag = 0;
    if (!t || !st) {
        free(t);
        free(st);
        return NBCX_ERR_NOMEM;
    }
    MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
    st->comm = comm;
    t->ops = &mpi_ops;
    t->state = st;
    t->tag_ub = (flag && ub) ? *ub : 32767; /* the MPI minimum */
    *out = t;
    return NBCX_SUCCESS;
}
