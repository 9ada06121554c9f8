/* pmpi_lifetimes.c - MPI's rules for objects freed while an operation
 * that uses them is in flight, through the shim: MPI_Op_free,
 * MPI_Type_free, MPI_Comm_free and MPI_Info_free between the start and
 * the wait of a nonblocking collective, and between the init and the
 * starts of a persistent one; MPI_Request_free of an active request.
 * Each operation must complete as if the object still existed, with the
 * native blocking collective's result (computed before, with objects
 * that live). Each collective family: reductions (allreduce, reduce,
 * scan, exscan, reduce_scatter_block), rooted and all-to-all data
 * movement (bcast, gather, allgather, alltoall). */
#include "pmpi_test.h"

enum { N = 1000 };

/* A non-commutative user operation on (m, c) pairs of ints: affine maps
 * x -> m x + c composed (inout = in o inout), mod 2^32. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        unsigned m = a[2 * i] * b[2 * i];
        unsigned c = a[2 * i] * b[2 * i + 1] + a[2 * i + 1];
        b[2 * i] = m;
        b[2 * i + 1] = c;
    }
}

/* A commutative one: maximum of the absolute values, on ints. MPI gives
 * it the handle the program passed: MPI_INT (counted otherwise). */
static int g_wrong_handle;
static void absmax(void *in, void *inout, int *len, MPI_Datatype *t)
{
    if (*t != MPI_INT)
        g_wrong_handle++;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int x = abs(a[i]), y = abs(b[i]);
        b[i] = x > y ? x : y;
    }
}

static MPI_Datatype pair_type(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Every second int of 2 n: a vector with gaps. */
static MPI_Datatype gappy_type(void)
{
    MPI_Datatype t;
    MPI_Type_vector(N, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void fill(unsigned *v, int n, int salt)
{
    for (int i = 0; i < n; i++)
        v[i] = (unsigned)(t_rank * 7919 + i * 31 + salt) % 97 + 1;
}

enum red { R_ALLREDUCE, R_REDUCE, R_SCAN, R_EXSCAN, R_RSB, NRED };
static const char *const red_names[NRED] = { "iallreduce", "ireduce",
                                             "iscan", "iexscan",
                                             "ireduce_scatter_block" };

static int start_red(enum red k, const void *sb, void *rb, int n,
                     MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                     MPI_Request *r)
{
    switch (k) {
    case R_ALLREDUCE: return MPI_Iallreduce(sb, rb, n, t, op, comm, r);
    case R_REDUCE: return MPI_Ireduce(sb, rb, n, t, op, 0, comm, r);
    case R_SCAN: return MPI_Iscan(sb, rb, n, t, op, comm, r);
    case R_EXSCAN: return MPI_Iexscan(sb, rb, n, t, op, comm, r);
    default: return MPI_Ireduce_scatter_block(sb, rb, n / t_size, t, op, comm, r);
    }
}

static int blocking_red(enum red k, const void *sb, void *rb, int n,
                        MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    switch (k) {
    case R_ALLREDUCE: return MPI_Allreduce(sb, rb, n, t, op, comm);
    case R_REDUCE: return MPI_Reduce(sb, rb, n, t, op, 0, comm);
    case R_SCAN: return MPI_Scan(sb, rb, n, t, op, comm);
    case R_EXSCAN: return MPI_Exscan(sb, rb, n, t, op, comm);
    default: return MPI_Reduce_scatter_block(sb, rb, n / t_size, t, op, comm);
    }
}

/* Elements of the result this rank checks. */
static int checked(enum red k, int n)
{
    if ((k == R_REDUCE && t_rank != 0) || (k == R_EXSCAN && t_rank == 0))
        return 0;
    return k == R_RSB ? n / t_size : n;
}

/* A user operation (commutative or not) freed after the start, and a
 * duplicated communicator freed after the start too. */
static void op_and_comm_freed(enum red k, int commute)
{
    t_step = red_names[k];
    int n = (N / t_size) * t_size; /* pairs */
    unsigned *in = malloc(sizeof *in * 2 * (size_t)n);
    unsigned *ref = calloc(2 * (size_t)n, sizeof *ref);
    unsigned *got = calloc(2 * (size_t)n, sizeof *got);
    fill(in, 2 * n, k);
    MPI_Datatype pt = pair_type();
    MPI_Op op;
    MPI_Op_create(commute ? (MPI_User_function *)absmax : affine, commute,
                  &op);
    MPI_Datatype t = commute ? MPI_INT : pt;
    int m = commute ? 2 * n : n;
    MPI_OK(blocking_red(k, in, ref, m, t, op, MPI_COMM_WORLD));
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Request r;
    MPI_OK(start_red(k, in, got, m, t, op, dup, &r));
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Type_free(&pt));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int c = checked(k, m) * (commute ? 1 : 2);
    for (int i = 0; i < c; i++)
        if (got[i] != ref[i]) {
            FAIL("%s, %s op freed in flight: element %d is %u, not %u",
                 red_names[k], commute ? "commutative" : "non-commutative",
                 i, got[i], ref[i]);
            break;
        }
    free(in);
    free(ref);
    free(got);
}

/* A derived type with gaps freed after the start, in data movement. */
static void type_freed(int which)
{
    static const char *const names[] = { "ibcast", "igather", "iallgather",
                                         "ialltoall" };
    t_step = names[which];
    size_t span = 2 * (size_t)N * (size_t)t_size + 2;
    int *in = calloc(span, sizeof *in), *ref = calloc(span, sizeof *ref),
        *got = calloc(span, sizeof *got);
    fill((unsigned *)in, (int)span, which);
    MPI_Datatype g = gappy_type(), g2 = gappy_type();
    MPI_Aint lb, ext;
    MPI_Type_get_extent(g, &lb, &ext);
    int blocks = which == 0 ? 1 : 1; /* one gappy element per rank */
    MPI_Request r;
    switch (which) {
    case 0:
        memcpy(ref, in, span * sizeof *in);
        memcpy(got, in, span * sizeof *in);
        MPI_OK(MPI_Bcast(ref, blocks, g, 0, MPI_COMM_WORLD));
        MPI_OK(MPI_Ibcast(got, blocks, g2, 0, MPI_COMM_WORLD, &r));
        break;
    case 1:
        MPI_OK(MPI_Gather(in, 1, g, ref, N, MPI_INT, 0, MPI_COMM_WORLD));
        MPI_OK(MPI_Igather(in, 1, g2, got, N, MPI_INT, 0, MPI_COMM_WORLD, &r));
        break;
    case 2:
        MPI_OK(MPI_Allgather(in, 1, g, ref, N, MPI_INT, MPI_COMM_WORLD));
        MPI_OK(MPI_Iallgather(in, 1, g2, got, N, MPI_INT, MPI_COMM_WORLD, &r));
        break;
    default: {
        /* Rank j's block of the send buffer: N ints with gaps, one
         * extent of g apart; the resized type places them. */
        MPI_Datatype rs, rs2;
        MPI_Type_create_resized(g, 0, ext, &rs);
        MPI_Type_commit(&rs);
        MPI_Type_create_resized(g2, 0, ext, &rs2);
        MPI_Type_commit(&rs2);
        int *big = calloc((size_t)ext * (size_t)t_size + 8, 1);
        fill((unsigned *)big, (int)((size_t)ext * (size_t)t_size / 4), 3);
        MPI_OK(MPI_Alltoall(big, 1, rs, ref, N, MPI_INT, MPI_COMM_WORLD));
        MPI_OK(MPI_Ialltoall(big, 1, rs2, got, N, MPI_INT, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Type_free(&rs2));
        MPI_OK(MPI_Type_free(&g2));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_Type_free(&rs);
        free(big);
        goto compare;
    }
    }
    MPI_OK(MPI_Type_free(&g2));
    CHECK(g2 == MPI_DATATYPE_NULL);
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
compare:
    if (which != 1 || t_rank == 0)
        for (size_t i = 0; i < span; i++)
            if (got[i] != ref[i]) {
                FAIL("%s, type freed in flight: int %zu is %d, not %d",
                     names[which], i, got[i], ref[i]);
                break;
            }
    MPI_Type_free(&g);
    free(in);
    free(ref);
    free(got);
}

/* Persistent: the type, the operation, the info and the communicator
 * freed right after the init; started and waited three times with new
 * inputs; then freed. */
static void persistent_freed(void)
{
#if HAVE_P
    t_step = "persistent";
    int n = N;
    unsigned *in = malloc(sizeof *in * 2 * (size_t)n);
    unsigned *ref = calloc(2 * (size_t)n, sizeof *ref);
    unsigned *got = calloc(2 * (size_t)n, sizeof *got);
    MPI_Datatype pt = pair_type(), keep = pair_type();
    MPI_Op op, keep_op;
    MPI_Op_create(affine, 0, &op);
    MPI_Op_create(affine, 0, &keep_op);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "nbcx_test", "1");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Request r;
    MPI_OK(P(Allreduce)(in, got, n, pt, op, dup, info, &r));
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&pt));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_free(&dup));
    for (int it = 0; it < 3; it++) {
        fill(in, 2 * n, 10 + it);
        MPI_OK(MPI_Allreduce(in, ref, n, keep, keep_op, MPI_COMM_WORLD));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (memcmp(got, ref, sizeof *got * 2 * (size_t)n) != 0)
            FAIL("persistent allreduce, start %d: result differs", it);
    }
    MPI_OK(MPI_Request_free(&r));
    MPI_Op_free(&keep_op);
    MPI_Type_free(&keep);
    free(in);
    free(ref);
    free(got);
#endif
}

/* MPI_Request_free of an active nonblocking collective with a user
 * operation freed too: the operation still completes (the program may
 * not look at the buffer until it knows by other means; a barrier after
 * another collective on the same communicator orders nothing, so only
 * the absence of a crash or a hang and the next collective's result are
 * checked). */
static void request_freed(void)
{
    t_step = "request freed";
    int n = N;
    /* The buffers live until the program ends: the freed operation may
     * still be writing out when this function returns. */
    static int in[N], out[N];
    fill((unsigned *)in, n, 5);
    MPI_Op op;
    MPI_Op_create(absmax, 1, &op);
    MPI_Request r;
    MPI_OK(MPI_Iallreduce(in, out, n, MPI_INT, op, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Op_free(&op));
    int one = 1, sum = 0;
    MPI_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(sum == t_size);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, -1);
    for (int k = 0; k < NRED; k++)
        for (int commute = 0; commute < 2; commute++)
            op_and_comm_freed((enum red)k, commute);
    for (int w = 0; w < 4; w++)
        type_freed(w);
    persistent_freed();
    request_freed();
    t_step = "user operation's datatype";
    CHECK(g_wrong_handle == 0);
    return t_finish("pmpi_lifetimes");
}
