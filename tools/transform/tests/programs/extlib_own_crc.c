/* Issue 18: a function named like zlib's but not declared by zlib.h (here: only
 * declared, defined in another file) has unknown effects: the wait comes first. */
#include <mpi.h>
#include <stdio.h>

unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned len);

int main(int argc, char **argv)
{
    int rank, len = 4, total = 0;
    unsigned char raw[4] = { 1, 2, 3, 4 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&len, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    unsigned long c = crc32(0, raw, 4);
    if (rank == 0)
        printf("%lu %d\n", c, total);
    MPI_Finalize();
    return 0;
}
