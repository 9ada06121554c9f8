/*
 * test_prepare.c - the progress thread is placed when the MPI face makes
 * a communicator, not beside the program's first collectives
 * (nbcxi_progress_prepare, src/progress/modes.c; issue 35: in auto mode
 * its placement, 8-13 ms of CPU, took the core from the first
 * collectives of a process, 1.3-4.9 ms repetitions of 60 us ones).
 *
 *   1. After the first communicator is made (mt_init), and before any
 *      collective, the process has exactly one thread named
 *      "nbcx-progress" in the modes that run one (thread, split, auto),
 *      none in caller mode.
 *   2. A collective (checked against MPI's) and a second communicator
 *      add none.
 *   3. nbcx_progress_set(CALLER) with nothing outstanding stops it.
 */
#include <dirent.h>
#include <time.h>

#include "mpitest.h"

/* Threads of this process named "nbcx-progress" (Linux's /proc). */
static int progress_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        mt_fail("cannot read /proc/self/task");
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* (a thread that just ended) */
        if (fgets(name, sizeof name, f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
        n += strcmp(name, "nbcx-progress") == 0;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    double t0 = mt_begin(&argc, &argv);
    int want = mt_mode == NBCX_PROGRESS_CALLER ? 0 : 1;

    mt_watch("1: placed at the communicator's making");
    int n = progress_threads();
    if (n != want)
        mt_fail("%d progress threads after the first communicator, before "
                "any collective, in %s mode (expected %d)", n,
                mt_mode_name(mt_mode), want);

    mt_watch("2: a collective and a second communicator");
    nbcx_comm c = NBCX_COMM_NULL;
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &c));
    int32_t x = mt_rank + 1, sum = 0, ref = 0;
    nbcx_request r = NBCX_REQUEST_NULL;
    mt_nbcx_wait("iallreduce",
                 nbcx_iallreduce(&x, &sum, 1, NBCX_INT32, NBCX_SUM, c, &r), &r);
    MPI_Allreduce(&x, &ref, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    if (sum != ref)
        mt_fail("iallreduce: %d, MPI_Allreduce %d", sum, ref);
    n = progress_threads();
    if (n != want)
        mt_fail("%d progress threads after a collective (expected %d)", n,
                want);

    mt_watch("3: caller mode stops it");
    MT_OK(nbcx_progress_set(NBCX_PROGRESS_CALLER));
    /* Joined; the kernel lists an exited thread until it is reaped,
     * a moment after the join returns: up to 2 s for that. */
    n = progress_threads();
    for (int i = 0; n > 0 && i < 2000; i++) {
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        n = progress_threads();
    }
    if (n != 0)
        mt_fail("%d progress threads after nbcx_progress_set(CALLER)", n);
    MT_OK(nbcx_comm_free(&c));
    return mt_finish("test_prepare", t0);
}
