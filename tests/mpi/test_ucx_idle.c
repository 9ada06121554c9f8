/* test_ucx_idle.c - waiting costs (almost) nothing on the UCX transport
 * (issue 16): rank 0 joins a bcast LATE seconds after the others, which
 * wait for it in nbcx_wait; every waiting rank counts, over the wait,
 *   - the voluntary context switches of all its threads (each sleep and
 *     wake-up of the progress thread or of the waiting thread is one,
 *     /proc/self/task/<tid>/status), at most MAX_SWITCHES per second:
 *     a thread that polled on a 1 ms timer, or chased every event of
 *     the event fd, would make a thousand or more, and the waits of
 *     session 9 (a 10 ms sleep in the waiting thread, and in auto mode
 *     a 10 ms look by the progress thread too) made 98-197;
 *   - the CPU time of the whole process (getrusage), at most MAX_CPU of
 *     the wait (a poller takes a whole core).
 * Counts rather than timings where possible: the CPU bound is loose, for
 * a loaded machine. Run with NBCX_TRANSPORT=ucx (tests/mpi/CMakeLists.txt)
 * in the modes whose wait sleeps on UCX's event fd.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <nbcx.h>
#include <nbcx_mpi.h>

#include "mpitest.h"

enum { N = 1024, MAX_SWITCHES = 100 };
static const double LATE = 1.0, MAX_CPU = 0.05;

/* The voluntary context switches of every thread of this process. */
static long switches(void)
{
    long total = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        long n;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
                total += n;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return total;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* One bcast whose root comes late seconds after the others. */
static void late_bcast(nbcx_comm comm, int32_t *buf, double late)
{
    for (int i = 0; i < N; i++)
        buf[i] = mt_rank == 0 ? i + 1 : 0;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    nbcx_request req;
    if (mt_rank == 0) {
        struct timespec ts = { (time_t)late,
                               (long)((late - (time_t)late) * 1e9) };
        nanosleep(&ts, NULL);
        mt_nbcx_wait("the root's bcast",
                     nbcx_ibcast(buf, N, NBCX_INT32, 0, comm, &req), &req);
        return;
    }
    long s0 = switches();
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    mt_nbcx_wait("the late bcast",
                 nbcx_ibcast(buf, N, NBCX_INT32, 0, comm, &req), &req);
    double t = MPI_Wtime() - t0, cpu = cpu_seconds() - c0;
    long s = switches() - s0;
    for (int i = 0; i < N; i++)
        if (buf[i] != i + 1) {
            mt_fail("buf[%d] = %d, expected %d", i, buf[i], i + 1);
            break;
        }
    if (late == 0)
        return; /* the warm-up */
    printf("rank %d: waited %.2f s: %ld voluntary switches, CPU %.1f %%\n",
           mt_rank, t, s, 100 * cpu / t);
    if (s > MAX_SWITCHES * t)
        mt_fail("%ld voluntary context switches in a %.2f s wait (at most "
                "%d per second)", s, t, MAX_SWITCHES);
    if (cpu > MAX_CPU * t)
        mt_fail("CPU %.1f %% of a %.2f s wait (at most %.0f %%)",
                100 * cpu / t, t, 100 * MAX_CPU);
}

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    nbcx_comm comm;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));
    static int32_t buf[N];
    mt_watch("a warm-up bcast");
    late_bcast(comm, buf, 0);
    mt_watch("a bcast whose root is %.1f s late", LATE);
    late_bcast(comm, buf, LATE);
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_ucx_idle", t0);
}
