/* Issue 34: library functions with known effects: <complex.h>'s functions (by
 * value: they touch no memory), FFTW's new-array execute functions (read and
 * write the two arrays given, nothing else) and fftw_destroy_plan (touches no
 * array) when fftw3.h declares them.  The allreduce of x into sum overlaps
 * the energy loop, the transform of a (the input may be overwritten: it is
 * not the send buffer) and the plan's destruction; the transform into its
 * receive buffer stops it: were
 * fftw_execute_dft taken to leave its output alone, the wait would come after
 * it and the reduction would overwrite the transform's result (the output
 * would differ from the original's). */
#include <mpi.h>
#include <complex.h>
#include <stdio.h>
#include <fftw3.h>

#define N 8

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fftw_complex *a = fftw_alloc_complex(N);
    fftw_complex *b = fftw_alloc_complex(N);
    fftw_complex *sum = fftw_alloc_complex(N);
    double x[2 * N];
    fftw_plan p = fftw_plan_dft_1d(N, a, b, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_plan q = fftw_plan_dft_1d(N, a, b, FFTW_BACKWARD, FFTW_ESTIMATE);
    for (int i = 0; i < N; i++) {
        a[i] = (rank + 1) * i + I * (double)(N - i);
        x[2 * i] = rank + i;
        x[2 * i + 1] = 1.0 / (i + 1);
        sum[i] = 0;
    }
    MPI_Allreduce(x, sum, 2 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double e = 0, m = 0;
    for (int i = 0; i < N; i++) {
        e += creal(a[i] * conj(a[i]));
        m += cabs(a[i]) + cimag(csqrt(a[i])) + carg(a[i]);
    }
    fftw_execute_dft(p, a, b);
    double eb = 0;
    for (int i = 0; i < N; i++)
        eb += creal(b[i] * conj(b[i]));
    fftw_destroy_plan(p);
    fftw_execute_dft(q, b, sum); /* writes the receive buffer */
    double s = 0;
    for (int i = 0; i < N; i++)
        s += creal(sum[i]) + cimag(sum[i]);
    printf("%d: %.6f %.6f %.6f %.6f\n", rank, e, m, eb, s);
    fftw_destroy_plan(q);
    fftw_free(a);
    fftw_free(b);
    fftw_free(sum);
    MPI_Finalize();
    return 0;
}
