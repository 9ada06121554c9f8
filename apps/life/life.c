/*
 * life - Conway's Game of Life on a 2-D Cartesian grid of ranks (paper
 * 004's Fig. 16).
 *
 * The ROWS x COLS board (fixed dead border, no wrap-around) is split over
 * an MPI_Cart_create grid (MPI_Dims_create, non-periodic). Each
 * generation exchanges halos with neighbour alltoallw in two phases:
 * first rows with the up/down neighbours (contiguous rows), then columns
 * with the left/right neighbours (an MPI vector type; the columns include
 * the ghost rows just received, which brings the corner cells). The
 * live-cell count is reduced with allreduce every generation. Overlap:
 * the interior cells need no halo and are computed while phase 1 runs;
 * the first and last rows (without their end cells) while phase 2 runs.
 *
 * Answer: the sum over generations of the live count, the final live
 * count and a hash of the final board; verified against a sequential run
 * on rank 0 (boards up to 4096 x 4096). All integers: exact.
 *
 *   mpiexec -n 4 ./app_life --rows 512 --cols 512 --gens 100 --variant nbcx
 */
#include "../common/app.h"

static long rows = 64, cols = 64, gens = 20;
static int verify = 1;

static int option(const char *k, const char *v)
{
    int bad = 0;
    if (!strcmp(k, "rows"))
        rows = app_atol(v, 1, 1 << 16, &bad);
    else if (!strcmp(k, "cols"))
        cols = app_atol(v, 1, 1 << 16, &bad);
    else if (!strcmp(k, "n"))
        rows = cols = app_atol(v, 1, 1 << 16, &bad);
    else if (!strcmp(k, "gens"))
        gens = app_atol(v, 0, 1000000, &bad);
    else if (!strcmp(k, "verify"))
        verify = (int)app_atol(v, 0, 1, &bad);
    else
        return 0;
    return bad ? -1 : 1;
}

static int alive0(long i, long j) /* the initial board: ~30% alive */
{
    return app_unit((uint64_t)i * 1000003u + (uint64_t)j) < 0.3;
}

/* One cell's next state on a board with row stride w (ghosts around). */
static inline unsigned char next(const unsigned char *b, long w, long i,
                                 long j)
{
    const unsigned char *c = b + i * w + j;
    int n = c[-w - 1] + c[-w] + c[-w + 1] + c[-1] + c[1] + c[w - 1] + c[w] +
            c[w + 1];
    return (unsigned char)(n == 3 || (n == 2 && c[0]));
}
static void update(const unsigned char *b, unsigned char *o, long w, long i0,
                   long i1, long j0, long j1)
{
    for (long i = i0; i < i1; i++)
        for (long j = j0; j < j1; j++)
            o[i * w + j] = next(b, w, i, j);
}

static uint64_t cell_hash(long i, long j)
{
    return app_hash(((uint64_t)i << 32) ^ (uint64_t)j);
}

/* The sequential reference on the whole board. */
static void reference(int64_t *sum, int64_t *last, uint64_t *hash)
{
    long w = cols + 2;
    unsigned char *a = calloc((size_t)(rows + 2) * (size_t)w, 1);
    unsigned char *b = calloc((size_t)(rows + 2) * (size_t)w, 1);
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++)
            a[(i + 1) * w + j + 1] = (unsigned char)alive0(i, j);
    *sum = 0;
    for (long g = 0; g < gens; g++) {
        update(a, b, w, 1, rows + 1, 1, cols + 1);
        unsigned char *t = a;
        a = b;
        b = t;
        int64_t live = 0;
        for (long i = 1; i <= rows; i++)
            for (long j = 1; j <= cols; j++)
                live += a[i * w + j];
        *sum += live;
        *last = live;
    }
    *hash = 0;
    for (long i = 1; i <= rows; i++)
        for (long j = 1; j <= cols; j++)
            if (a[i * w + j])
                *hash += cell_hash(i - 1, j - 1);
    if (gens == 0) {
        *last = 0;
        for (long i = 1; i <= rows; i++)
            for (long j = 1; j <= cols; j++)
                *last += a[i * w + j];
    }
    free(a);
    free(b);
}

static void run(struct app_result *res)
{
    int size, dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2], rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MP(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 2, coords);
    /* Halos on the Cartesian communicator, the live count on the world:
     * Open MPI 4.1 gives no MPI_TAG_UB on communicators derived from a
     * Cartesian one, so nbcx assumes MPI's minimum there (8 tag slots, 4
     * for persistent requests) and 5 would not fit. */
    struct app_comm c, wc;
    app_comm_make(cart, &c);
    app_comm_make(MPI_COMM_WORLD, &wc);
    /* My block: rows [r0, r0+nr), cols [c0, c0+nc). */
    long nr = rows / dims[0] + (coords[0] < rows % dims[0]);
    long r0 = coords[0] * (rows / dims[0]) +
              (coords[0] < rows % dims[0] ? coords[0] : rows % dims[0]);
    long nc = cols / dims[1] + (coords[1] < cols % dims[1]);
    long c0 = coords[1] * (cols / dims[1]) +
              (coords[1] < cols % dims[1] ? coords[1] : cols % dims[1]);
    long w = nc + 2;
    size_t bytes = (size_t)(nr + 2) * (size_t)w;
    unsigned char *board[2] = { calloc(bytes, 1), calloc(bytes, 1) };
    for (long i = 0; i < nr; i++)
        for (long j = 0; j < nc; j++)
            board[0][(i + 1) * w + j + 1] =
                (unsigned char)alive0(r0 + i, c0 + j);

    /* Halo types: a row of nc cells (contiguous), a column of nr + 2. */
    MPI_Datatype col;
    MP(MPI_Type_vector((int)nr + 2, 1, (int)w, MPI_UNSIGNED_CHAR, &col));
    MP(MPI_Type_commit(&col));
    nbcx_datatype ncol = NBCX_DATATYPE_NULL;
    if (c.n != NBCX_COMM_NULL)
        NB(nbcx_datatype_from_mpi(col, &ncol));
    /* Neighbour order of a 2-D Cartesian communicator: up, down, left,
     * right. Phase 1 (rows): blocks 0 and 1; phase 2 (columns): 2 and 3. */
    int cnt[2][4] = { { (int)nc, (int)nc, 0, 0 }, { 0, 0, 1, 1 } };
    ptrdiff_t sd[2][4] = { { w + 1, nr * w + 1, 0, 0 },
                           { 0, 0, 1, nc } };
    ptrdiff_t rd[2][4] = { { 1, (nr + 1) * w + 1, 0, 0 },
                           { 0, 0, 0, nc + 1 } };
    MPI_Datatype mt[2][4] = { { MPI_UNSIGNED_CHAR, MPI_UNSIGNED_CHAR, col,
                                col },
                              { MPI_UNSIGNED_CHAR, MPI_UNSIGNED_CHAR, col,
                                col } };
    nbcx_datatype nt[2][4] = { { NBCX_UINT8, NBCX_UINT8, ncol, ncol },
                               { NBCX_UINT8, NBCX_UINT8, ncol, ncol } };
    /* One site per phase and board (the persistent requests keep their
     * buffers: the two boards alternate). */
    struct app_site halo[2][2] = { { APP_SITE_INIT, APP_SITE_INIT },
                                   { APP_SITE_INIT, APP_SITE_INIT } };
    struct app_site s_live = APP_SITE_INIT;
    int64_t live_loc, live = 0, sum = 0;
    int cur = 0;
    for (long g = 0; g < gens; g++) {
        unsigned char *b = board[cur], *o = board[cur ^ 1];
        app_neighbor_alltoallw(&halo[cur][0], b, cnt[0], sd[0], mt[0], nt[0],
                               b, cnt[0], rd[0], mt[0], nt[0], &c);
        /* Interior: rows 2..nr-1, cols 2..nc-1 need no halo. */
        update(b, o, w, 2, nr, 2, nc);
        app_wait(&halo[cur][0]);
        app_neighbor_alltoallw(&halo[cur][1], b, cnt[1], sd[1], mt[1], nt[1],
                               b, cnt[1], rd[1], mt[1], nt[1], &c);
        /* First and last rows without their end cells: rows done. */
        update(b, o, w, 1, 2, 2, nc);
        if (nr > 1)
            update(b, o, w, nr, nr + 1, 2, nc);
        app_wait(&halo[cur][1]);
        update(b, o, w, 1, nr + 1, 1, 2);
        if (nc > 1)
            update(b, o, w, 1, nr + 1, nc, nc + 1);
        cur ^= 1;
        live_loc = 0;
        for (long i = 1; i <= nr; i++)
            for (long j = 1; j <= nc; j++)
                live_loc += o[i * w + j];
        app_allreduce(&s_live, &live_loc, &live, 1, APP_INT64, APP_SUM, &wc);
        app_wait(&s_live);
        sum += live;
    }
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++)
            app_site_free(&halo[p][q]);
    app_site_free(&s_live);

    /* The answer, by plain MPI (outside the kernel). */
    uint64_t h = 0, htot;
    int64_t l = 0, ltot;
    for (long i = 1; i <= nr; i++)
        for (long j = 1; j <= nc; j++)
            if (board[cur][i * w + j]) {
                h += cell_hash(r0 + i - 1, c0 + j - 1);
                l++;
            }
    MPI_Allreduce(&h, &htot, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&l, &ltot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (gens > 0 && ltot != live) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "allreduced live count %lld, board has %lld",
                 (long long)live, (long long)ltot);
    }
    app_int(res, "live_sum", sum);
    app_int(res, "live_final", ltot);
    app_int(res, "board_hash", (int64_t)htot);
    if (verify && rows <= 4096 && cols <= 4096) {
        int64_t rs = 0, rl = 0;
        uint64_t rh = 0;
        int same = 1;
        if (rank == 0) {
            reference(&rs, &rl, &rh);
            same = rs == sum && rl == ltot && rh == htot;
        }
        MPI_Bcast(&same, 1, MPI_INT, 0, cart);
        if (!same) {
            res->ok = 0;
            snprintf(res->why, sizeof res->why,
                     "differs from the sequential run (live sum %lld, "
                     "final %lld)",
                     (long long)rs, (long long)rl);
        }
    }
    if (ncol != NBCX_DATATYPE_NULL)
        NB(nbcx_datatype_free(&ncol));
    app_comm_free(&c);
    app_comm_free(&wc);
    MPI_Type_free(&col);
    MPI_Comm_free(&cart);
    free(board[0]);
    free(board[1]);
}

int main(int argc, char **argv)
{
    static const struct app_kernel k = {
        "life", "[--n N | --rows R --cols C] [--gens G] [--verify 0|1]", 0,
        "all values are integers", option, run, APP_RUN_TRANSFORMED
    };
    return app_main(argc, argv, &k);
}
