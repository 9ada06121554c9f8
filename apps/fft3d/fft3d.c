/*
 * fft3d - 3-D FFT of an N^3 complex field, slab decomposition (paper 003,
 * Section IV E).
 *
 * Rank r holds L = N/p planes x = rL..rL+L-1, each an N x N (y, z)
 * plane. Forward: for every local plane k, a 2-D FFT (FFTW) and an
 * alltoall of that plane (each rank gets its N/p rows of y), pipelined:
 * the exchange of plane k is started before the transform of plane k+1
 * and waited for only at the end, so transform k overlaps exchange k-1.
 * Then the 1-D FFTs along x on the rank's y slab. Inverse: the 1-D
 * inverse FFTs along x, all L exchanges back started at once, and the
 * inverse 2-D FFT of plane k as soon as exchange k is done. With
 * --iters I the forward-inverse pair repeats (persistent requests are
 * made once, one per plane and direction).
 *
 * (complex.h comes before fftw3.h, so fftw_complex is C99's double complex.)
 *
 * Answer: the energy of the spectrum sum |F|^2 (Parseval: N^3 sum |f|^2,
 * checked), the real and imaginary parts of F at a few frequencies, and
 * the largest error of inverse(forward(f)) / N^3 against f (checked
 * < 1e-10); the three values are checked against a direct DFT sum for
 * N <= 64. The exchanges move data exactly, so every variant gives the
 * same numbers; the tolerance is a relative 1e-12 all the same.
 *
 *   mpiexec -n 4 ./app_fft3d --n 128 --iters 2 --variant nbcx
 */
#include <complex.h>

#include <fftw3.h>

#include "../common/app.h"

static long N = 32, iters = 1;

static int option(const char *k, const char *v)
{
    int bad = 0;
    if (!strcmp(k, "n"))
        N = app_atol(v, 1, 2048, &bad);
    else if (!strcmp(k, "iters"))
        iters = app_atol(v, 1, 100000, &bad);
    else
        return 0;
    return bad ? -1 : 1;
}

static double complex input(long x, long y, long z)
{
    uint64_t k = ((uint64_t)x * 4099u + (uint64_t)y) * 4099u + (uint64_t)z;
    return (app_unit(2 * k) - 0.5) + I * (app_unit(2 * k + 1) - 0.5);
}

static void run(struct app_result *res)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (N % size != 0) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "--n %ld is not a multiple of the %d ranks", N, size);
        return;
    }
    struct app_comm c;
    app_comm_make(MPI_COMM_WORLD, &c);
    long L = N / size, plane = N * N, blk = L * N; /* per rank per plane */
    size_t local = (size_t)(L * plane);
    fftw_complex *f = fftw_malloc(sizeof(fftw_complex) * local);   /* [x][y][z] */
    fftw_complex *t = fftw_malloc(sizeof(fftw_complex) * local);   /* [y][z][x] */
    fftw_complex *sb = fftw_malloc(sizeof(fftw_complex) * local);  /* per plane k: [r][yl][z] */
    fftw_complex *rb = fftw_malloc(sizeof(fftw_complex) * local);  /* per plane k: [r][yl][z] */
    double complex *orig = malloc(sizeof(double complex) * local);
    for (long k = 0; k < L; k++)
        for (long y = 0; y < N; y++)
            for (long z = 0; z < N; z++)
                orig[(k * N + y) * N + z] = input(rank * L + k, y, z);
    /* Plans (FFTW_ESTIMATE | FFTW_UNALIGNED: the same plan, hence the same arithmetic,
     * on every run and rank). */
    fftw_plan p2f = fftw_plan_dft_2d((int)N, (int)N, f, f, FFTW_FORWARD,
                                     FFTW_ESTIMATE | FFTW_UNALIGNED);
    fftw_plan p2b = fftw_plan_dft_2d((int)N, (int)N, f, f, FFTW_BACKWARD,
                                     FFTW_ESTIMATE | FFTW_UNALIGNED);
    int n1[1] = { (int)N };
    fftw_plan p1f = fftw_plan_many_dft(1, n1, (int)(L * N), t, NULL, 1,
                                       (int)N, t, NULL, 1, (int)N,
                                       FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    fftw_plan p1b = fftw_plan_many_dft(1, n1, (int)(L * N), t, NULL, 1,
                                       (int)N, t, NULL, 1, (int)N,
                                       FFTW_BACKWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
    struct app_site *fw = malloc(sizeof *fw * (size_t)L);
    struct app_site *bw = malloc(sizeof *bw * (size_t)L);
    for (long k = 0; k < L; k++)
        fw[k] = bw[k] = (struct app_site)APP_SITE_INIT;
    double energy = 0, maxerr = 0;
    double complex probe[3] = { 0, 0, 0 };
    for (long it = 0; it < iters; it++) {
        memcpy(f, orig, sizeof(double complex) * local);
        /* Forward: 2-D FFT of plane k, pack, start exchange k. */
        for (long k = 0; k < L; k++) {
            fftw_complex *pl = f + k * plane;
            fftw_execute_dft(p2f, pl, pl);
            app_alltoall(&fw[k], pl, rb + k * plane, (int)(2 * blk),
                         APP_DOUBLE, &c);
        }
        app_waitall((int)L, fw);
        /* Unpack to t[yl][z][x], x = r L + k. */
        for (long k = 0; k < L; k++)
            for (long r = 0; r < size; r++) {
                const fftw_complex *src = rb + k * plane + r * blk;
                for (long yl = 0; yl < L; yl++)
                    for (long z = 0; z < N; z++) {
                        t[(yl * N + z) * N + r * L + k] = src[yl * N + z];
                    }
            }
        fftw_execute_dft(p1f, t, t);
        if (it == 0) { /* the spectrum's energy and three values */
            double e = 0;
            for (size_t i = 0; i < local; i++)
                e += creal(t[i] * conj(t[i]));
            MPI_Allreduce(&e, &energy, 1, MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD);
            long fx[3] = { 0, 1 % N, N / 2 }, fy[3] = { 0, N / 3, N - 1 },
                 fz[3] = { 0, 2 % N, N / 5 };
            double vals[6] = { 0 }, all[6];
            for (int q = 0; q < 3; q++)
                if (fy[q] / L == rank) {
                    fftw_complex v = t[((fy[q] % L) * N + fz[q]) * N + fx[q]];
                    vals[2 * q] = creal(v);
                    vals[2 * q + 1] = cimag(v);
                }
            MPI_Allreduce(vals, all, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (int q = 0; q < 3; q++)
                probe[q] = all[2 * q] + I * all[2 * q + 1];
        }
        /* Inverse: 1-D along x, pack plane k (x = r L + k for rank r),
         * all exchanges started, then each plane's 2-D FFT when it is
         * back. */
        fftw_execute_dft(p1b, t, t);
        for (long k = 0; k < L; k++) {
            fftw_complex *s = sb + k * plane;
            for (long r = 0; r < size; r++)
                for (long yl = 0; yl < L; yl++)
                    for (long z = 0; z < N; z++) {
                        s[r * blk + yl * N + z] =
                            t[(yl * N + z) * N + r * L + k];
                    }
            app_alltoall(&bw[k], s, rb + k * plane, (int)(2 * blk),
                         APP_DOUBLE, &c);
        }
        for (long k = 0; k < L; k++) {
            app_wait(&bw[k]);
            fftw_complex *pl = rb + k * plane; /* [r][yl][z] = [y][z] */
            fftw_execute_dft(p2b, pl, pl);
        }
        double e = 0;
        double scale = 1.0 / ((double)N * (double)N * (double)N);
        for (size_t i = 0; i < local; i++) {
            double complex v = rb[i] * scale;
            e = fmax(e, cabs(v - orig[i]));
        }
        maxerr = fmax(maxerr, e);
    }
    double all;
    MPI_Allreduce(&maxerr, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    maxerr = all;
    double in_e = 0, in_all;
    for (size_t i = 0; i < local; i++)
        in_e += creal(orig[i] * conj(orig[i]));
    MPI_Allreduce(&in_e, &in_all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double n3 = (double)N * (double)N * (double)N;
    app_int(res, "n", N);
    app_real(res, "spectrum_energy", energy);
    for (int q = 0; q < 3; q++) {
        static const char *re[3] = { "F0_re", "F1_re", "F2_re" };
        static const char *im[3] = { "F0_im", "F1_im", "F2_im" };
        app_real(res, re[q], creal(probe[q]));
        app_real(res, im[q], cimag(probe[q]));
    }
    if (!(maxerr < 1e-10) ||
        !(fabs(energy - n3 * in_all) <= 1e-9 * n3 * in_all)) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "inverse(forward) error %.3e, Parseval %.15g vs %.15g",
                 maxerr, energy, n3 * in_all);
    }
    /* The three probed frequencies by a direct DFT sum on rank 0 (N up
     * to 64): the transpose put every x, y, z where it belongs. */
    if (N <= 64) {
        int bad = 0;
        if (rank == 0) {
            long fx[3] = { 0, 1 % N, N / 2 }, fy[3] = { 0, N / 3, N - 1 },
                 fz[3] = { 0, 2 % N, N / 5 };
            double complex *tw = malloc(sizeof(double complex) * (size_t)N);
            const double pi = 3.14159265358979323846;
            for (long m = 0; m < N; m++)
                tw[m] = cexp(-2.0 * pi * I * (double)m / (double)N);
            for (int q = 0; q < 3; q++) {
                double complex sum = 0;
                for (long x = 0; x < N; x++)
                    for (long y = 0; y < N; y++)
                        for (long z = 0; z < N; z++)
                            sum += input(x, y, z) *
                                   tw[(fx[q] * x + fy[q] * y + fz[q] * z) % N];
                if (cabs(sum - probe[q]) > 1e-9 * (1 + cabs(sum)))
                    bad = 1;
            }
            free(tw);
        }
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (bad) {
            res->ok = 0;
            snprintf(res->why, sizeof res->why,
                     "spectrum differs from the direct DFT");
        }
    }
    for (long k = 0; k < L; k++) {
        app_site_free(&fw[k]);
        app_site_free(&bw[k]);
    }
    app_comm_free(&c);
    fftw_destroy_plan(p2f);
    fftw_destroy_plan(p2b);
    fftw_destroy_plan(p1f);
    fftw_destroy_plan(p1b);
    fftw_free(f);
    fftw_free(t);
    fftw_free(sb);
    fftw_free(rb);
    free(orig);
    free(fw);
    free(bw);
}

int main(int argc, char **argv)
{
    static const struct app_kernel k = {
        "fft3d", "[--n N (a multiple of the ranks)] [--iters I]", 1e-12,
        "the exchanges move data exactly; every variant runs the same "
        "FFTW plans",
        option, run, APP_RUN_TRANSFORMED
    };
    int rc = app_main(argc, argv, &k);
    fftw_cleanup();
    return rc;
}
