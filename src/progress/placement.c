/*
 * placement.c - where the progress thread runs (hwloc).
 *
 * A progress thread that shares a core with an application thread takes
 * time from it exactly when the application computes; on a core no
 * process of the node uses, it costs the application nothing. "auto"
 * therefore looks for idle cores: the cores this process may use minus
 * those the node's application processes are bound to (all of them when
 * a face told us, see nbcxi_placement_node, else only our own binding).
 * Whole cores, not hardware threads: the sibling of a busy core shares
 * its pipeline and is not idle. When there are fewer idle cores than
 * processes, the processes take them in turn (index me % idle). Without
 * an idle core the thread stays on the application's cores, where the
 * OS schedules it among the application's threads.
 *
 * Nothing here is fatal: when hwloc fails or a list names no usable
 * core, the thread stays unbound and the description says why.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_ISSET */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "progress.h"

/* The topology is loaded once and only read afterwards, which hwloc
 * allows from any number of threads at once. */
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topo;     /* NULL when loading failed */
static int topo_errno;
/* What counts as a core: HWLOC_OBJ_CORE, or the PU where hwloc finds no
 * cores (some virtual machines and architectures). */
static hwloc_obj_type_t core_type = HWLOC_OBJ_CORE;

/* Guards everything below. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_bitmap_t own_set;    /* our process's binding, first seen */
static hwloc_bitmap_t node_set;   /* union of the node's bindings; NULL:
                                   * not told */
static int node_n = 1, node_me;   /* processes on the node, our index */
static int progress_cores;        /* recorded by the last bind */
static atomic_bool spare_core;    /* recorded by the last bind */

static void topo_load(void)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) {
        topo_errno = errno;
        return;
    }
    /* Only what placement reads: cores and their PUs. No I/O devices
     * (PCI), no caches, and no binding changes while hwloc discovers (its
     * x86 backend binds the calling thread to each CPU in turn): 1.5
     * instead of 2.0 ms of load here. (The plugins that hwloc_topology_init
     * loads, 4-5 ms, no call can keep out: HWLOC_PLUGINS_BLACKLIST is
     * the user's to set.) */
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING);
    if (hwloc_topology_load(t) != 0) {
        topo_errno = errno;
        hwloc_topology_destroy(t);
        return;
    }
    if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) <= 0)
        core_type = HWLOC_OBJ_PU;
    topo = t;
}

static hwloc_topology_t topology(void)
{
    pthread_once(&topo_once, topo_load);
    return topo;
}

/* Our process's binding (topology loaded, lock held). Taken the first
 * time and kept: once the progress thread has bound itself, the binding
 * of the process (the union of its threads') includes the progress
 * thread's core, which is not the application's. */
static hwloc_const_bitmap_t own_locked(void)
{
    if (!own_set) {
        hwloc_bitmap_t s = hwloc_bitmap_alloc();
        if (!s)
            return hwloc_topology_get_allowed_cpuset(topo);
        if (hwloc_get_cpubind(topo, s, HWLOC_CPUBIND_PROCESS) != 0 ||
            hwloc_bitmap_iszero(s))
            hwloc_bitmap_copy(s, hwloc_topology_get_allowed_cpuset(topo));
        own_set = s;
    }
    return own_set;
}

/* The application's cores: the node's bindings, or just ours. */
static hwloc_const_bitmap_t busy_locked(void)
{
    return node_set ? node_set : own_locked();
}

/* How many cores set touches, leaving out those that touch skip (may be
 * NULL). With a pick >= 0, also copies the cpuset of the pick-th such
 * core, limited to the allowed PUs, into out. */
static int count_cores(hwloc_const_bitmap_t set, hwloc_const_bitmap_t skip,
                       int pick, hwloc_bitmap_t out)
{
    int n = 0;
    hwloc_obj_t c = NULL;
    while ((c = hwloc_get_next_obj_by_type(topo, core_type, c))) {
        if (!hwloc_bitmap_intersects(c->cpuset, set) ||
            (skip && hwloc_bitmap_intersects(c->cpuset, skip)))
            continue;
        if (n++ == pick)
            hwloc_bitmap_and(out, c->cpuset,
                             hwloc_topology_get_allowed_cpuset(topo));
    }
    return n;
}

/* Our binding as a list ("0-1,4"), from the calling thread's affinity,
 * without hwloc: loading the topology takes 4-7 ms here, which every
 * process paid in its first collective on each new MPI communicator of
 * the shim (share_bindings, face/mpi.c), also where no progress thread
 * ever runs. The topology is loaded when a thread is placed. */
int nbcxi_placement_self(char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    size_t used = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        int n = last > c ? snprintf(buf + used, len - used, "%s%d-%d",
                                    used ? "," : "", c, last)
                         : snprintf(buf + used, len - used, "%s%d",
                                    used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) {
            if (len)
                buf[0] = '\0'; /* too long: say nothing rather than half */
            return -1;
        }
        used += (size_t)n;
        c = last;
    }
    return 0;
}

void nbcxi_placement_node(const char *const *lists, int n, int me)
{
    /* Only the union matters: a core is busy if any process is bound to
     * it. Lists that do not parse are left out; none at all (or n <= 0)
     * means "not told". */
    hwloc_bitmap_t u = n > 0 ? hwloc_bitmap_alloc() : NULL;
    hwloc_bitmap_t one = n > 0 ? hwloc_bitmap_alloc() : NULL;
    if (u && one)
        for (int i = 0; i < n; i++)
            if (lists[i] && hwloc_bitmap_list_sscanf(one, lists[i]) == 0)
                hwloc_bitmap_or(u, u, one);
    hwloc_bitmap_free(one);
    if (u && hwloc_bitmap_iszero(u)) {
        hwloc_bitmap_free(u);
        u = NULL;
    }
    pthread_mutex_lock(&state_lock);
    hwloc_bitmap_free(node_set);
    node_set = u;
    node_n = u ? n : 1;
    node_me = u && me >= 0 ? me : 0;
    progress_cores = 0; /* until the next bind */
    pthread_mutex_unlock(&state_lock);
}

void nbcxi_placement_bind_self(char *desc, size_t len)
{
    /* Read at every call: the tests (and a restarted thread) see the
     * current value. */
    const char *env = nbcxi_getenv("NBCX_PROGRESS_CPUS");
    bool automatic = !env || strcmp(env, "auto") == 0;
    hwloc_bitmap_t target = hwloc_bitmap_alloc();
    char list[256];

    if (!target) {
        snprintf(desc, len, "cpus=none (out of memory)");
        return;
    }
    if (!topology()) {
        snprintf(desc, len, "cpus=none (hwloc could not load the topology: %s)",
                 strerror(topo_errno));
        hwloc_bitmap_free(target);
        return;
    }
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    const char *why;
    bool bind = true;
    int pcores = 0;

    pthread_mutex_lock(&state_lock);
    hwloc_const_bitmap_t busy = busy_locked();
    int nidle = automatic ? count_cores(allowed, busy, -1, NULL) : 0;
    /* Unbound processes make every core busy: then the cores beyond one
     * per process of the node are spare all the same. */
    bool more_cores = count_cores(busy, NULL, -1, NULL) > node_n;
    if (!automatic) {
        /* Exactly the PUs asked for, as far as we may use them. */
        if (hwloc_bitmap_list_sscanf(target, env) != 0)
            hwloc_bitmap_zero(target);
        hwloc_bitmap_and(target, target, allowed);
        why = "NBCX_PROGRESS_CPUS";
        bind = !hwloc_bitmap_iszero(target);
        pcores = bind ? count_cores(target, busy, -1, NULL) : 0;
    } else if (nidle > 0) {
        count_cores(allowed, busy, node_me % nidle, target);
        why = "idle core";
        /* The node's threads spread over the idle cores. */
        pcores = node_n < nidle ? node_n : nidle;
    } else {
        hwloc_bitmap_copy(target, own_locked());
        why = "shared with the application";
        /* Bound to every core anyway: binding would change nothing. */
        if (hwloc_bitmap_isincluded(allowed, target)) {
            why = "shared with the application, not bound";
            bind = false;
        }
    }
    pthread_mutex_unlock(&state_lock);

    if (!automatic && !bind) {
        snprintf(desc, len, "cpus=none (NBCX_PROGRESS_CPUS=%s names no "
                 "usable core)", env);
        pcores = 0;
    } else {
        hwloc_bitmap_list_snprintf(list, sizeof list, target);
        if (bind && hwloc_set_cpubind(topo, target, HWLOC_CPUBIND_THREAD) != 0) {
            snprintf(desc, len, "cpus=none (binding to %s failed: %s)", list,
                     strerror(errno));
            pcores = 0;
        } else {
            snprintf(desc, len, "cpus=%s (%s)", list, why);
        }
    }
    hwloc_bitmap_free(target);

    pthread_mutex_lock(&state_lock);
    progress_cores = pcores;
    pthread_mutex_unlock(&state_lock);
    atomic_store_explicit(&spare_core, pcores > 0 || more_cores,
                          memory_order_relaxed);
}

bool nbcxi_placement_spare_core(void)
{
    return atomic_load_explicit(&spare_core, memory_order_relaxed);
}

void nbcxi_placement_cores(int *app_cores, int *prog_cores)
{
    *app_cores = 1;
    *prog_cores = 0;
    if (!topology())
        return;
    pthread_mutex_lock(&state_lock);
    int n = count_cores(busy_locked(), NULL, -1, NULL);
    *app_cores = n > 0 ? n : 1;
    *prog_cores = progress_cores;
    pthread_mutex_unlock(&state_lock);
}
