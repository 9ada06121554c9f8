/*
 * cg - conjugate gradient on a 3-D 7-point Poisson matrix (as HPCCG, paper
 * 004's CG), distributed by z planes.
 *
 * The matrix is the Dirichlet Laplacian of an nx x ny x nz grid (6 on the
 * diagonal, -1 for each neighbour inside the grid); b = A * ones, so the
 * exact solution is all ones. Each iteration gathers the search vector p
 * on every rank (allgatherv) and reduces two dot products (allreduce).
 * Overlap: the matrix rows of interior planes need only the rank's own
 * part of p, so they are computed while the allgatherv is in flight;
 * x += alpha p is computed while r.r is being reduced.
 *
 * Answer: iterations to the relative residual --tol, the final relative
 * residual and the error |x - 1|_2 / sqrt(n). Verified: residual below
 * tol and error below 1e-6. The dot products are reduced in different
 * orders by different libraries, so the reals agree to a relative 1e-6.
 *
 *   mpiexec -n 4 ./app_cg --nx 64 --ny 64 --nz 64 --variant nbcx
 */
#include "../common/app.h"

static long nx = 32, ny = 32, nz = 32, maxit = 1000;
static double tol = 1e-10;

static int option(const char *k, const char *v)
{
    int bad = 0;
    if (!strcmp(k, "nx"))
        nx = app_atol(v, 1, 4096, &bad);
    else if (!strcmp(k, "ny"))
        ny = app_atol(v, 1, 4096, &bad);
    else if (!strcmp(k, "nz"))
        nz = app_atol(v, 1, 4096, &bad);
    else if (!strcmp(k, "n"))
        nx = ny = nz = app_atol(v, 1, 4096, &bad);
    else if (!strcmp(k, "maxit"))
        maxit = app_atol(v, 1, 1000000, &bad);
    else if (!strcmp(k, "tol")) {
        tol = atof(v);
        bad = !(tol > 0 && tol < 1);
    } else
        return 0;
    return bad ? -1 : 1;
}

static double dot(const double *a, const double *b, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* y[rows of planes z0..z1) = A p, rows numbered from plane zoff; p read
 * from `src`, whose plane 0 is global plane zsrc. */
static void spmv(double *y, long zoff, long z0, long z1, const double *src,
                 long zsrc)
{
    long plane = nx * ny;
    for (long z = z0; z < z1; z++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++) {
                const double *c = src + (z - zsrc) * plane + j * nx + i;
                double s = 6.0 * c[0];
                if (i > 0) s -= c[-1];
                if (i < nx - 1) s -= c[1];
                if (j > 0) s -= c[-nx];
                if (j < ny - 1) s -= c[nx];
                if (z > 0) s -= c[-plane];
                if (z < nz - 1) s -= c[plane];
                y[(z - zoff) * plane + j * nx + i] = s;
            }
}

static void run(struct app_result *res)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct app_comm c;
    app_comm_make(MPI_COMM_WORLD, &c);
    long plane = nx * ny, n = plane * nz;
    int *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    long zfirst = 0, nzl = 0;
    for (int r = 0, z = 0; r < size; r++) {
        long planes = nz / size + (r < nz % size);
        counts[r] = (int)(planes * plane);
        displs[r] = (int)(z * plane);
        if (r == rank) {
            zfirst = z;
            nzl = planes;
        }
        z += (int)planes;
    }
    long nl = nzl * plane;
    double *x = calloc((size_t)nl + 1, sizeof *x);
    double *r = malloc(sizeof(double) * ((size_t)nl + 1));
    double *p = malloc(sizeof(double) * ((size_t)nl + 1));
    double *ap = malloc(sizeof(double) * ((size_t)nl + 1));
    double *pfull = malloc(sizeof(double) * (size_t)n);
    double *ones = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++)
        ones[i] = 1.0;
    spmv(r, zfirst, zfirst, zfirst + nzl, ones, 0); /* r = b - A*0 = b */
    memcpy(p, r, sizeof(double) * (size_t)nl);

    struct app_site s_gather = APP_SITE_INIT, s_pap = APP_SITE_INIT,
                    s_rr = APP_SITE_INIT, s_rr0 = APP_SITE_INIT;
    s_rr0.transient = 1; /* once, into rr: not the loop's site */
    double loc, rr, rr0, pap, rrnew;
    loc = dot(r, r, nl);
    app_allreduce(&s_rr0, &loc, &rr, 1, APP_DOUBLE, APP_SUM, &c);
    app_wait(&s_rr0);
    rr0 = rr;
    long it = 0;
    double rel = sqrt(rr / rr0);
    while (it < maxit && rel > tol) {
        it++;
        app_allgatherv(&s_gather, p, (int)nl, pfull, counts, displs,
                       APP_DOUBLE, &c);
        /* Interior planes from the rank's own p, meanwhile. */
        if (nzl > 2)
            spmv(ap, zfirst, zfirst + 1, zfirst + nzl - 1, p, zfirst);
        app_wait(&s_gather);
        if (nzl > 0) {
            spmv(ap, zfirst, zfirst, zfirst + 1, pfull, 0);
            if (nzl > 1)
                spmv(ap, zfirst, zfirst + nzl - 1, zfirst + nzl, pfull, 0);
        }
        loc = dot(p, ap, nl);
        app_allreduce(&s_pap, &loc, &pap, 1, APP_DOUBLE, APP_SUM, &c);
        app_wait(&s_pap);
        double alpha = rr / pap;
        for (long i = 0; i < nl; i++)
            r[i] -= alpha * ap[i];
        loc = dot(r, r, nl);
        app_allreduce(&s_rr, &loc, &rrnew, 1, APP_DOUBLE, APP_SUM, &c);
        for (long i = 0; i < nl; i++) /* while r.r is reduced */
            x[i] += alpha * p[i];
        app_wait(&s_rr);
        double beta = rrnew / rr;
        rr = rrnew;
        rel = sqrt(rr / rr0);
        for (long i = 0; i < nl; i++)
            p[i] = r[i] + beta * p[i];
    }
    app_site_free(&s_gather);
    app_site_free(&s_pap);
    app_site_free(&s_rr);
    app_comm_free(&c);

    /* Verification, outside the kernel's communication (plain MPI). */
    double e = 0, etot;
    for (long i = 0; i < nl; i++)
        e += (x[i] - 1.0) * (x[i] - 1.0);
    MPI_Allreduce(&e, &etot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double err = sqrt(etot / (double)n);
    app_int(res, "iterations", it);
    app_int(res, "unknowns", n);
    app_real(res, "rel_residual", rel);
    app_real(res, "error", err);
    if (!(rel <= tol && err < 1e-6)) {
        res->ok = 0;
        snprintf(res->why, sizeof res->why,
                 "not converged: residual %.3e (tol %.1e), error %.3e after "
                 "%ld iterations",
                 rel, tol, err, it);
    }
    free(counts);
    free(displs);
    free(x);
    free(r);
    free(p);
    free(ap);
    free(pfull);
    free(ones);
}

int main(int argc, char **argv)
{
    static const struct app_kernel k = {
        "cg", "[--n N | --nx X --ny Y --nz Z] [--tol T] [--maxit M]", 1e-6,
        "dot products summed in library-dependent order", option, run, APP_RUN_TRANSFORMED
    };
    return app_main(argc, argv, &k);
}
