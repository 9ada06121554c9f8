/* ovlcost.c - where an overlapped collective's time goes on the emulated
 * network (issue 35, session 28). 2 ranks; for each repetition:
 *   alone: a floating-point loop sized to the collective's pure time;
 *   ovl:   nbcx start, the same loop, nbcx wait.
 * Reported per repetition, rank 0 and 1: the loop's wall time alone and
 * overlapped, the computing thread's own run time during ovl
 * (/proc/self/task/TID/schedstat, ns: it includes interrupt and softirq
 * work done on its core, this kernel has no IRQ_TIME_ACCOUNTING), the
 * other threads' run time (nbcx's progress thread), and, at the end, the
 * irq+softirq time of the whole machine (/proc/stat, in ticks of 10 ms,
 * so summed over all repetitions) during the ovl runs and during as many
 * blocking MPI collectives of the same size (the kernel's cost of moving
 * the data, whoever waits).
 *
 *   mpicc -O2 -I include ovlcost.c -L build/openmpi -lnbcx \
 *         -Wl,-rpath,build/openmpi -o ovlcost
 *   NBCX_PROGRESS=thread tools/emunet --rate 1gbit -- mpiexec -n 2 \
 *       ./ovlcost allreduce 1048576 30
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <nbcx.h>
#include <nbcx_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile double sink;
static void work(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* Run time (ns) of this thread and of the process's other threads. */
static void runtimes(double *self, double *other)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long me = syscall(SYS_gettid);
    *self = *other = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[300];
        snprintf(p, sizeof p, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(p, "r");
        double a;
        if (f && fscanf(f, "%lf", &a) == 1)
            *(atol(e->d_name) == me ? self : other) += a;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
}

/* irq + softirq ticks of the machine (/proc/stat, first line). */
static long irq_ticks(void)
{
    FILE *f = fopen("/proc/stat", "r");
    long v[7] = { 0 };
    if (f && fscanf(f, "cpu %ld %ld %ld %ld %ld %ld %ld", v, v + 1, v + 2,
                    v + 3, v + 4, v + 5, v + 6) != 7)
        v[5] = v[6] = 0;
    if (f)
        fclose(f);
    return v[5] + v[6];
}

static int start(const char *op, double *s, double *r, int n, nbcx_comm c,
                 nbcx_request *q)
{
    if (strcmp(op, "bcast") == 0)
        return nbcx_ibcast(s, n, NBCX_DOUBLE, 0, c, q);
    return nbcx_iallreduce(s, r, n, NBCX_DOUBLE, NBCX_SUM, c, q);
}

static void blocking(const char *op, double *s, double *r, int n)
{
    if (strcmp(op, "bcast") == 0)
        MPI_Bcast(s, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
        MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *op = argc > 1 ? argv[1] : "allreduce";
    int n = (argc > 2 ? atoi(argv[2]) : 1048576) / 8;
    int reps = argc > 3 ? atoi(argv[3]) : 30;
    nbcx_comm c;
    nbcx_comm_from_mpi(MPI_COMM_WORLD, &c);
    double *s = calloc(n, 8), *r = calloc(n, 8);
    nbcx_request q;

    double tp = 0;
    for (int i = 0; i < 5; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        start(op, s, r, n, c, &q);
        nbcx_wait(&q);
        tp = MPI_Wtime() - t0;
    }
    /* the collective's time is the slowest rank's (a bcast's root is done
     * once its data is in the socket buffers) */
    MPI_Allreduce(MPI_IN_PLACE, &tp, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long units = 1000000;
    double t = MPI_Wtime();
    work(units);
    units = (long)(units * tp / (MPI_Wtime() - t));

    long irq_ovl = 0;
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        work(units);
        double alone = MPI_Wtime() - t0;
        double s0, o0, s1, o1;
        runtimes(&s0, &o0);
        long i0 = irq_ticks();
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        start(op, s, r, n, c, &q);
        double t1 = MPI_Wtime();
        work(units);
        double t2 = MPI_Wtime();
        nbcx_wait(&q);
        double t3 = MPI_Wtime();
        irq_ovl += irq_ticks() - i0;
        runtimes(&s1, &o1);
        printf("rank %d rep %2d pure %.2f alone %.2f | ovl start %.2f "
               "loop %.2f wait %.2f total %.2f | self %.2f others %.2f ms\n",
               rank, i, tp * 1e3, alone * 1e3, (t1 - t0) * 1e3,
               (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3,
               (s1 - s0) * 1e-6, (o1 - o0) * 1e-6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long i0 = irq_ticks();
    for (int i = 0; i < reps; i++)
        blocking(op, s, r, n);
    long irq_block = irq_ticks() - i0;
    long tick = sysconf(_SC_CLK_TCK);
    if (rank == 0)
        printf("irq+softirq, machine, per operation: ovl %.2f ms, "
               "blocking MPI %.2f ms (%d each, ticks of %ld ms)\n",
               irq_ovl * 1e3 / tick / reps, irq_block * 1e3 / tick / reps,
               reps, 1000 / tick);
    free(s);
    free(r);
    nbcx_comm_free(&c);
    MPI_Finalize();
    return 0;
}
