/* Issue 34 (apps/compress): the communicator of a rooted collective is a
 * struct member set once to MPI_COMM_WORLD, the rank is MPI_COMM_WORLD's: the
 * root and the other ranks wait apart.  Where the member may hold another
 * communicator (reversed ranks), or its address is taken, they do not. */
#include <mpi.h>
#include <stdio.h>

struct comm {
    MPI_Comm m;
};

static void pick(struct comm *c, MPI_Comm other)
{
    c->m = other;
}

/* Set once: the root waits at once, the others at the end of the body. */
static long member_world(int iters)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct comm c;
    c.m = MPI_COMM_WORLD;
    int all[64] = { 0 };
    long acc = 0;
    for (int it = 0; it < iters; it++) {
        int mine = rank * 10 + it;
        MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, c.m);
        if (rank == 0)
            for (int r = 0; r < size; r++)
                acc += all[r] * (r + 1);
        acc += mine;
        acc *= 3;
        acc %= 1000003;
    }
    return acc;
}

/* The member may be the reversed communicator, whose root is another rank. */
static long member_maybe_reversed(int iters, MPI_Comm rev)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct comm c;
    c.m = MPI_COMM_WORLD;
    if (iters > 1)
        c.m = rev;
    int all[64] = { 0 };
    long acc = 0;
    for (int it = 0; it < iters; it++) {
        int mine = rank * 10 + it;
        MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, c.m);
        if (rank == size - 1)
            for (int r = 0; r < size; r++)
                acc += all[r] * (r + 1);
        acc += mine;
        acc *= 3;
        acc %= 1000003;
    }
    return acc;
}

/* Its address is taken: pick() may change it. */
static long member_address_taken(int iters, MPI_Comm rev)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct comm c;
    c.m = MPI_COMM_WORLD;
    pick(&c, rev);
    int all[64] = { 0 };
    long acc = 0;
    for (int it = 0; it < iters; it++) {
        int mine = rank * 10 + it;
        MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, c.m);
        if (rank == size - 1)
            for (int r = 0; r < size; r++)
                acc += all[r] * (r + 1);
        acc += mine;
        acc *= 3;
        acc %= 1000003;
    }
    return acc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    long a = member_world(4), b = member_maybe_reversed(4, rev),
         d = member_address_taken(4, rev);
    long v[3] = { a, b, d }, s[3] = { 0, 0, 0 };
    MPI_Reduce(v, s, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%ld %ld %ld\n", s[0], s[1], s[2]);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
}
