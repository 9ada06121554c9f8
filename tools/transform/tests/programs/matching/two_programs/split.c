/* Two programs given to one run: both.c calls share_root() and share_leaf()
 * on every rank, split.c the first on rank 0 and the second on the others.
 * Their calls are at the same byte offsets (keep them so: the padding is the
 * point): every main has the same key, and the calls were told apart by key
 * and offset only, so split.c's calls were taken for both.c's, unconditional;
 * share_root's broadcast became MPI_Ibcast, share_leaf's stayed blocking, and
 * split on 2 ranks hung. */
#include <mpi.h>
#include <stdio.h>
#include "common.h"

int main(int argc, char **argv)
{
    int r, p[4] = {1, 2, 3, 4};
    double w[8] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r == 0) share_root(p, w); else share_leaf(p, w);
    printf("rank %d p %d w %g\n", r, p[0], w[0]);
    MPI_Finalize();
    return 0;
}
