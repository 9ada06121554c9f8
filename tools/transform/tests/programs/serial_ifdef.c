/* CoMD/HPCCG-like: MPI only under #ifdef USING_MPI; the serial build must
 * still compile after the transformation. */
#include <stdio.h>
#ifdef USING_MPI
#include <mpi.h>
#endif

static double sum_all(double v)
{
    double out = v;
    double a = 1.0, b = 2.0;
#ifdef USING_MPI
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    a = a + b;
    b = a * 3.0;
#else
    a = a + b;
    b = a * 3.0;
#endif
    return out + a - b;
}

static double g_u, g_w;

/* the loop is the first statement after the #ifdef: its init goes after it */
static double loop_first(double s)
{
#ifdef USING_MPI
    for (int k = 0; k < 3; k++) {
        MPI_Allreduce(&s, &g_u, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        g_w = g_w * 0.5 + 1.0;
        s += g_u;
    }
#else
    g_u = s;
    g_w = 1.0;
#endif
    return s + g_w + g_u;
}

int main(int argc, char **argv)
{
    double local[8], global[8], s = 1.0, t = 0.0, w = 0.0, u = 0.0;
    int i, step, rank = 0;
#ifdef USING_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    (void)argc;
    (void)argv;
    for (i = 0; i < 8; i++)
        local[i] = i + rank;
    for (step = 0; step < 4; step++) {
#ifdef USING_MPI
        MPI_Allreduce(local, global, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        w = w * 0.5 + 1.0;
#else
        for (i = 0; i < 8; i++)
            global[i] = local[i];
#endif
        t += global[step];
    }
#ifdef USING_MPI
    for (step = 0; step < 3; step++) {
        MPI_Allreduce(&s, &u, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        w = w * 0.25 + 2.0;
        t += u;
    }
#endif
    double r = sum_all(t) + loop_first(w);
    if (rank == 0)
        printf("%.6f %.6f %.6f %.1f\n", r, t, w, s + u);
#ifdef USING_MPI
    MPI_Finalize();
#endif
    return 0;
}
