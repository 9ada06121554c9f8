/* Control flow around collectives: else-if chains, a switch, do-while with
 * continue, goto, a collective in an unbraced loop body, results read in
 * nested branches, and globals written by a called function. */
#include <mpi.h>
#include <stdio.h>

static int g_total;    /* receive buffer of a reduction */
static int g_scratch;  /* unrelated global */

static void bump_scratch(void)
{
    g_scratch += 3;
}

static void reset_total(void)
{
    g_total = -1; /* writes the receive buffer: must wait before the call */
}

static int chain(int rank, int mode)
{
    MPI_Request nbcx_req[1] = {MPI_REQUEST_NULL};
    int v = rank + mode, r = 0, other = 0;
    if (mode == 0)
        MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    else if (mode == 1)
        MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[0]);
    else
        MPI_Iallreduce(&v, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &nbcx_req[0]);
    other = v * 2;
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    if (other > 100)
        other = 100;
    else if (r > 1000)
        other = -1; /* reads r */
    return r + other;
}

static int by_switch(int rank, int kind)
{
    MPI_Request nbcx_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int x = rank, y = 0;
    switch (kind) {
    case 0: {
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    }
        x = 5;
        break;
    case 1: {
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[1]);
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    }
        /* fall through */
    default:
        y += 1;
        break;
    }
    return x + y;
}

static int loops(int rank)
{
    MPI_Request nbcx_req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int acc = 0, in = rank, out = 0, i = 0;
    do {
        i++;
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
        if (i % 2) {
            MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
            continue;
        }
        MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
        acc += out;
    } while (i < 5);
    for (int k = 0; k < 3; k++) {
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[1]);
        MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    }
    acc += out;
    int j = 0;
again: {
    MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &nbcx_req[2]);
    MPI_Wait(&nbcx_req[2], MPI_STATUS_IGNORE);
}
    j++;
    if (j < 3)
        goto again;
    return acc + out;
}

int main(int argc, char **argv)
{
    MPI_Request nbcx_req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = rank + 1;
    MPI_Iallreduce(&mine, &g_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nbcx_req[0]);
    bump_scratch(); /* unrelated global: overlaps */
    MPI_Wait(&nbcx_req[0], MPI_STATUS_IGNORE);
    int seen = g_total;
    MPI_Iallreduce(&mine, &g_total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &nbcx_req[1]);
    bump_scratch();
    MPI_Wait(&nbcx_req[1], MPI_STATUS_IGNORE);
    reset_total();
    int results[9], n = 0;
    for (int m = 0; m < 3; m++)
        results[n++] = chain(rank, m);
    for (int k = 0; k < 3; k++)
        results[n++] = by_switch(rank, k);
    results[n++] = loops(rank);
    results[n++] = seen;
    results[n++] = g_total + g_scratch;
    int sums[9];
    MPI_Reduce(results, sums, 9, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 0; k < 9; k++)
            printf("%d ", sums[k]);
        printf("\n");
    }
    MPI_Finalize();
    return 0;
}
