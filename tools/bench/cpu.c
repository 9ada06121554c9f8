/*
 * cpu.c - the synthetic computation overlapped with communication, and
 * the CPU time spent by the process's other threads (progress threads of
 * nbcx or of the MPI library; with ranks as threads, not the other
 * ranks) while it runs.
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* ---- the computation ------------------------------------------------- */

/* 16 KiB of doubles: stays in the L1 cache, so the computation is pure
 * floating-point work and does not compete with the communication for
 * memory bandwidth. One per thread: ranks that are threads (inproc) must
 * not share it. External linkage keeps the compiler from discarding
 * stores it cannot see being read. */
#define CPU_ARRAY 2048
#define CPU_UNIT 256 /* elements updated per unit of work */
_Thread_local double nbcx_bench_cpu_array[CPU_ARRAY];

/* One unit: CPU_UNIT multiply-adds. x -> 0.9999999 x + 1e-7 converges to
 * 1 from the initial 0, so the values never become denormal. */
static void cpu_unit(size_t at)
{
    double *x = nbcx_bench_cpu_array + at;
    for (int i = 0; i < CPU_UNIT; i++)
        x[i] = x[i] * 0.9999999 + 1e-7;
}

void cpu_work(long units)
{
    size_t at = 0;
    for (long u = 0; u < units; u++) {
        cpu_unit(at);
        at = (at + CPU_UNIT) % CPU_ARRAY;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cpu_calibrate(double (*now)(void))
{
    cpu_work(1000); /* warm up the cache and the clock frequency */
    long units = 1000;
    double dt;
    for (;;) { /* grow until one run lasts 20 ms */
        double t0 = now();
        cpu_work(units);
        dt = now() - t0;
        if (dt >= 0.02)
            break;
        units *= 2;
    }
    double rate[3];
    for (int i = 0; i < 3; i++) {
        double t0 = now();
        cpu_work(units);
        rate[i] = (double)units / (now() - t0);
    }
    qsort(rate, 3, sizeof rate[0], cmp_double);
    return rate[1];
}

/* ---- CPU time of the other threads ------------------------------------ */
/*
 * A thread's CPU time is only readable by the thread itself through
 * CLOCK_THREAD_CPUTIME_ID, and pthread_getcpuclockid() needs a pthread_t
 * we do not have for threads the MPI library or nbcx created. Linux gives
 * every thread of the process a CPU-time clock whose id is made from the
 * thread id, ((~tid) << 3) | CPUCLOCK_PERTHREAD_MASK (4) | CPUCLOCK_SCHED
 * (2): the very value glibc's pthread_getcpuclockid() returns, so a
 * stable ABI. It is exact to the nanosecond, also for a thread running
 * on another core at the time. The thread ids come from /proc/self/task.
 * Where that clock is refused, /proc/self/task/TID/stat (utime + stime,
 * in clock ticks, so only 10 ms resolution) is the fallback.
 */

enum method { METHOD_UNKNOWN, METHOD_CLOCK, METHOD_STAT };
/* Found out once; atomic, as ranks that are threads ask at once. */
static atomic_int method;

pid_t cpu_thread_id(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static clockid_t thread_clock(pid_t tid)
{
    /* Unsigned arithmetic: shifting a negative int is undefined. */
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static int read_clock(pid_t tid, double *sec)
{
    struct timespec ts;
    if (clock_gettime(thread_clock(tid), &ts) != 0)
        return -1;
    *sec = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    return 0;
}

static int read_stat(pid_t tid, double *sec)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    /* Fields after the command name "(...)", which may hold spaces:
     * state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
     * cmajflt utime stime. */
    char *p = strrchr(line, ')');
    if (!p)
        return -1;
    unsigned long long utime = 0, stime = 0;
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
               &utime, &stime) != 2)
        return -1;
    *sec = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

static enum method get_method(void)
{
    double s;
    int m = atomic_load(&method);
    if (m == METHOD_UNKNOWN) {
        m = read_clock(cpu_thread_id(), &s) == 0 ? METHOD_CLOCK : METHOD_STAT;
        atomic_store(&method, m);
    }
    return (enum method)m;
}

const char *cpu_snapshot_method(void)
{
    return get_method() == METHOD_CLOCK ? "thread-cpu-clock" : "proc-stat";
}

static int skipped(long tid, const pid_t *skip, int nskip)
{
    for (int i = 0; i < nskip; i++)
        if (skip[i] == tid)
            return 1;
    return 0;
}

void cpu_snapshot_take(struct cpu_snapshot *s, const pid_t *skip, int nskip)
{
    enum method m = get_method();
    pid_t self = cpu_thread_id();
    s->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && s->n < CPU_MAX_THREADS) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || tid == self ||
            skipped(tid, skip, nskip))
            continue;
        double sec;
        /* A thread that exited since readdir() is simply skipped. */
        int err = m == METHOD_CLOCK ? read_clock((pid_t)tid, &sec)
                                    : read_stat((pid_t)tid, &sec);
        if (err == 0) {
            s->tid[s->n] = (pid_t)tid;
            s->sec[s->n] = sec;
            s->n++;
        }
    }
    closedir(d);
}

double cpu_snapshot_delta(const struct cpu_snapshot *before,
                          const struct cpu_snapshot *after)
{
    double sum = 0;
    for (int i = 0; i < after->n; i++) {
        double start = 0; /* born in between: count from zero */
        for (int j = 0; j < before->n; j++)
            if (before->tid[j] == after->tid[i])
                start = before->sec[j];
        if (after->sec[i] > start)
            sum += after->sec[i] - start;
    }
    return sum;
}
