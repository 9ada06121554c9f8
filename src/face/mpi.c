/* face/mpi.c - the MPI face (include/nbcx_mpi.h): communicators, datatypes and operations from MPI.
 *
 * Predefined MPI datatypes and operations with an nbcx equivalent become
 * the built-in handles (fast C kernels, plain memcpy). Everything else is
 * handled with MPI's own machinery: derived datatypes are duplicated and
 * sent as themselves, copied with MPI_Pack/MPI_Unpack and reduced with
 * MPI_Reduce_local; user operations are applied with MPI_Reduce_local.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../transport/mpi/mpi_backend.h"
#include "../progress/request.h"
#include "nbcx_mpi.h"

static bool mpi_ready(void)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    return init && !fin;
}

/* ---- communicators ---- */

/* MPI deletes MPI_COMM_SELF's attributes first thing in MPI_Finalize:
 * the progress thread must stop before MPI does. */
static int at_finalize(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    nbcxi_progress_shutdown();
    NBCXI_TRACE(nbcxi_trace_flush()); /* (exit may never come) */
    return MPI_SUCCESS;
}

/* NBCX_TRACE (base/trace.h): the trace's rank, and its clock-sync record
 * (once, over the first communicator made): the end of a barrier, which
 * every member leaves at about the same moment; nbcx-trace merge shifts
 * each file by its offset to rank 0's. */
static void trace_sync(MPI_Comm comm)
{
    static atomic_flag synced = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&synced))
        return;
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Barrier(comm); /* (the first may be slow: connections) */
    PMPI_Barrier(comm);
    nbcxi_trace_sync(rank, size, nbcxi_now_ns());
}

static void hook_finalize(void)
{
    static atomic_flag hooked = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&hooked))
        return;
    int key;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key,
                               NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
}

/* A progress thread calls MPI concurrently with the application: only
 * legal under MPI_THREAD_MULTIPLE. */
static void check_thread_level(void)
{
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    if (provided == MPI_THREAD_MULTIPLE)
        return;
    const char *level = provided == MPI_THREAD_SERIALIZED ? "SERIALIZED"
                        : provided == MPI_THREAD_FUNNELED ? "FUNNELED"
                                                          : "SINGLE";
    char why[160];
    snprintf(why, sizeof why,
             "MPI_THREAD_MULTIPLE, but MPI provides MPI_THREAD_%s "
             "(initialise MPI with PMPI_Init_thread(..., "
             "MPI_THREAD_MULTIPLE, ...))", level);
    nbcxi_progress_threads_allowed(false, why);
}

/* Tells the placement code which cores the processes of this node run
 * on, so that "auto" can find an idle one. Collective over comm (called
 * inside nbcx_comm_from_mpi, itself collective); best effort. Host-name
 * hashes that collide would only merge two nodes' lists. */
enum { BINDING_LEN = 256 };

/* The node is the host name, not MPI_COMM_TYPE_SHARED: a library told
 * to treat every process as remote (MPICH's MPIR_CVAR_NOLOCAL, as used on
 * an emulated network) splits into singletons, and each process would
 * then take its neighbour's core for an idle one. */
static int host_color(void)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    unsigned h = 5381;
    for (int i = 0; i < len && name[i]; i++)
        h = h * 33 + (unsigned char)name[i];
    return (int)(h & 0x7fffffff);
}

static void share_bindings(MPI_Comm comm)
{
    MPI_Comm node;
    int rank;
    PMPI_Comm_rank(comm, &rank);
    if (PMPI_Comm_split(comm, host_color(), rank, &node) != MPI_SUCCESS)
        return;
    int me, n;
    PMPI_Comm_rank(node, &me);
    PMPI_Comm_size(node, &n);
    char mine[BINDING_LEN] = "";
    nbcxi_placement_self(mine, sizeof mine);
    char *all = calloc((size_t)n, BINDING_LEN);
    const char **lists = calloc((size_t)n, sizeof *lists);
    if (all && lists &&
        PMPI_Allgather(mine, BINDING_LEN, MPI_CHAR, all, BINDING_LEN,
                      MPI_CHAR, node) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            all[(size_t)i * BINDING_LEN + BINDING_LEN - 1] = '\0';
            lists[i] = all + (size_t)i * BINDING_LEN;
        }
        nbcxi_placement_node(lists, n, me);
    }
    free(lists);
    free(all);
    PMPI_Comm_free(&node);
}

/* The neighbourhood topology of an MPI communicator, attached to the new
 * nbcx communicator: a Cartesian grid by its dimensions and periods (nbcx
 * derives the neighbours in MPI_Cart_shift order, and MPI-4.1's pairing
 * of the -1 and +1 blocks), a distributed graph by MPI_Dist_graph_
 * neighbors (the order of the buffer blocks), an old-style graph by
 * MPI_Graph_neighbors (sources and destinations both). None: nothing. */
static int attach_topology(MPI_Comm comm, nbcx_comm c)
{
    int status = MPI_UNDEFINED, rank, err = NBCX_SUCCESS;
    if (PMPI_Topo_test(comm, &status) != MPI_SUCCESS)
        return NBCX_ERR_TOPOLOGY;
    PMPI_Comm_rank(comm, &rank);
    if (status == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        int *v = malloc(sizeof(int) * 3 * (size_t)(nd > 0 ? nd : 1));
        if (!v)
            return NBCX_ERR_NOMEM;
        if (PMPI_Cart_get(comm, nd, v, v + nd, v + 2 * nd) != MPI_SUCCESS)
            err = NBCX_ERR_TOPOLOGY;
        else
            err = nbcx_comm_set_cart(c, nd, v, v + nd);
        free(v);
    } else if (status == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        size_t n = (size_t)(in > 0 ? in : 1) + (size_t)(out > 0 ? out : 1);
        int *v = malloc(sizeof(int) * 2 * n); /* lists, then weights */
        if (!v)
            return NBCX_ERR_NOMEM;
        int *src = v, *dst = v + (in > 0 ? in : 1);
        if (PMPI_Dist_graph_neighbors(comm, in, src, v + n, out, dst,
                                     v + n + (in > 0 ? in : 1)) !=
            MPI_SUCCESS)
            err = NBCX_ERR_TOPOLOGY;
        else
            err = nbcx_comm_set_neighbors(c, in, src, out, dst);
        free(v);
    } else if (status == MPI_GRAPH) {
        int n = 0;
        PMPI_Graph_neighbors_count(comm, rank, &n);
        int *v = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
        if (!v)
            return NBCX_ERR_NOMEM;
        if (PMPI_Graph_neighbors(comm, rank, n, v) != MPI_SUCCESS)
            err = NBCX_ERR_TOPOLOGY;
        else
            err = nbcx_comm_set_neighbors(c, n, v, n, v);
        free(v);
    }
    return err;
}

/* ---- the transport under a communicator: NBCX_TRANSPORT ---- */

/* The bootstrap of a backend created by name (transport.h): MPI_Allgather
 * and MPI_Allreduce on the duplicate. */
static int boot_allgather(void *ctx, const void *in, size_t bytes, void *out)
{
    if (bytes > (size_t)INT32_MAX)
        return NBCX_ERR_ARG;
    return nbcxi_mpi_error(PMPI_Allgather(in, (int)bytes, MPI_BYTE, out,
                                         (int)bytes, MPI_BYTE,
                                         *(MPI_Comm *)ctx));
}

static int boot_first_failed(void *ctx, bool ok, int *rank)
{
    int me, v;
    PMPI_Comm_rank(*(MPI_Comm *)ctx, &me);
    v = ok ? INT_MAX : me;
    int err = nbcxi_mpi_error(PMPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT,
                                            MPI_MIN, *(MPI_Comm *)ctx));
    *rank = err == NBCX_SUCCESS && v != INT_MAX ? v : -1;
    return err;
}

/* The backend NBCX_TRANSPORT names ("mpi", the default: NULL), or an
 * error with the names there are. */
static int chosen_backend(const struct nbcxi_transport_ops **ops)
{
    *ops = NULL;
    const char *name = nbcxi_getenv("NBCX_TRANSPORT");
    if (!name || !*name || strcmp(name, "mpi") == 0)
        return NBCX_SUCCESS;
    char known[128] = "mpi";
    if ((*ops = nbcxi_backend_named(name, known, sizeof known)))
        return NBCX_SUCCESS;
    return nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_from_mpi: "
                       "NBCX_TRANSPORT=%s: no such transport in this build "
                       "of nbcx (there are: %s)", name, known);
}

int nbcx_comm_from_mpi(MPI_Comm comm, nbcx_comm *out)
{
    if (!out)
        return NBCX_ERR_ARG;
    *out = NBCX_COMM_NULL;
    if (!mpi_ready() || comm == MPI_COMM_NULL)
        return NBCX_ERR_COMM;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return NBCX_ERR_COMM; /* intercommunicators are not supported */
    const struct nbcxi_transport_ops *byname;
    int err = chosen_backend(&byname);
    if (err != NBCX_SUCCESS)
        return err;
    MPI_Comm dup;
    int rc = PMPI_Comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS)
        return nbcxi_mpi_error(rc);
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    check_thread_level();
    hook_finalize();
    share_bindings(dup);
    NBCXI_TRACE(trace_sync(dup));
    int rank, size;
    PMPI_Comm_rank(dup, &rank);
    PMPI_Comm_size(dup, &size);
    /* On another transport (NBCX_TRANSPORT, e.g. UCX), MPI starts it
     * (and gives the topology), and the MPI transport is kept for
     * nbcx_comm_set_transport(comm, "mpi") (base/comm.c). */
    nbcxi_transport *mpi_tp, *tp;
    err = nbcxi_mpi_transport_create(dup, &mpi_tp); /* owns dup */
    if (err != NBCX_SUCCESS) {
        PMPI_Comm_free(&dup);
        return err;
    }
    if (byname) {
        struct nbcxi_bootstrap boot = { .rank = rank, .size = size,
                                        .allgather = boot_allgather,
                                        .first_failed = boot_first_failed,
                                        .ctx = &dup };
        if ((err = byname->create(&boot, &tp)) != NBCX_SUCCESS) {
            mpi_tp->ops->destroy(mpi_tp); /* frees dup */
            return err;
        }
    } else {
        tp = mpi_tp;
        mpi_tp = NULL;
    }
    err = nbcxi_comm_create(rank, size, tp, out); /* (takes tp) */
    if (err == NBCX_SUCCESS && mpi_tp) {
        nbcxi_comm_keep_transport(*out, mpi_tp);
        mpi_tp = NULL;
    }
    if (err == NBCX_SUCCESS)
        err = attach_topology(dup, *out);
    if (mpi_tp)
        mpi_tp->ops->destroy(mpi_tp);
    /* Every member has its communicator, or none has: a step above that
     * failed on one member alone (out of memory) must not leave the
     * others with a communicator whose first collective would hang.
     * Over the caller's comm: dup went with a failed transport. */
    int who;
    int agreed = boot_first_failed(&comm, err == NBCX_SUCCESS, &who);
    if (err == NBCX_SUCCESS && (agreed != NBCX_SUCCESS || who >= 0)) {
        nbcx_comm_free(out);
        err = agreed != NBCX_SUCCESS
                  ? agreed
                  : nbcxi_error(NBCX_ERR_TRANSPORT, "nbcx_comm_from_mpi: "
                                "rank %d could not make its communicator",
                                who);
    } else if (err != NBCX_SUCCESS && *out != NBCX_COMM_NULL) {
        nbcx_comm_free(out);
    }
    if (err == NBCX_SUCCESS)
        nbcxi_progress_prepare(); /* (after share_bindings: placed so) */
    return err;
}

/* ---- datatypes ---- */

/* The built-in nbcx integer type of `bytes` bytes, or 0. */
static uintptr_t integer_of(int bytes, bool is_signed)
{
    switch (bytes) {
    case 1: return is_signed ? 1u : 2u;
    case 2: return is_signed ? 3u : 4u;
    case 4: return is_signed ? 5u : 6u;
    case 8: return is_signed ? 7u : 8u;
    default: return 0;
    }
}

/* The size of a predefined type the library may leave undefined
 * (MPI_DATATYPE_NULL for an optional Fortran type), or 0. */
static int size_of(MPI_Datatype t)
{
    int size = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS)
        return 0;
    return size;
}

/* Whether t is one of Fortran's named integer types (MPI_INTEGER16 too:
 * no C type nbcx knows, it stays a face type). */
static bool fortran_integer(MPI_Datatype t)
{
    static const MPI_Datatype ints[] = {
        MPI_INTEGER,
#ifdef MPI_INTEGER1
        MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
        MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
        MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
        MPI_INTEGER8,
#endif
#ifdef MPI_INTEGER16
        MPI_INTEGER16,
#endif
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i] != MPI_DATATYPE_NULL && t == ints[i])
            return true;
    return false;
}

/* The built-in nbcx type for a predefined MPI type whose values nbcx
 * stores and combines as its own C types, or 0. By MPI 4.0's groups
 * (section 6.9.2): the C and Fortran integers (MPI_AINT, MPI_OFFSET,
 * MPI_COUNT, MPI_INTEGERn by their size), the floating-point types that
 * are C's float and double (MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REALn of
 * 4 and 8 bytes), the logical types (MPI_C_BOOL, Fortran's MPI_LOGICAL:
 * nbcx's logical kernels write 0 and 1, gfortran's .false. and .true.),
 * bytes, characters (MPI_CHAR as C's char, MPI_CHARACTER as the library
 * does: below), and the pair types of the C struct layouts. */
static uintptr_t builtin_of(MPI_Datatype t)
{
#define INTEGER(T, SIGNED) integer_of((int)sizeof(T), SIGNED)
    if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR) return 1;
    if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR) return 2;
    if (t == MPI_INT16_T) return 3;
    if (t == MPI_UINT16_T) return 4;
    if (t == MPI_INT32_T) return 5;
    if (t == MPI_UINT32_T) return 6;
    if (t == MPI_INT64_T) return 7;
    if (t == MPI_UINT64_T) return 8;
    if (t == MPI_SHORT) return INTEGER(short, true);
    if (t == MPI_UNSIGNED_SHORT) return INTEGER(unsigned short, false);
    if (t == MPI_INT) return INTEGER(int, true);
    if (t == MPI_UNSIGNED) return INTEGER(unsigned, false);
    if (t == MPI_LONG) return INTEGER(long, true);
    if (t == MPI_UNSIGNED_LONG) return INTEGER(unsigned long, false);
    if (t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT)
        return INTEGER(long long, true);
    if (t == MPI_UNSIGNED_LONG_LONG) return INTEGER(unsigned long long, false);
    if (t == MPI_AINT) return INTEGER(MPI_Aint, true);
    if (t == MPI_OFFSET) return INTEGER(MPI_Offset, true);
    if (t == MPI_COUNT) return INTEGER(MPI_Count, true);
    if (t == MPI_C_BOOL) return INTEGER(_Bool, false);
    if (t == MPI_FLOAT) return 9;
    if (t == MPI_DOUBLE) return 10;
#ifdef OPEN_MPI
    /* Open MPI reduces MPI_BYTE with every operation, as unsigned 8-bit
     * integers (MPI defines only the bitwise ones on it, and MPICH
     * refuses the others): nbcx does the same there. */
    if (t == MPI_BYTE) return INTEGER(unsigned char, false);
#endif
    if (t == MPI_BYTE || t == MPI_PACKED) return 11;
    /* MPI_CHAR is in none of the standard's reduction groups, but both
     * Open MPI and MPICH reduce it with every arithmetic, logical and
     * bitwise operation, as C's char (MPICH's own operation tests rely
     * on it): nbcx combines it as the 8-bit integer of char's
     * signedness, with the same results, rather than refusing a call
     * the native library serves. */
    if (t == MPI_CHAR) return INTEGER(char, CHAR_MIN < 0);
    if (t == MPI_FLOAT_INT) return 13;
    if (t == MPI_DOUBLE_INT) return 14;
    if (t == MPI_LONG_INT) return 15;
    if (t == MPI_2INT) return 16;
    if (t == MPI_SHORT_INT) return 17;
#undef INTEGER
    /* Fortran's named types, by the size this library gives them. */
    if (fortran_integer(t) && integer_of(size_of(t), true))
        return integer_of(size_of(t), true);
    if (t == MPI_LOGICAL)
        return integer_of(size_of(t), false);
    static const MPI_Datatype freal[] = {
        MPI_REAL, MPI_DOUBLE_PRECISION,
#ifdef MPI_REAL4
        MPI_REAL4,
#endif
#ifdef MPI_REAL8
        MPI_REAL8,
#endif
    };
    for (size_t i = 0; i < sizeof freal / sizeof freal[0]; i++)
        if (t == freal[i] && t != MPI_DATATYPE_NULL) {
            int size = size_of(t);
            return size == sizeof(float) ? 9 : size == sizeof(double) ? 10 : 0;
        }
    if (t == MPI_2INTEGER && size_of(MPI_INTEGER) == sizeof(int))
        return 16;
    /* Fortran's characters: reduced as unsigned by Open MPI, as C's char
     * by MPICH; nbcx follows the library. */
    if (t == MPI_CHARACTER && size_of(t) == 1)
#ifdef OPEN_MPI
        return integer_of(1, false);
#else
        return integer_of(1, CHAR_MIN < 0);
#endif
    return 0;
}

/* MPICH 4.0's MPI_Pack and MPI_Unpack refuse a NULL buffer even with a
 * type map of absolute addresses (MPI_BOTTOM, which is NULL): the same
 * count elements, described from a non-NULL base (one block of count
 * elements at minus that base's address). */
static int from_base(int count, MPI_Datatype t, MPI_Datatype *shifted,
                     const char **base)
{
    static const char anchor;
    MPI_Aint disp = -(MPI_Aint)(uintptr_t)&anchor;
    *base = &anchor;
    int rc = PMPI_Type_create_hindexed(1, &count, &disp, t, shifted);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(shifted)) != MPI_SUCCESS)
        PMPI_Type_free(shifted);
    return rc;
}

static int face_pack(const void *src, int count, struct nbcx_datatype_s *t,
                     void *dst)
{
    int pos = 0, rc;
    int bytes = (int)((size_t)count * t->size);
    MPI_Datatype type = *(MPI_Datatype *)t->handle, shifted;
    if (src) {
        rc = PMPI_Pack(src, count, type, dst, bytes, &pos, MPI_COMM_SELF);
    } else {
        const char *base;
        if ((rc = from_base(count, type, &shifted, &base)) == MPI_SUCCESS) {
            rc = PMPI_Pack(base, 1, shifted, dst, bytes, &pos, MPI_COMM_SELF);
            PMPI_Type_free(&shifted);
        }
    }
    return nbcxi_mpi_error(rc);
}

static int face_unpack(const void *src, int count, struct nbcx_datatype_s *t,
                       void *dst)
{
    int pos = 0, rc;
    int bytes = (int)((size_t)count * t->size);
    MPI_Datatype type = *(MPI_Datatype *)t->handle, shifted;
    if (dst) {
        rc = PMPI_Unpack(src, bytes, &pos, dst, count, type, MPI_COMM_SELF);
    } else {
        const char *base;
        if ((rc = from_base(count, type, &shifted, &base)) == MPI_SUCCESS) {
            rc = PMPI_Unpack(src, bytes, &pos, (char *)(uintptr_t)base, 1,
                             shifted, MPI_COMM_SELF);
            PMPI_Type_free(&shifted);
        }
    }
    return nbcxi_mpi_error(rc);
}

/* A predefined operation on a face type: the library's own
 * MPI_Reduce_local, on the handle the program gave for a predefined type
 * (a duplicate of one is no longer predefined, and the libraries refuse
 * predefined operations on it) or on nbcx's duplicate of a derived
 * type. */
static int face_reduce(const void *in, void *inout, int count,
                       struct nbcx_datatype_s *t, int op_id)
{
    int rc = PMPI_Reduce_local(in, inout, count, *(MPI_Datatype *)t->handle,
                               nbcxi_mpi_op(op_id));
    return rc == MPI_SUCCESS ? NBCX_SUCCESS : NBCX_ERR_OP;
}

/* Whether the library combines this type with a predefined operation:
 * MPI_Reduce_local of no elements checks the pair and touches no memory
 * (both libraries; a derived type may hold absolute addresses). Open MPI
 * refuses predefined operations on most derived types, MPICH on many:
 * nbcx refuses them where the library does, at the start, and the shim
 * then hands the call to the library. */
/* Derived types are duplicates nbcx owns (the program may free its own
 * handle while an operation is in flight); predefined ones are never
 * freed. t->handle points at this (its first field is the MPI_Datatype
 * the transport sends with). */
struct face_handle {
    MPI_Datatype type;
    bool owned;
};

/* MPI 4.0's groups (section 6.9.2) of the predefined types that stay
 * face types (the others are built-ins, checked by base/op.c), and the
 * predefined operations defined on each. MPICH 4.0.2's MPI_Reduce_local
 * accepts some pairs its kernels then abort on (MPI_LONG_DOUBLE with
 * MPI_LAND), so for these nbcx keeps to the
 * standard before it asks the library. */
enum { G_FLOAT = 1, G_COMPLEX = 2, G_PAIR = 4, G_INT = 8, G_LOGICAL = 16 };

static int group_of(MPI_Datatype t)
{
    const MPI_Datatype floats[] = {
        MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION,
#ifdef MPI_REAL2
        MPI_REAL2,
#endif
#ifdef MPI_REAL4
        MPI_REAL4,
#endif
#ifdef MPI_REAL8
        MPI_REAL8,
#endif
#ifdef MPI_REAL16
        MPI_REAL16,
#endif
    };
    const MPI_Datatype complexes[] = {
        MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
#ifdef MPI_COMPLEX8
        MPI_COMPLEX8,
#endif
#ifdef MPI_COMPLEX16
        MPI_COMPLEX16,
#endif
#ifdef MPI_COMPLEX32
        MPI_COMPLEX32,
#endif
#ifdef MPI_CXX_FLOAT_COMPLEX
        MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX,
        MPI_CXX_LONG_DOUBLE_COMPLEX,
#endif
    };
    const MPI_Datatype pairs[] = {
        MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
        MPI_LONG_DOUBLE_INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER,
    };
#define IN(LIST, G)                                                           \
    for (size_t i = 0; i < sizeof LIST / sizeof LIST[0]; i++)                 \
        if (LIST[i] != MPI_DATATYPE_NULL && t == LIST[i])                     \
            return G;
    IN(floats, G_FLOAT)
    IN(complexes, G_COMPLEX)
    IN(pairs, G_PAIR)
#undef IN
    if (fortran_integer(t))
        return G_INT;
#ifdef MPI_CXX_BOOL
    if (t == MPI_CXX_BOOL)
        return G_LOGICAL;
#endif
    if (t == MPI_LOGICAL || t == MPI_C_BOOL)
        return G_LOGICAL;
    return 0; /* characters, MPI_WCHAR, ...: no operation */
}

/* Whether the standard defines predefined operation op_id on group g. */
static bool defined_on(int g, int op_id)
{
    switch (op_id) {
    case 1: case 2: return g & (G_INT | G_FLOAT | G_COMPLEX); /* SUM PROD */
    case 3: case 4: return g & (G_INT | G_FLOAT);             /* MIN MAX */
    case 5: case 6: case 7: return g & G_LOGICAL;   /* LAND LOR LXOR */
    case 8: case 9: case 10: return g & G_INT;      /* BAND BOR BXOR */
    default: return g & G_PAIR;                     /* MINLOC MAXLOC */
    }
}

static int face_check(const struct nbcx_datatype_s *t, int op_id)
{
    const struct face_handle *h = t->handle;
    if (!h->owned && !defined_on(group_of(h->type), op_id))
        return NBCX_ERR_OP; /* a predefined type */
    char scratch[1] = { 0 };
    int rc = PMPI_Reduce_local(scratch, scratch, 0,
                               *(MPI_Datatype *)t->handle,
                               nbcxi_mpi_op(op_id));
    return rc == MPI_SUCCESS ? NBCX_SUCCESS : NBCX_ERR_OP;
}


static void face_release(struct nbcx_datatype_s *t)
{
    struct face_handle *h = t->handle;
    int fin = 0;
    PMPI_Finalized(&fin);
    if (!fin && h->owned)
        PMPI_Type_free(&h->type);
    free(h);
}

static const struct nbcxi_type_face mpi_type_face = {
    .pack = face_pack,
    .unpack = face_unpack,
    .reduce = face_reduce,
    .check = face_check,
    .release = face_release,
};

/* The type's combiner. MPI 4.0's large-count query first: MPICH 4.0.2's
 * MPI_Type_get_envelope fails (through the error handler, fatal by
 * default) on a type made by a large-count constructor
 * (MPI_Type_create_indexed_block_c, ...: what mpi4py 4 calls) even when
 * its values fit an int; MPI_Type_get_envelope_c answers for every type. */
static int type_combiner(MPI_Datatype type, int *combiner)
{
#if MPI_VERSION >= 4
    MPI_Count ni, na, nl, nt;
    return PMPI_Type_get_envelope_c(type, &ni, &na, &nl, &nt, combiner);
#else
    int ni, na, nt;
    return PMPI_Type_get_envelope(type, &ni, &na, &nt, combiner);
#endif
}

int nbcx_datatype_from_mpi(MPI_Datatype type, nbcx_datatype *out)
{
    if (!out)
        return NBCX_ERR_ARG;
    *out = NBCX_DATATYPE_NULL;
    if (!mpi_ready() || type == MPI_DATATYPE_NULL)
        return NBCX_ERR_TYPE;
    uintptr_t id = builtin_of(type);
    if (id) {
        *out = (nbcx_datatype)id;
        return NBCX_SUCCESS;
    }
    int size, combiner;
    MPI_Aint lb, extent, tlb, textent;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS ||
        type_combiner(type, &combiner) != MPI_SUCCESS)
        return NBCX_ERR_TYPE;
    bool named = combiner == MPI_COMBINER_NAMED;
    struct nbcx_datatype_s *t = nbcxi_pool_alloc(&nbcxi_type_pool);
    struct face_handle *h = malloc(sizeof *h);
    int rc = MPI_SUCCESS;
    if (t && h) {
        h->type = type;
        h->owned = !named;
        if (!named)
            rc = PMPI_Type_dup(type, &h->type);
    }
    if (!t || !h || rc != MPI_SUCCESS) {
        nbcxi_pool_free(&nbcxi_type_pool, t, NBCXI_DEAD_MAGIC);
        free(h);
        return t && h ? NBCX_ERR_TYPE : NBCX_ERR_NOMEM;
    }
    t->magic = NBCXI_TYPE_MAGIC;
    t->id = 0;
    t->name = named ? "mpi-predefined" : "mpi";
    t->size = (size_t)size;
    t->extent = extent;
    t->true_lb = tlb;
    t->true_extent = textent;
    t->contiguous = size == extent && lb == 0 && tlb == 0 && textent == size;
    t->face = &mpi_type_face;
    t->handle = h;
    atomic_init(&t->refs, 1);
    *out = t;
    return NBCX_SUCCESS;
}

/* ---- operations ---- */

MPI_Op nbcxi_mpi_op(int op_id)
{
    switch (op_id) {
    case 1: return MPI_SUM;
    case 2: return MPI_PROD;
    case 3: return MPI_MIN;
    case 4: return MPI_MAX;
    case 5: return MPI_LAND;
    case 6: return MPI_LOR;
    case 7: return MPI_LXOR;
    case 8: return MPI_BAND;
    case 9: return MPI_BOR;
    case 10: return MPI_BXOR;
    case 11: return MPI_MINLOC;
    default: return MPI_MAXLOC;
    }
}

/* A user MPI operation, applied with MPI_Reduce_local, and the
 * predefined datatype handle to give it (MPI_DATATYPE_NULL: the MPI type
 * of nbcx's type). */
struct user_op {
    MPI_Op op;
    MPI_Datatype type;
};

static void user_op_apply(const void *in, void *inout, int count,
                          nbcx_datatype type, void *ctx)
{
    struct user_op *u = ctx;
    MPI_Datatype t = u->type != MPI_DATATYPE_NULL
                         ? u->type
                         : nbcxi_mpi_type(nbcxi_type(type));
    PMPI_Reduce_local(in, inout, count, t, u->op);
}

static void user_op_release(struct nbcx_op_s *op)
{
    free(op->ctx);
}

int nbcx_op_from_mpi_typed(MPI_Op op, MPI_Datatype type, nbcx_op *out)
{
    if (!out)
        return NBCX_ERR_ARG;
    *out = NBCX_OP_NULL;
    if (!mpi_ready() || op == MPI_OP_NULL)
        return NBCX_ERR_OP;
    for (int id = NBCXI_OP_FIRST; id <= NBCXI_OP_LAST; id++) {
        if (op == nbcxi_mpi_op(id)) {
            *out = (nbcx_op)(uintptr_t)id;
            return NBCX_SUCCESS;
        }
    }
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return NBCX_ERR_OP; /* not reduction operations for collectives */
    int commute = 0;
    if (PMPI_Op_commutative(op, &commute) != MPI_SUCCESS)
        return NBCX_ERR_OP;
    int combiner = MPI_UNDEFINED;
    if (type != MPI_DATATYPE_NULL &&
        type_combiner(type, &combiner) != MPI_SUCCESS)
        return NBCX_ERR_TYPE;
    struct user_op *ctx = malloc(sizeof *ctx);
    if (!ctx)
        return NBCX_ERR_NOMEM;
    ctx->op = op;
    ctx->type = combiner == MPI_COMBINER_NAMED ? type : MPI_DATATYPE_NULL;
    int err = nbcx_op_create(user_op_apply, commute, ctx, out);
    if (err != NBCX_SUCCESS) {
        free(ctx);
        return err;
    }
    (*out)->release = user_op_release;
    return NBCX_SUCCESS;
}

int nbcx_op_from_mpi(MPI_Op op, nbcx_op *out)
{
    return nbcx_op_from_mpi_typed(op, MPI_DATATYPE_NULL, out);
}

int nbcx_error_to_mpi(int err)
{
    switch (err) {
    case NBCX_SUCCESS: return MPI_SUCCESS;
    case NBCX_ERR_COUNT: return MPI_ERR_COUNT;
    case NBCX_ERR_BUFFER: return MPI_ERR_BUFFER;
    case NBCX_ERR_ALIAS: return MPI_ERR_BUFFER;
    case NBCX_ERR_ROOT: return MPI_ERR_ROOT;
    case NBCX_ERR_RANK: return MPI_ERR_RANK;
    case NBCX_ERR_TYPE: return MPI_ERR_TYPE;
    case NBCX_ERR_OP: return MPI_ERR_OP;
    case NBCX_ERR_COMM: return MPI_ERR_COMM;
    case NBCX_ERR_REQUEST: return MPI_ERR_REQUEST;
    case NBCX_ERR_TAG: return MPI_ERR_TAG;
    case NBCX_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case NBCX_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case NBCX_ERR_INTERN: return MPI_ERR_INTERN;
    case NBCX_ERR_TOPOLOGY: return MPI_ERR_TOPOLOGY;
    case NBCX_ERR_ARG:
    case NBCX_ERR_IN_PLACE:
    case NBCX_ERR_NODE:
    case NBCX_ERR_ALGORITHM: return MPI_ERR_ARG;
    default: return MPI_ERR_OTHER;
    }
}
