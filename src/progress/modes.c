/* modes.c - which progress mode is in force: NBCX_PROGRESS (read once),
 * nbcx_progress_set, the capabilities of the transports (one not safe
 * for a progress thread makes the default caller), and a face's refusal
 * of threads (MPI without MPI_THREAD_MULTIPLE), which leaves the caller
 * mode. The modes themselves are tables (mode_caller.c, mode_thread.c,
 * mode_split.c, mode_auto.c).
 *
 * The default depends on the transports' capabilities, so it is decided
 * once a communicator exists (nbcxi_comm_made, base/comm.c), or by the
 * first start, mode switch or refusal of threads. Before that a report
 * (nbcx_progress_get, nbcx_info) gives the mode the environment asks for
 * without deciding it, and starts no thread.
 */
#include <stdio.h>
#include <string.h>

#include "progress.h"

/* Indexed by nbcx_progress_mode. */
static const struct nbcxi_progress_mode *const modes[] = {
    [NBCX_PROGRESS_CALLER] = &nbcxi_caller_mode,
    [NBCX_PROGRESS_THREAD] = &nbcxi_thread_mode,
    [NBCX_PROGRESS_SPLIT] = &nbcxi_split_mode,
    [NBCX_PROGRESS_AUTO] = &nbcxi_auto_mode,
};
enum { NMODES = sizeof modes / sizeof modes[0] };

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_mode = NBCX_PROGRESS_AUTO; /* NBCX_PROGRESS, or auto */
static bool env_chose;                     /* NBCX_PROGRESS is set */
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static _Atomic int mode;                   /* in force, once decided */
static atomic_bool decided;
static _Atomic bool threads_ok = true;

static bool known(int m)
{
    return m >= 0 && m < NMODES && modes[m];
}

static void read_env(void)
{
    const char *v = nbcxi_getenv("NBCX_PROGRESS");
    if (!v)
        return;
    int k = 0;
    while (k < NMODES && !(modes[k] && strcmp(v, modes[k]->name) == 0))
        k++;
    if (k < NMODES)
        env_mode = k;
    else
        fprintf(stderr, "nbcx: NBCX_PROGRESS=%s is not caller, thread, "
                        "split or auto; using auto\n", v);
    env_chose = true;
}

/* The mode the environment asks for, caller where threads were refused. */
static int env_choice(void)
{
    pthread_once(&env_once, read_env);
    int m = env_mode;
    if (modes[m]->thread && !atomic_load(&threads_ok))
        m = NBCX_PROGRESS_CALLER;
    return m;
}

static void decide(void)
{
    int m = env_choice();
    /* A transport not safe for a progress thread, unless the program
     * chose a mode (transport.h, NBCXI_CAP_PROGRESS_THREAD). */
    if (!env_chose && atomic_load(&nbcxi_comm_no_thread))
        m = NBCX_PROGRESS_CALLER;
    atomic_store(&mode, m);
    atomic_store(&decided, true);
}

const struct nbcxi_progress_mode *nbcxi_mode(void)
{
    pthread_once(&mode_once, decide);
    return modes[atomic_load(&mode)];
}

/* The mode a report gives: the one in force, decided now if a
 * communicator exists; before any, the one the environment asks for,
 * undecided (a transport may still make it caller). */
static const struct nbcxi_progress_mode *reported(void)
{
    if (atomic_load(&decided) || atomic_load(&nbcxi_comm_made))
        return nbcxi_mode();
    return modes[env_choice()];
}

int nbcxi_progress_mode_id(void)
{
    return (int)nbcxi_mode()->id;
}

const char *nbcxi_progress_algorithm(int coll)
{
    const struct nbcxi_progress_mode *m = nbcxi_mode();
    return m->algorithm ? m->algorithm(coll) : NULL;
}

void nbcxi_progress_threads_allowed(bool allowed, const char *why)
{
    if (allowed)
        return;
    pthread_once(&mode_once, decide);
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    atomic_store(&threads_ok, false);
    int m = atomic_exchange(&mode, NBCX_PROGRESS_CALLER);
    if (modes[m]->thread && !atomic_flag_test_and_set(&warned))
        fprintf(stderr, "nbcx: warning: %s progress needs %s; using caller "
                        "progress (operations advance only inside nbcx "
                        "test/wait calls)\n", modes[m]->name, why);
}

int nbcx_progress_set(nbcx_progress_mode m)
{
    if (!known((int)m))
        return NBCX_ERR_ARG;
    pthread_once(&mode_once, decide);
    if (modes[m]->thread && !atomic_load(&threads_ok))
        return NBCX_ERR_TRANSPORT;
    pthread_mutex_lock(&nbcxi_engine_lock);
    int err = nbcxi_engine_busy_locked()
                  ? nbcxi_error(NBCX_ERR_REQUEST, "nbcx_progress_set: "
                                "operations are outstanding; the mode "
                                "changes only when none is")
                  : NBCX_SUCCESS;
    if (!err)
        atomic_store(&mode, (int)m);
    pthread_mutex_unlock(&nbcxi_engine_lock);
    if (!err && !modes[m]->thread)
        nbcxi_thread_stop();
    return err;
}

int nbcx_progress_get(nbcx_progress_mode *m)
{
    if (!m)
        return NBCX_ERR_ARG;
    *m = reported()->id;
    return NBCX_SUCCESS;
}

/* Auto mode launches its thread at the first start without waiting for
 * it (place_lazily: the start goes on as in caller mode), so the thread
 * loaded hwloc's topology and bound itself, 8-13 ms of CPU, on the cores
 * of a program that had just begun its first collectives. On 2 shared-
 * memory ranks with 2 cores, the application thread waiting in one lost
 * its core to it for a tick (4 ms here) at a time: 1.3-4.9 ms
 * repetitions of 60 us collectives, in the first 10-80 ms of a process,
 * 8-16 in 300 (docs/results/fastpath/cold/stalls-s25). Placed when a
 * face makes a communicator, the cost is the set-up's, and the first
 * collective finds the thread live. */
void nbcxi_progress_prepare(void)
{
    if (nbcxi_mode()->thread)
        (void)nbcxi_thread_ensure(); /* (failing: the first start says) */
}

void nbcxi_progress_shutdown(void)
{
    nbcxi_thread_stop();
}

int nbcxi_progress_describe(char *buf, size_t len)
{
    const struct nbcxi_progress_mode *m = reported();
    char where[128] = "";
    /* (the thread runs only once the mode is decided) */
    if (m->thread && atomic_load(&decided) &&
        nbcxi_thread_ensure() == NBCX_SUCCESS)
        nbcxi_thread_describe(where, sizeof where);
    pthread_mutex_lock(&nbcxi_engine_lock);
    double bw = nbcxi_pace_bandwidth(); /* sched/pace.c */
    pthread_mutex_unlock(&nbcxi_engine_lock);
    char measured[32] = "none";
    if (bw > 0)
        snprintf(measured, sizeof measured, "%.3gGB/s", bw);
    char decided[96] = "";
    if (m->describe)
        m->describe(decided, sizeof decided);
    int n = snprintf(buf, len, "progress=%s%s%s%s bandwidth=%s", m->name,
                     *where ? " " : "", where, decided, measured);
    return n < 0 ? 0 : n;
}
