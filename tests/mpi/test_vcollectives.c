/*
 * test_vcollectives.c - nbcx's gatherv, scatterv, allgatherv, alltoallv,
 * alltoallw, reduce_scatter, reduce_scatter_block, scan and exscan, with
 * every algorithm (nbcx_algorithm_names() plus "auto", forced with
 * nbcx_algorithm_set()), against the MPI library's own blocking
 * collective on the same inputs.
 *
 * Cases:
 *   block sizes  per rank (or per pair of ranks) drawn from the case
 *                number: all zero; 0..3 elements with some zeros; 0..40
 *                with some zeros (16-byte fragments: the pipelined scan
 *                cuts them); blocks sit in reverse order with a gap of one
 *                element before each;
 *   datatypes    data movement with int, double_int (padded), the
 *                non-contiguous vector(4,1,2,int) resized to 40 bytes, and
 *                type pairs with matching signatures (2n ints -> n
 *                contig(2,int), n vectors -> 4n ints); alltoallw with a
 *                type pair that changes from one pair of ranks to the next;
 *   reductions   int sum and bxor, double max, double_int minloc, the
 *                NON-commutative matrix product (MPI_Op_create) on
 *                contig(4,int) and on the vector type, and a commutative
 *                nbcx_op_create operation;
 *   roots        0 and size-1;
 *   in place     wherever MPI allows MPI_IN_PLACE (the reference uses
 *                MPI_IN_PLACE too).
 * Receive buffers start as a sentinel: every byte of nbcx's buffer must
 * equal MPI's (gaps and bytes outside the blocks included, so nothing may
 * be written that MPI does not write). Send buffers must not change.
 * Arguments MPI ignores are passed as NULL (or -1, or a null datatype).
 * Exscan: MPI leaves rank 0's recvbuf undefined; nbcx must not touch it.
 *
 * Usage: test_vcollectives [collective-name]   (default: all)
 */
#include "mpivec.h"

enum coll { C_GATHERV, C_SCATTERV, C_ALLGATHERV, C_ALLTOALLV, C_ALLTOALLW,
            C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN,
            NCOLL };
static const char *const coll_name[NCOLL] = {
    "gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw",
    "reduce_scatter", "reduce_scatter_block", "scan", "exscan" };

static bool reduces(enum coll c) { return c >= C_REDUCE_SCATTER; }
static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

struct move_combo { int st, smul, rt, rmul; };
static const struct move_combo move_combos[] = {
    {MV_INT, 1, MV_INT, 1},
    {MV_DINT, 1, MV_DINT, 1},
    {MV_VEC, 1, MV_VEC, 1},
    {MV_INT, 2, MV_PAIR, 1},
    {MV_VEC, 1, MV_INT, 4},
};

struct red_combo { int t, op; enum mv_gen g; };
static const struct red_combo red_combos[] = {
    {MV_INT, MV_SUM, MV_G_SMALL},
    {MV_INT, MV_BXOR, MV_G_BITS},
    {MV_DOUBLE, MV_MAX, MV_G_SMALL},
    {MV_DINT, MV_MINLOC, MV_G_LOC},
    {MV_MAT, MV_MATMUL, MV_G_MOD},
    {MV_VEC, MV_MATMUL, MV_G_MOD},
    {MV_INT, MV_ADDMOD, MV_G_MOD},
};

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct pattern { int maxc; size_t segsize; };
static const struct pattern patterns[] = {
    {0, 65536}, {3, 65536}, {40, 16},
};

struct tcase {
    enum coll coll;
    const char *alg;
    const struct pattern *pat;
    const struct move_combo *mc;
    const struct red_combo *rc;
    int root;
    bool in_place;
    long id;
};

static void describe(const struct tcase *c, char *buf, size_t len)
{
    if (reduces(c->coll))
        snprintf(buf, len, "%s alg=%s maxcount=%d type=%s op=%s "
                 "in_place=%d (case %ld, %d ranks)", coll_name[c->coll],
                 c->alg, c->pat->maxc, mv_types[c->rc->t].name,
                 mv_ops[c->rc->op].name, (int)c->in_place, c->id, mt_size);
    else
        snprintf(buf, len, "%s alg=%s maxcount=%d send=%s*%d recv=%s*%d "
                 "root=%d in_place=%d (case %ld, %d ranks)",
                 coll_name[c->coll], c->alg, c->pat->maxc,
                 mv_types[c->mc->st].name, c->mc->smul,
                 mv_types[c->mc->rt].name, c->mc->rmul, c->root,
                 (int)c->in_place, c->id, mt_size);
}

/* The block size of a pair (same on every rank): 0 for about one pair
 * in four, else 1..maxc. */
static int units(const struct tcase *c, int a, int b)
{
    uint64_t h = mt_seed((uint64_t)c->id, (uint64_t)a + 1, (uint64_t)b + 1);
    if (c->pat->maxc == 0 || h % 4 == 0)
        return 0;
    return 1 + (int)((h >> 8) % (uint64_t)c->pat->maxc);
}

static double time_nbcx, time_mpi;
static bool mpich;    /* the library is MPICH (see main) */
static long mpi_bugs; /* reductions where MPI disagreed, nbcx did not */

/* Waits for the nbcx collective (mt_nbcx_wait: a failure stops the
 * job), timed. */
static void nbcx_done(const char *what, int rc, nbcx_request *req)
{
    double t = MPI_Wtime();
    mt_nbcx_wait(what, rc, req);
    time_nbcx += MPI_Wtime() - t;
}

static void mpi_done(const char *what, int rc, double t)
{
    time_mpi += MPI_Wtime() - t;
    mt_mpi_check(what, rc);
}

/* After the nbcx call (nb) or the MPI one of a case, started at *t. */
static void call_done(bool nb, const char *what, int rc, nbcx_request *req,
                      double *t)
{
    if (nb) {
        nbcx_done(what, rc, req);
        *t = MPI_Wtime();
    } else {
        mpi_done(what, rc, *t);
    }
}

/* The end of a data-moving case: nbcx's send buffer must be unchanged
 * and its receive buffer equal MPI's (gaps included); frees both. */
static void move_checked(const char *what, struct mv_buf *S,
                         struct mv_buf *R)
{
    mt_unwatch();
    mt_check_sendbuf(what, S->nb, S->init, S->bytes);
    mv_compare(what, "recvbuf", R);
    mv_buf_free(S);
    mv_buf_free(R);
}

/* ------------------------------------------------------------------ */
/* Data movement                                                       */
/* ------------------------------------------------------------------ */

static void run_move(const struct tcase *c, nbcx_comm comm)
{
    const int p = mt_size, me = mt_rank, root = c->root;
    const struct move_combo *mc = c->mc;
    const bool at_root = me == root, ip = c->in_place;
    MPI_Datatype smpi = mv_types[mc->st].mpi, rmpi = mv_types[mc->rt].mpi;
    nbcx_datatype snb = mv_types[mc->st].nb, rnb = mv_types[mc->rt].nb;
    int *scounts = mv_xmalloc(sizeof(int) * (size_t)p);
    int *sdispls = mv_xmalloc(sizeof(int) * (size_t)p);
    int *rcounts = mv_xmalloc(sizeof(int) * (size_t)p);
    int *rdispls = mv_xmalloc(sizeof(int) * (size_t)p);
    long sn = 0, rn = 0; /* elements in the buffers */
    int scount = 0, rcount = 0;
    bool has_s = false, has_r = false, s_ip = false, r_ip = false;
    struct mv_buf S, R;
    uint64_t seed = mt_seed((uint64_t)c->id, (uint64_t)me, 1);
    char what[300];
    nbcx_request req = NBCX_REQUEST_NULL;
    int rc;
    double t = 0;

    describe(c, what, sizeof what);
    mt_watch("%s", what);
    switch (c->coll) {
    case C_GATHERV:
        scount = units(c, me, 0) * mc->smul;
        has_s = !(at_root && ip);
        s_ip = at_root && ip;
        if (at_root) {
            for (int i = 0; i < p; i++)
                rcounts[i] = units(c, i, 0) * mc->rmul;
            rn = mv_layout(p, rcounts, rdispls);
            has_r = true;
        }
        sn = scount;
        break;
    case C_SCATTERV:
        rcount = units(c, root, me) * mc->rmul;
        has_r = !(at_root && ip);
        r_ip = at_root && ip;
        rn = rcount;
        if (at_root) {
            for (int i = 0; i < p; i++)
                scounts[i] = units(c, root, i) * mc->smul;
            sn = mv_layout(p, scounts, sdispls);
            has_s = true;
        }
        break;
    case C_ALLGATHERV:
        scount = units(c, me, 0) * mc->smul;
        sn = scount;
        has_s = !ip;
        s_ip = ip;
        for (int i = 0; i < p; i++)
            rcounts[i] = units(c, i, 0) * mc->rmul;
        rn = mv_layout(p, rcounts, rdispls);
        has_r = true;
        break;
    default: /* alltoallv; in place the sizes are symmetric */
        for (int j = 0; j < p; j++) {
            scounts[j] = (ip ? units(c, imin(me, j), imax(me, j))
                             : units(c, me, j)) * mc->smul;
            rcounts[j] = (ip ? units(c, imin(me, j), imax(me, j))
                             : units(c, j, me)) * mc->rmul;
        }
        sn = mv_layout(p, scounts, sdispls);
        rn = mv_layout(p, rcounts, rdispls);
        has_s = !ip;
        s_ip = ip;
        has_r = true;
        break;
    }

    mv_buf_init(&S, mc->st, has_s ? (size_t)sn * (size_t)mv_types[mc->st].extent
                                  : 0,
                true, MV_G_BITS, seed);
    mv_buf_init(&R, mc->rt, has_r ? (size_t)rn * (size_t)mv_types[mc->rt].extent
                                  : 0,
                false, MV_G_BITS, seed);
    /* In place, the data to send starts in recvbuf. */
    if (c->coll == C_GATHERV && s_ip)
        mv_buf_fill(&R, (size_t)rdispls[me] * (size_t)mv_types[mc->rt].extent,
                    mc->rt, rcounts[me], MV_G_BITS, seed + 7);
    if (c->coll == C_ALLGATHERV && s_ip)
        mv_buf_fill(&R, (size_t)rdispls[me] * (size_t)mv_types[mc->rt].extent,
                    mc->rt, rcounts[me], MV_G_BITS, seed + 7);
    if (c->coll == C_ALLTOALLV && s_ip)
        for (int j = 0; j < p; j++)
            mv_buf_fill(&R,
                        (size_t)rdispls[j] * (size_t)mv_types[mc->rt].extent,
                        mc->rt, rcounts[j], MV_G_BITS, seed + 11 + (uint64_t)j);

    for (int pass = 0; pass < 2; pass++) {
        bool nb = pass == 0;
        void *s = s_ip ? (nb ? NBCX_IN_PLACE : MPI_IN_PLACE)
                       : has_s ? (nb ? S.nb : S.ref) : NULL;
        void *r = r_ip ? (nb ? NBCX_IN_PLACE : MPI_IN_PLACE)
                       : has_r ? (nb ? R.nb : R.ref) : NULL;
        switch (c->coll) {
        case C_GATHERV:
            if (nb)
                rc = nbcx_igatherv(s, s_ip ? -1 : scount,
                                   s_ip ? NBCX_DATATYPE_NULL : snb, r,
                                   at_root ? rcounts : NULL,
                                   at_root ? rdispls : NULL,
                                   at_root ? rnb : NBCX_DATATYPE_NULL, root,
                                   comm, &req);
            else
                rc = MPI_Gatherv(s, scount, smpi, r, at_root ? rcounts : NULL,
                                 at_root ? rdispls : NULL, rmpi, root,
                                 MPI_COMM_WORLD);
            break;
        case C_SCATTERV:
            if (nb)
                rc = nbcx_iscatterv(s, at_root ? scounts : NULL,
                                    at_root ? sdispls : NULL,
                                    at_root ? snb : NBCX_DATATYPE_NULL, r,
                                    r_ip ? -1 : rcount,
                                    r_ip ? NBCX_DATATYPE_NULL : rnb, root,
                                    comm, &req);
            else
                rc = MPI_Scatterv(s, at_root ? scounts : NULL,
                                  at_root ? sdispls : NULL, smpi, r, rcount,
                                  rmpi, root, MPI_COMM_WORLD);
            break;
        case C_ALLGATHERV:
            if (nb)
                rc = nbcx_iallgatherv(s, s_ip ? -1 : scount,
                                      s_ip ? NBCX_DATATYPE_NULL : snb, r,
                                      rcounts, rdispls, rnb, comm, &req);
            else if (p == 1 && mpich && !s_ip)
                /* MPICH 4.0.2's MPI_Allgatherv on one rank ignores displs
                 * (copies to recvbuf + 0): the one message to itself */
                rc = MPI_Sendrecv(s, scount, smpi, 0, 0,
                                  (char *)r + (size_t)rdispls[0] *
                                                  (size_t)mv_types[mc->rt]
                                                      .extent,
                                  rcounts[0], rmpi, 0, 0, MPI_COMM_SELF,
                                  MPI_STATUS_IGNORE);
            else
                rc = MPI_Allgatherv(s, scount, smpi, r, rcounts, rdispls,
                                    rmpi, MPI_COMM_WORLD);
            break;
        default:
            if (nb)
                rc = nbcx_ialltoallv(s, s_ip ? NULL : scounts,
                                     s_ip ? NULL : sdispls,
                                     s_ip ? NBCX_DATATYPE_NULL : snb, r,
                                     rcounts, rdispls, rnb, comm, &req);
            else
                rc = MPI_Alltoallv(s, scounts, sdispls, smpi, r, rcounts,
                                   rdispls, rmpi, MPI_COMM_WORLD);
            break;
        }
        call_done(nb, what, rc, &req, &t);
    }
    move_checked(what, &S, &R);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
}

/* alltoallw: the pair (s, d) exchanges units(s, d) "units" with one of
 * three type pairs: int -> int, 2 ints -> contig(2,int), vector -> 4 ints
 * (in place: the same type on both sides, int, pair or vector). Blocks
 * are placed in reverse order, 8-byte aligned, with gaps; displacements
 * in bytes. */
static void w_type(const struct tcase *c, int s, int d, bool send, int n,
                   int *t, int *count)
{
    int k = (int)((uint64_t)(s + d) + (uint64_t)c->id) % 3;
    static const int ip_types[3] = {MV_INT, MV_PAIR, MV_VEC};
    if (c->in_place) {
        *t = ip_types[k];
        *count = n;
        return;
    }
    switch (k) {
    case 0: *t = MV_INT; *count = n; break;
    case 1: *t = send ? MV_INT : MV_PAIR; *count = send ? 2 * n : n; break;
    default: *t = send ? MV_VEC : MV_INT; *count = send ? n : 4 * n; break;
    }
}

static size_t w_layout(int p, const int *counts, const int *types,
                       int *displs)
{
    size_t pos = 8;
    for (int i = p - 1; i >= 0; i--) {
        displs[i] = (int)pos;
        pos += (size_t)counts[i] * (size_t)mv_types[types[i]].extent;
        pos = ((pos + 7) & ~(size_t)7) + 8;
    }
    return pos;
}

static void run_alltoallw(const struct tcase *c, nbcx_comm comm)
{
    const int p = mt_size, me = mt_rank;
    const bool ip = c->in_place;
    int *sc = mv_xmalloc(sizeof(int) * (size_t)p);
    int *sd = mv_xmalloc(sizeof(int) * (size_t)p);
    int *st = mv_xmalloc(sizeof(int) * (size_t)p);
    int *rc_ = mv_xmalloc(sizeof(int) * (size_t)p);
    int *rd = mv_xmalloc(sizeof(int) * (size_t)p);
    int *rt = mv_xmalloc(sizeof(int) * (size_t)p);
    MPI_Datatype *smpi = mv_xmalloc(sizeof(MPI_Datatype) * (size_t)p);
    MPI_Datatype *rmpi = mv_xmalloc(sizeof(MPI_Datatype) * (size_t)p);
    nbcx_datatype *snb = mv_xmalloc(sizeof(nbcx_datatype) * (size_t)p);
    nbcx_datatype *rnb = mv_xmalloc(sizeof(nbcx_datatype) * (size_t)p);
    uint64_t seed = mt_seed((uint64_t)c->id, (uint64_t)me, 3);
    struct mv_buf S, R;
    char what[300];
    nbcx_request req = NBCX_REQUEST_NULL;
    double t = 0;

    describe(c, what, sizeof what);
    mt_watch("%s", what);
    for (int j = 0; j < p; j++) {
        int n_out = ip ? units(c, imin(me, j), imax(me, j))
                       : units(c, me, j);
        int n_in = ip ? n_out : units(c, j, me);
        w_type(c, me, j, true, n_out, &st[j], &sc[j]);
        w_type(c, j, me, false, n_in, &rt[j], &rc_[j]);
        smpi[j] = mv_types[st[j]].mpi;
        snb[j] = mv_types[st[j]].nb;
        rmpi[j] = mv_types[rt[j]].mpi;
        rnb[j] = mv_types[rt[j]].nb;
    }
    size_t sbytes = ip ? 0 : w_layout(p, sc, st, sd);
    size_t rbytes = w_layout(p, rc_, rt, rd);
    mv_buf_init(&S, MV_INT, sbytes, true, MV_G_BITS, seed);
    mv_buf_init(&R, MV_INT, rbytes, false, MV_G_BITS, seed);
    if (!ip)
        for (int j = 0; j < p; j++)
            mv_buf_fill(&S, (size_t)sd[j], st[j], sc[j], MV_G_BITS,
                        seed + 5 + (uint64_t)j);
    else
        for (int j = 0; j < p; j++)
            mv_buf_fill(&R, (size_t)rd[j], rt[j], rc_[j], MV_G_BITS,
                        seed + 5 + (uint64_t)j);

    int rc = nbcx_ialltoallw(ip ? NBCX_IN_PLACE : S.nb, ip ? NULL : sc,
                             ip ? NULL : sd, ip ? NULL : snb, R.nb, rc_, rd,
                             rnb, comm, &req);
    nbcx_done(what, rc, &req);
    /* Open MPI 4.1.4's MPI_Alltoallw on one rank takes the byte
     * displacements for element displacements (and reads past the
     * buffers): there the reference is the one message to itself,
     * MPI_Sendrecv with the same arguments. */
    t = MPI_Wtime();
    if (p == 1)
        rc = MPI_Sendrecv(ip ? R.init + rd[0] : S.ref + sd[0], ip ? rc_[0] : sc[0],
                          ip ? rmpi[0] : smpi[0], 0, 0, R.ref + rd[0], rc_[0],
                          rmpi[0], 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    else
        rc = MPI_Alltoallw(ip ? MPI_IN_PLACE : S.ref, sc, sd, smpi, R.ref,
                           rc_, rd, rmpi, MPI_COMM_WORLD);
    mpi_done(what, rc, t);
    move_checked(what, &S, &R);
    free(sc);
    free(sd);
    free(st);
    free(rc_);
    free(rd);
    free(rt);
    free(smpi);
    free(rmpi);
    free(snb);
    free(rnb);
}

/* ------------------------------------------------------------------ */
/* Reductions                                                          */
/* ------------------------------------------------------------------ */

/* Rank r's input vector of a reduction case (n elements of type t), as
 * run_reduction makes it on that rank: data bytes only matter. */
static void reduction_input(const struct tcase *c, int r, int n,
                            struct mv_buf *b)
{
    const struct red_combo *rc = c->rc;
    uint64_t seed = mt_seed((uint64_t)c->id, (uint64_t)r, 5);
    size_t bytes = (size_t)n * (size_t)mv_types[rc->t].extent;
    if (c->in_place) {
        mv_buf_init(b, rc->t, bytes, false, rc->g, seed);
        mv_buf_fill(b, 0, rc->t, n, rc->g, seed + 3);
    } else {
        mv_buf_init(b, rc->t, bytes, true, rc->g, seed);
    }
}

/* The sequential reference of rank `me`'s result: the inputs of ranks
 * 0..last folded in rank order with MPI_Reduce_local (acc op x(r)), then
 * `count` elements from element `off`. Data bytes are compared with
 * nbcx's result; returns true if they agree. */
static bool sequential_agrees(const struct tcase *c, int n, int last,
                              int off, int count, const unsigned char *got)
{
    const struct mv_type *ty = &mv_types[c->rc->t];
    struct mv_buf acc, x;
    reduction_input(c, 0, n, &acc);
    for (int r = 1; r <= last; r++) {
        reduction_input(c, r, n, &x);
        MT_MPI(MPI_Reduce_local(acc.init, x.init, n, ty->mpi,
                                mv_ops[c->rc->op].mpi));
        memcpy(acc.init, x.init, x.bytes);
        mv_buf_free(&x);
    }
    bool same = true;
    for (int e = 0; e < count && same; e++)
        for (long k = 0; k < ty->extent; k++)
            if (ty->mask[k] &&
                got[(size_t)e * (size_t)ty->extent + (size_t)k] !=
                    acc.init[(size_t)(off + e) * (size_t)ty->extent +
                             (size_t)k])
                same = false;
    mv_buf_free(&acc);
    return same;
}

static void run_reduction(const struct tcase *c, nbcx_comm comm)
{
    const int p = mt_size, me = mt_rank;
    const struct red_combo *rc = c->rc;
    const struct mv_type *ty = &mv_types[rc->t];
    const bool ip = c->in_place;
    const bool scan = c->coll == C_SCAN || c->coll == C_EXSCAN;
    int *counts = mv_xmalloc(sizeof(int) * (size_t)p);
    long total = 0;
    for (int i = 0; i < p; i++) {
        counts[i] = c->coll == C_REDUCE_SCATTER ? units(c, i, 0)
                                                : c->pat->maxc;
        total += counts[i];
    }
    const int n = scan ? c->pat->maxc : (int)total; /* input elements */
    const int mine = scan ? n : counts[me];         /* result elements */
    uint64_t seed = mt_seed((uint64_t)c->id, (uint64_t)me, 5);
    struct mv_buf S, R;
    char what[300];
    nbcx_request req = NBCX_REQUEST_NULL;
    nbcx_datatype nt = ty->nb;
    nbcx_op nop = mv_ops[rc->op].nb;
    MPI_Datatype mt = ty->mpi;
    MPI_Op mop = mv_ops[rc->op].mpi;
    double t = 0;

    describe(c, what, sizeof what);
    mt_watch("%s", what);
    mv_buf_init(&S, rc->t, ip ? 0 : (size_t)n * (size_t)ty->extent, true,
                rc->g, seed);
    mv_buf_init(&R, rc->t, (size_t)(ip ? n : mine) * (size_t)ty->extent,
                false, rc->g, seed);
    if (ip)
        mv_buf_fill(&R, 0, rc->t, n, rc->g, seed + 3);

    /* MPICH 4.0.2's MPI_Reduce_scatter(_block) with a non-commutative
     * operation on a non-contiguous type calls the operation on bytes
     * that are not the data (garbage; UBSan sees the overflow) and gets
     * wrong results: there the sequential reduction is the reference. */
    const bool skip_mpi = mpich && !scan && rc->op == MV_MATMUL &&
                          rc->t == MV_VEC;
    for (int pass = 0; pass < (skip_mpi ? 1 : 2); pass++) {
        bool nb = pass == 0;
        const void *s = ip ? (nb ? NBCX_IN_PLACE : MPI_IN_PLACE)
                           : (nb ? S.nb : S.ref);
        void *r = nb ? R.nb : R.ref;
        int err;
        switch (c->coll) {
        case C_REDUCE_SCATTER:
            err = nb ? nbcx_ireduce_scatter(s, r, counts, nt, nop, comm, &req)
                     : MPI_Reduce_scatter(s, r, counts, mt, mop,
                                          MPI_COMM_WORLD);
            break;
        case C_REDUCE_SCATTER_BLOCK:
            err = nb ? nbcx_ireduce_scatter_block(s, r, c->pat->maxc, nt, nop,
                                                  comm, &req)
                     : MPI_Reduce_scatter_block(s, r, c->pat->maxc, mt, mop,
                                                MPI_COMM_WORLD);
            break;
        case C_SCAN:
            err = nb ? nbcx_iscan(s, r, n, nt, nop, comm, &req)
                     : MPI_Scan(s, r, n, mt, mop, MPI_COMM_WORLD);
            break;
        default:
            err = nb ? nbcx_iexscan(s, r, n, nt, nop, comm, &req)
                     : MPI_Exscan(s, r, n, mt, mop, MPI_COMM_WORLD);
            break;
        }
        call_done(nb, what, err, &req, &t);
    }
    mt_unwatch();
    mt_check_sendbuf(what, S.nb, S.init, S.bytes);
    if (c->coll == C_EXSCAN && me == 0) {
        /* MPI leaves it undefined; nbcx leaves it alone */
        if (memcmp(R.nb, R.init, R.bytes) != 0)
            mt_fail("%s: nbcx wrote rank 0's recvbuf", what);
    } else {
        /* In place, only the result part of recvbuf is defined. When MPI
         * and nbcx disagree, the sequential reference decides: if it is
         * nbcx's result, the MPI library is wrong (noted, not failed). */
        size_t bytes = (size_t)mine * (size_t)ty->extent;
        bool differ = skip_mpi || memcmp(R.nb, R.ref, bytes) != 0;
        int first = 0, last = p - 1;
        if (c->coll == C_REDUCE_SCATTER)
            for (int i = 0; i < me; i++)
                first += counts[i];
        else if (c->coll == C_REDUCE_SCATTER_BLOCK)
            first = me * c->pat->maxc;
        else
            last = c->coll == C_SCAN ? me : me - 1;
        if (!differ) {
            mv_compare_n(what, "recvbuf", &R, bytes); /* gaps too */
        } else if (sequential_agrees(c, n, last, first, mine, R.nb)) {
            if (!skip_mpi && mpi_bugs++ == 0)
                printf("note: [rank %d] %s: the MPI library's result "
                       "differs from nbcx's and from the sequential "
                       "reduction (MPI_Reduce_local in rank order), which "
                       "agree\n", me, what);
        } else {
            mv_compare_n(what, "recvbuf", &R, bytes);
            mt_fail("%s: nbcx's result differs from the sequential "
                    "reduction too", what);
        }
    }
    mv_buf_free(&S);
    mv_buf_free(&R);
    free(counts);
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

static long run_collective(enum coll coll, nbcx_comm comm, long *id)
{
    char names[MT_MAX_ALGS][40];
    const int nalg = mt_algorithms(coll_name[coll], names, NULL);
    const int p = mt_size;
    const int roots[2] = {0, p - 1};
    const bool rooted = coll == C_GATHERV || coll == C_SCATTERV;
    long ncases = 0;

    for (int ia = 0; ia < nalg; ia++) {
        struct tcase c = {coll, names[ia], NULL, NULL, NULL, 0, false, 0};
        MT_OK(nbcx_algorithm_set(coll_name[coll], names[ia]));
        for (int ip = 0; ip < NELEMS(patterns); ip++) {
            c.pat = &patterns[ip];
            MT_OK(nbcx_segsize_set(c.pat->segsize));
            int ncombos = reduces(coll) ? NELEMS(red_combos)
                          : coll == C_ALLTOALLW ? 1
                                                : NELEMS(move_combos);
            for (int ib = 0; ib < ncombos; ib++) {
                c.mc = &move_combos[reduces(coll) ? 0 : ib];
                c.rc = &red_combos[reduces(coll) ? ib : 0];
                for (int ir = 0; ir < (rooted ? 2 : 1); ir++) {
                    if (ir == 1 && roots[1] == roots[0])
                        continue;
                    c.root = roots[ir];
                    for (int inp = 0; inp < 2; inp++) {
                        /* in place needs one type on both sides */
                        if (inp && !reduces(coll) && coll != C_ALLTOALLW &&
                            (c.mc->st != c.mc->rt || c.mc->smul != c.mc->rmul))
                            continue;
                        c.in_place = inp;
                        c.id = (*id)++;
                        if (reduces(coll))
                            run_reduction(&c, comm);
                        else if (coll == C_ALLTOALLW)
                            run_alltoallw(&c, comm);
                        else
                            run_move(&c, comm);
                        ncases++;
                    }
                }
            }
        }
    }
    mt_restore_defaults(coll_name[coll]);
    return ncases;
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    long id = 0;

    double t0 = mt_begin(&argc, &argv);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    mpich = mt_is_mpich();
    mv_types_init();
    mv_ops_init();
    mt_unwatch();

    for (int coll = 0; coll < NCOLL; coll++) {
        double t = MPI_Wtime();
        if (argc > 1 && strcmp(argv[1], coll_name[coll]) != 0)
            continue;
        time_nbcx = time_mpi = 0;
        long n = run_collective((enum coll)coll, comm, &id);
        if (mt_rank == 0)
            printf("  %-20s %5ld cases %7.2f s (in nbcx %.2f s, in MPI "
                   "%.2f s)\n", coll_name[coll], n, MPI_Wtime() - t,
                   time_nbcx, time_mpi);
    }
    long bugs = 0;
    MPI_Allreduce(&mpi_bugs, &bugs, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bugs && mt_rank == 0)
        printf("note: %ld result(s) where the MPI library's reduction "
               "differed from nbcx's and the sequential one\n", bugs);
    if (mv_userop_errors)
        mt_fail("a user operation met a datatype of unexpected size/extent "
                "%d time(s)", (int)mv_userop_errors);
    mt_watch("teardown");
    mv_ops_free();
    mv_types_free();
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_vcollectives", t0);
}
