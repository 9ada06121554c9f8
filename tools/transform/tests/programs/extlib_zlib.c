/* Issue 18 (compress): zlib's functions have known effects (zlib.h): the
 * checksum of another buffer and compressing into another buffer overlap the
 * collective; compressing into its receive buffer does not. */
#include <mpi.h>
#include <stdio.h>
#include <zlib.h>

int main(int argc, char **argv)
{
    int rank;
    unsigned char raw[256], z[512], into[512];
    int len = 0, total = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 256; i++)
        raw[i] = (unsigned char)(i * 7 + rank);
    len = 256;
    MPI_Allreduce(&len, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, raw, 256);
    uLongf zl = compressBound(256);
    int rc = compress2(z, &zl, raw, 256, 6);
    uLongf zl2 = sizeof into;
    compress((Bytef *)&total, &zl2, raw, 16); /* writes the receive buffer */
    if (rank == 0)
        printf("%lu %d %d\n", crc, rc, (int)zl);
    MPI_Finalize();
    return 0;
}
