/*
 * test_many.c - a thousand small collectives in flight at once.
 *
 * 1000 collectives of the core kinds (ibarrier, ibcast, ireduce,
 * iallreduce, igather, iscatter, iallgather, ialltoall), with small
 * counts (mostly 0 to 8 elements, now and then up to 64), ints and
 * doubles, several reduction operations, roots all over the communicator
 * and in-place allreduce now and then, are started back to back on one
 * communicator without waiting, and only then completed with one
 * nbcx_waitall. Two shorter rounds (NOPS_LATER collectives) complete
 * them in other ways:
 *   round 1  nbcx_wait one by one, the last started first (in split mode
 *            a wait must also serve the application-thread work of the
 *            operations started before, which other ranks may need);
 *   round 2  nbcx_testall polling.
 * Then every result is compared with the blocking MPI collective run on
 * the same inputs, in the same order. (The rounds after the first are
 * short because the reference costs: with more ranks than cores, each
 * blocking collective of a busy-polling MPI (MPICH) takes milliseconds,
 * while nbcx completes the thousand in a fraction of a second.)
 *
 * What this is about: the engine's bookkeeping with many operations
 * outstanding (the active list, the tag space of each operation, the
 * progress thread's pacing with a thousand requests, in split mode the
 * work set aside for the application thread), not the algorithms, which
 * test_collectives covers.
 */
#include "mpicoll.h"

#define NOPS 1000 /* in round 0; the others start NOPS_LATER */
#define NOPS_LATER 200
#define NROUNDS 3
#define MAX_COUNT 64

static struct mc_type t_int, t_double;

/* The i-th collective of a round. Its shape (kind, count, root, type,
 * operation) comes from a seed all ranks share, its data from one of the
 * rank's own. */
static void coll_setup(struct mc_coll *c, int i, int round)
{
    uint64_t shape = mt_seed((uint64_t)(round * NOPS + i), 0, 13);
    uint64_t data = mt_seed((uint64_t)(round * NOPS + i), mt_rank + 1, 11);
    enum mc_kind kind = (enum mc_kind)mt_range(&shape, 0, MC_NKINDS - 1);
    int count = mt_range(&shape, 0, 9) < 8 ? mt_range(&shape, 0, 8)
                                            : mt_range(&shape, 1, MAX_COUNT);
    int root = mt_range(&shape, 0, mt_size - 1);
    const struct mc_type *t = mt_range(&shape, 0, 3) ? &t_int : &t_double;
    int op = mt_range(&shape, 0, t->nops - 1);
    bool in_place = mt_range(&shape, 0, 3) == 0;
    mc_setup(c, kind, count, root, t, op, in_place, mt_size, &data);
}

static const char *const round_name[NROUNDS] = {
    "nbcx_waitall", "nbcx_wait in reverse order", "nbcx_testall polling"};

static void run_round(int round, nbcx_comm comm)
{
    static struct mc_coll cs[NOPS];
    static nbcx_request reqs[NOPS];
    const int n = round == 0 ? NOPS : NOPS_LATER;
    char name[120];
    int rc, flag = 0;
    double t = MPI_Wtime();

    snprintf(name, sizeof name, "round %d (%d collectives, %s, %d ranks)",
             round, n, round_name[round], mt_size);
    mt_watch("%s: starting", name);
    for (int i = 0; i < n; i++) {
        coll_setup(&cs[i], i, round);
        rc = mc_start(&cs[i], comm);
        if (rc != NBCX_SUCCESS) {
            /* the other ranks would wait for it forever */
            fprintf(stderr, "[rank %d] %s: starting #%d (%s) failed: %s\n",
                    mt_rank, name, i, mc_kind_name[cs[i].kind],
                    nbcx_error_string(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        reqs[i] = cs[i].req;
    }

    mt_watch("%s: completing", name);
    switch (round) {
    case 0:
        rc = nbcx_waitall(n, reqs);
        if (rc != NBCX_SUCCESS)
            mt_fail("%s: nbcx_waitall returned %d (%s)", name, rc,
                    nbcx_error_string(rc));
        break;
    case 1:
        for (int i = n - 1; i >= 0; i--) {
            rc = nbcx_wait(&reqs[i]);
            if (rc != NBCX_SUCCESS)
                mt_fail("%s: nbcx_wait(#%d) returned %d (%s)", name, i, rc,
                        nbcx_error_string(rc));
        }
        break;
    default:
        while (!flag) {
            rc = nbcx_testall(n, reqs, &flag);
            if (rc != NBCX_SUCCESS) {
                mt_fail("%s: nbcx_testall returned %d (%s)", name, rc,
                        nbcx_error_string(rc));
                break;
            }
        }
        break;
    }
    for (int i = 0; i < n; i++)
        if (reqs[i] != NBCX_REQUEST_NULL) {
            mt_fail("%s: request #%d not reset on completion", name, i);
            break;
        }

    double t_nbcx = MPI_Wtime() - t;
    mt_watch("%s: checking against MPI", name);
    for (int i = 0; i < n; i++) {
        mc_check(&cs[i], MPI_COMM_WORLD, mt_rank, name, i);
        mc_free(&cs[i]);
    }
    mt_unwatch();
    if (mt_rank == 0 && getenv("NBCX_TEST_VERBOSE"))
        printf("  %s: %.2f s (nbcx %.2f s)\n", name, MPI_Wtime() - t,
               t_nbcx);
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL;
    double t0;

    t0 = mt_begin(&argc, &argv);
    mc_type_int(&t_int);
    mc_type_double(&t_double);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    for (int round = 0; round < NROUNDS; round++)
        run_round(round, comm);
    mt_watch("teardown");
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_many", t0);
}
