/*
 * test_placement.c - where the progress thread goes (placement.c).
 *
 * Each binding runs in a fresh thread, as the progress thread would, so
 * that the test's own thread stays as it was; the thread reports its
 * description and the binding it ended up with (read back with hwloc).
 * NBCX_PROGRESS_CPUS is set before each call: placement.c must read it
 * every time. Cases that need an idle core are skipped on one core.
 */
#include <pthread.h>
#include <stdlib.h>

#include <hwloc.h>

#include "harness.h"
#include "progress/progress.h"

static hwloc_topology_t topo;

static hwloc_topology_t topology(void)
{
    if (!topo && (hwloc_topology_init(&topo) != 0 ||
                  hwloc_topology_load(topo) != 0))
        abort();
    return topo;
}

static int ncores(void)
{
    int n = hwloc_get_nbobjs_by_type(topology(), HWLOC_OBJ_CORE);
    return n > 0 ? n : hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
}

struct bound {
    char desc[256];
    hwloc_bitmap_t set;  /* the thread's binding after the call */
};

static void *bind_thread(void *arg)
{
    struct bound *b = arg;
    nbcxi_placement_bind_self(b->desc, sizeof b->desc);
    if (hwloc_get_cpubind(topology(), b->set, HWLOC_CPUBIND_THREAD) != 0)
        hwloc_bitmap_zero(b->set);
    return NULL;
}

/* Runs nbcxi_placement_bind_self in a new thread with the variable set
 * to cpus (NULL: unset). */
static void run_bind(const char *cpus, struct bound *b)
{
    if (cpus)
        setenv("NBCX_PROGRESS_CPUS", cpus, 1);
    else
        unsetenv("NBCX_PROGRESS_CPUS");
    b->desc[0] = '\0';
    b->set = hwloc_bitmap_alloc();
    pthread_t t;
    if (pthread_create(&t, NULL, bind_thread, b) == 0)
        pthread_join(t, NULL);
}

/* The binding of this (the test's) thread: what an unbound new thread
 * inherits. */
static hwloc_bitmap_t my_binding(void)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topology(), s, HWLOC_CPUBIND_THREAD) != 0)
        hwloc_bitmap_zero(s);
    return s;
}

static bool same_list(hwloc_const_bitmap_t set, const char *list)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    bool same = hwloc_bitmap_list_sscanf(s, list) == 0 &&
                hwloc_bitmap_isequal(s, set);
    hwloc_bitmap_free(s);
    return same;
}

static void test_self(void)
{
    char buf[256];
    CHECK_INT(nbcxi_placement_self(buf, sizeof buf), 0);
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    CHECK(hwloc_bitmap_list_sscanf(s, buf) == 0 && !hwloc_bitmap_iszero(s),
          "self binding \"%s\"", buf);
    hwloc_bitmap_free(s);
}

static void test_explicit(void)
{
    struct bound b;
    run_bind("0", &b);
    CHECK(strcmp(b.desc, "cpus=0 (NBCX_PROGRESS_CPUS)") == 0, "%s", b.desc);
    CHECK(same_list(b.set, "0"), "%s", b.desc);
    hwloc_bitmap_free(b.set);
}

static void test_invalid(void)
{
    hwloc_bitmap_t before = my_binding();
    struct bound b;
    run_bind("999", &b);
    CHECK(strcmp(b.desc, "cpus=none (NBCX_PROGRESS_CPUS=999 names no usable "
                 "core)") == 0, "%s", b.desc);
    CHECK(hwloc_bitmap_isequal(b.set, before), "left unbound: %s", b.desc);
    hwloc_bitmap_free(b.set);
    run_bind("garbage", &b);
    CHECK(strncmp(b.desc, "cpus=none (", 11) == 0, "%s", b.desc);
    CHECK(hwloc_bitmap_isequal(b.set, before), "left unbound: %s", b.desc);
    hwloc_bitmap_free(b.set);
    hwloc_bitmap_free(before);
}

/* Every core busy: the thread stays with the application. */
static void test_auto_shared(void)
{
    if (ncores() < 2) {
        printf("(one core: skipped)\n");
        return;
    }
    const char *node[] = { "0", "1" };
    nbcxi_placement_node(node, 2, 0);
    hwloc_bitmap_t before = my_binding();
    struct bound b;
    run_bind("auto", &b);
    CHECK(strstr(b.desc, "(shared with the application") != NULL, "%s",
          b.desc);
    CHECK(hwloc_bitmap_isequal(b.set, before), "%s", b.desc);
    int app, prog;
    nbcxi_placement_cores(&app, &prog);
    CHECK_INT(app, 2);
    CHECK_INT(prog, 0);
    CHECK(!nbcxi_placement_spare_core(), "no spare core: %s", b.desc);
    hwloc_bitmap_free(b.set);
    hwloc_bitmap_free(before);
}

/* Processes not bound (each may run anywhere): as many processes as
 * cores leave none spare; fewer leave some. */
static void test_spare_unbound(void)
{
    int n = ncores();
    if (n < 2) {
        printf("(one core: skipped)\n");
        return;
    }
    hwloc_const_bitmap_t all = hwloc_topology_get_allowed_cpuset(topology());
    char list[256];
    hwloc_bitmap_list_snprintf(list, sizeof list, all);
    const char **node = calloc((size_t)n, sizeof *node);
    CHECK(node != NULL, "calloc");
    for (int i = 0; i < n; i++)
        node[i] = list;
    for (int procs = 1; procs <= n; procs += n - 1) {
        nbcxi_placement_node(node, procs, 0);
        struct bound b;
        run_bind("auto", &b);
        CHECK(nbcxi_placement_spare_core() == (procs < n),
              "%d processes on %d cores (%s): spare %d", procs, n, b.desc,
              (int)nbcxi_placement_spare_core());
        hwloc_bitmap_free(b.set);
    }
    free(node);
}

/* The cpuset of the k-th core that does not hold PU 0. */
static hwloc_bitmap_t idle_core(int k)
{
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(topology(),
        HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    hwloc_obj_t c = NULL;
    while ((c = hwloc_get_next_obj_by_type(topo, type, c)))
        if (!hwloc_bitmap_isset(c->cpuset, 0) && k-- == 0)
            return hwloc_bitmap_dup(c->cpuset);
    return hwloc_bitmap_alloc();
}

/* Only core 0 busy: the thread takes an idle core, the node's processes
 * in turn; unset means auto. */
static void test_auto_idle(void)
{
    int n = ncores();
    if (n < 2) {
        printf("(one core: skipped)\n");
        return;
    }
    const char *node[] = { "0", "0" };
    for (int me = 0; me < 2; me++) {
        nbcxi_placement_node(node, me + 1, me);
        int app, prog;
        nbcxi_placement_cores(&app, &prog);
        CHECK_INT(app, 1);
        CHECK_INT(prog, 0); /* not bound yet */
        struct bound b;
        run_bind(me ? NULL : "auto", &b);
        hwloc_bitmap_t want = idle_core(me % (n - 1));
        char expect[300], list[256];
        hwloc_bitmap_list_snprintf(list, sizeof list, want);
        snprintf(expect, sizeof expect, "cpus=%s (idle core)", list);
        CHECK(strcmp(b.desc, expect) == 0, "me %d: %s, expected %s", me,
              b.desc, expect);
        CHECK(hwloc_bitmap_isequal(b.set, want), "me %d: %s", me, b.desc);
        nbcxi_placement_cores(&app, &prog);
        CHECK_INT(app, 1);
        CHECK_INT(prog, me + 1 < n - 1 ? me + 1 : n - 1);
        CHECK(nbcxi_placement_spare_core(), "an idle core: %s", b.desc);
        hwloc_bitmap_free(want);
        hwloc_bitmap_free(b.set);
    }
}

static const struct th_test tests[] = {
    { "self", test_self },
    { "explicit", test_explicit },
    { "invalid", test_invalid },
    { "auto_shared", test_auto_shared },
    { "auto_idle", test_auto_idle },
    { "spare_unbound", test_spare_unbound },
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests, TH_COUNT(tests));
}
