/* pmpi_cost.c - the shim's own cost (a benchmark, not a test; issue 13:
 * within 0.5 us of nbcx's API). On one rank, linked with libnbcx-pmpi
 * (-lnbcx-pmpi before the MPI library, as a program using the shim is):
 *   persistent   a 1-rank MPI_Barrier_init (MPIX_ on Open MPI 4.1)
 *                restarted: MPI_Start + MPI_Wait through the shim, against
 *                nbcx_barrier_init's request: nbcx_start + nbcx_wait;
 *   nonblocking  MPI_Ibarrier + MPI_Wait through the shim, against
 *                nbcx_ibarrier + nbcx_wait.
 * One repetition times N iterations of each variant in turn (the variants
 * interleaved, so a change of machine load hits them alike); after one
 * untimed repetition, R repetitions give per-iteration times, and the
 * report is the median (and min, max) over repetitions of each variant
 * and of the paired difference shim - nbcx within each repetition. It
 * also checks that the shim served the calls on nbcx (none went native)
 * and prints the load average before and after.
 *
 *   build/<mpi>/tests/pmpi/pmpi_cost [N [R]]     (defaults 50000, 15)
 *   NBCX_PROGRESS=caller|thread selects nbcx's progress mode as usual.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx_mpi.h"
#include "shim.h" /* PNAME: MPI_Barrier_init or MPIX_Barrier_init */

/* libnbcx-pmpi's counts (shim.c; no header). */
int nbcx_pmpi_counts(long long *served, long long *native);

enum { SHIM_P, NBCX_P, SHIM_I, NBCX_I, NV };
static const char *const names[NV] = {
    "persistent MPI_Start+MPI_Wait (shim)",
    "persistent nbcx_start+nbcx_wait",
    "nonblocking MPI_Ibarrier+MPI_Wait (shim)",
    "nonblocking nbcx_ibarrier+nbcx_wait",
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct stat3 {
    double median, min, max;
};

static struct stat3 stat_of(const double *v, int n)
{
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        abort();
    memcpy(s, v, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp);
    struct stat3 r = { n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2,
                       s[0], s[n - 1] };
    free(s);
    return r;
}

static void loadavg(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int n = argc > 1 ? atoi(argv[1]) : 50000;
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    if (n < 100 || reps < 1) {
        fprintf(stderr, "usage: pmpi_cost [N >= 100 [R >= 1]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char load0[128], load1[128];
    loadavg(load0, sizeof load0);

    nbcx_comm c;
    if (nbcx_comm_from_mpi(MPI_COMM_SELF, &c) != NBCX_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Request mr = MPI_REQUEST_NULL;
    nbcx_request nr;
#if SHIM_PERSISTENT
    PNAME(Barrier)(MPI_COMM_SELF, MPI_INFO_NULL, &mr);
#endif
    nbcx_barrier_init(c, &nr);
    long long served0 = 0, native0 = 0;
    nbcx_pmpi_counts(&served0, &native0);

    double *t[NV], *diff_p, *diff_i;
    for (int v = 0; v < NV; v++)
        t[v] = calloc((size_t)reps, sizeof **t);
    diff_p = calloc((size_t)reps, sizeof *diff_p);
    diff_i = calloc((size_t)reps, sizeof *diff_i);
    if (!t[NV - 1] || !diff_p || !diff_i)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, not kept */
        double t0 = MPI_Wtime();
        for (int i = 0; i < n && mr != MPI_REQUEST_NULL; i++) {
            MPI_Start(&mr);
            MPI_Wait(&mr, MPI_STATUS_IGNORE);
        }
        double t1 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            nbcx_start(&nr);
            nbcx_wait(&nr);
        }
        double t2 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPI_Request q;
            MPI_Ibarrier(MPI_COMM_SELF, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        double t3 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            nbcx_request q;
            nbcx_ibarrier(c, &q);
            nbcx_wait(&q);
        }
        double t4 = MPI_Wtime();
        if (r < 0)
            continue;
        t[SHIM_P][r] = (t1 - t0) / n * 1e6;
        t[NBCX_P][r] = (t2 - t1) / n * 1e6;
        t[SHIM_I][r] = (t3 - t2) / n * 1e6;
        t[NBCX_I][r] = (t4 - t3) / n * 1e6;
        diff_p[r] = t[SHIM_P][r] - t[NBCX_P][r];
        diff_i[r] = t[SHIM_I][r] - t[NBCX_I][r];
    }
    long long served = 0, native = 0;
    nbcx_pmpi_counts(&served, &native);
    if (mr != MPI_REQUEST_NULL)
        MPI_Request_free(&mr);
    nbcx_request_free(&nr);
    nbcx_comm_free(&c);
    loadavg(load1, sizeof load1);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    for (char *p = lib; *p; p++)
        if (*p == '\t')
            *p = ' ';
    nbcx_progress_mode mode = NBCX_PROGRESS_CALLER;
    nbcx_progress_get(&mode);
    printf("pmpi_cost: %s; nbcx progress %s; %d repetitions (+1 warm-up) of "
           "%d iterations per variant, interleaved\n", lib,
           mode == NBCX_PROGRESS_THREAD  ? "thread"
           : mode == NBCX_PROGRESS_SPLIT ? "split"
                                         : "caller",
           reps, n);
    printf("pmpi_cost: load average before: %s; after: %s\n", load0, load1);
    printf("pmpi_cost: shim calls served by nbcx %lld, native %lld%s\n",
           served, native,
           native ? " (NOT all on nbcx: the comparison is void)" : "");
    printf("%-44s %10s %10s %10s\n", "us per iteration", "median", "min",
           "max");
    for (int v = 0; v < NV; v++) {
        if (v == SHIM_P && mr == MPI_REQUEST_NULL && !SHIM_PERSISTENT)
            continue;
        struct stat3 s = stat_of(t[v], reps);
        printf("%-44s %10.3f %10.3f %10.3f\n", names[v], s.median, s.min,
               s.max);
    }
    struct stat3 dp = stat_of(diff_p, reps), di = stat_of(diff_i, reps);
    if (SHIM_PERSISTENT)
        printf("%-44s %10.3f %10.3f %10.3f\n",
               "shim cost, persistent (paired difference)", dp.median, dp.min,
               dp.max);
    printf("%-44s %10.3f %10.3f %10.3f\n",
           "shim cost, nonblocking (paired difference)", di.median, di.min,
           di.max);
    if (SHIM_PERSISTENT)
        printf("pmpi_cost: persistent shim cost %.3f us (median): %s the "
               "0.5 us target\n", dp.median,
               dp.median <= 0.5 ? "within" : "NOT within");
    for (int v = 0; v < NV; v++)
        free(t[v]);
    free(diff_p);
    free(diff_i);
    MPI_Finalize();
    return native != 0;
}
