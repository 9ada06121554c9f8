/* fortran_rt.c - libnbcx-pmpi's Fortran request, completion and
 * environment functions, and the helpers of the generated entry points
 * (fortran.h says which bindings they serve; fortran.c gives them their
 * Fortran names).
 *
 * Sentinels. Fortran's MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE are addresses of the library's own variables:
 *   - Open MPI: common blocks mpi_fortran_in_place (and _bottom,
 *     _status_ignore, _statuses_ignore), named in every mangling;
 *     mpi_f08 uses the same ones (MPI_F_STATUS(ES)_IGNORE too);
 *   - MPICH: common blocks /MPIPRIV1/ and /MPIPRIV2/ for mpif.h and use
 *     mpi, whose addresses libmpifort's mpirinitf_ records in
 *     MPIR_F_MPI_IN_PLACE, MPIR_F_MPI_BOTTOM, MPI_F_STATUS(ES)_IGNORE
 *     (the shim calls it, as MPICH's own mpi_init_ does); mpi_f08's are
 *     MPIR_F08_MPI_IN_PLACE, MPIR_F08_MPI_BOTTOM and MPI_F08_STATUS(ES)_
 *     IGNORE.
 * Every candidate found (dlsym) is compared; the lookups are done once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortran.h"
#include "nbcx.h"

enum { S_IN_PLACE, S_BOTTOM, S_STATUS, S_STATUSES, S_KINDS };
#define MAXCAND 8
static void *g_sent[S_KINDS][MAXCAND];
static int g_nsent[S_KINDS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void add(int kind, void *p)
{
    if (!p)
        return;
    for (int i = 0; i < g_nsent[kind]; i++)
        if (g_sent[kind][i] == p)
            return;
    if (g_nsent[kind] < MAXCAND)
        g_sent[kind][g_nsent[kind]++] = p;
}

/* The address of a variable (Open MPI's common blocks), in every
 * mangling. */
static void add_symbol(int kind, const char *base)
{
    char name[64];
    static const char *const fmt[] = {"%s", "%s_", "%s__"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, fmt[i], base);
        add(kind, dlsym(RTLD_DEFAULT, name));
    }
    size_t n = strlen(base);
    if (n < sizeof name) {
        for (size_t i = 0; i <= n; i++)
            name[i] = (char)(base[i] >= 'a' && base[i] <= 'z'
                                 ? base[i] - 'a' + 'A'
                                 : base[i]);
        add(kind, dlsym(RTLD_DEFAULT, name));
    }
}

/* The value of a pointer variable (MPICH's MPIR_F_MPI_IN_PLACE...). */
static void add_pointer(int kind, const char *name)
{
    void **p = dlsym(RTLD_DEFAULT, name);
    if (p)
        add(kind, *p);
}

static void setup(void)
{
    /* MPICH: the addresses of mpif.h's common blocks, recorded by
     * mpirinitf_ (normally called by MPICH's mpi_init_, which the shim
     * replaces). */
    int *need = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit");
    void (*initf)(void) =
        (void (*)(void))(size_t)dlsym(RTLD_DEFAULT, "mpirinitf_");
    if (need && *need && initf) {
        initf();
        *need = 0;
    }
    add_symbol(S_IN_PLACE, "mpi_fortran_in_place");
    add_symbol(S_BOTTOM, "mpi_fortran_bottom");
    add_symbol(S_STATUS, "mpi_fortran_status_ignore");
    add_symbol(S_STATUSES, "mpi_fortran_statuses_ignore");
    add_pointer(S_IN_PLACE, "MPIR_F_MPI_IN_PLACE");
    add_pointer(S_BOTTOM, "MPIR_F_MPI_BOTTOM");
    add(S_IN_PLACE, dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE"));
    add(S_BOTTOM, dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_BOTTOM"));
    add_pointer(S_STATUS, "MPI_F_STATUS_IGNORE");
    add_pointer(S_STATUSES, "MPI_F_STATUSES_IGNORE");
    add_pointer(S_STATUS, "MPI_F08_STATUS_IGNORE");
    add_pointer(S_STATUSES, "MPI_F08_STATUSES_IGNORE");
}

static int is(int kind, const void *p)
{
    pthread_once(&g_once, setup);
    for (int i = 0; i < g_nsent[kind]; i++)
        if (g_sent[kind][i] == p)
            return 1;
    return 0;
}

void *nbcxf_buf(void *p)
{
    if (is(S_IN_PLACE, p))
        return MPI_IN_PLACE;
    if (is(S_BOTTOM, p))
        return MPI_BOTTOM;
    return p;
}

int nbcxf_comm_size(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter))
        return 0;
    if ((inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)))
        return 0;
    return n;
}

void nbcxf_degrees(MPI_Comm comm, int *in, int *out)
{
    int topo = MPI_UNDEFINED;
    *in = *out = 0;
    if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topo))
        return;
    if (topo == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        *in = *out = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        int rank = 0, n = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        *in = *out = n;
    } else if (topo == MPI_DIST_GRAPH) {
        int w = 0;
        PMPI_Dist_graph_neighbors_count(comm, in, out, &w);
    }
}

MPI_Datatype *nbcxf_types(int n, const MPI_Fint *f, MPI_Datatype *small)
{
#if defined(MPICH_VERSION)
    /* The handles are the same integers: the array as it is, as MPICH's
     * own binding passes it. */
    _Static_assert(sizeof(MPI_Datatype) == sizeof(MPI_Fint), "MPICH handles");
    (void)n, (void)small;
    return (MPI_Datatype *)f;
#endif
    MPI_Datatype *t = small;
    if (n > 16 && !(t = malloc(sizeof *t * (size_t)n)))
        return NULL;
    for (int i = 0; i < n; i++)
        t[i] = MPI_Type_f2c(f[i]);
    return t;
}

void nbcxf_types_free(MPI_Datatype *t, MPI_Datatype *small)
{
#if !defined(MPICH_VERSION)
    if (t != small)
        free(t);
#else
    (void)t, (void)small;
#endif
}

/* ---- statuses and request arrays ---- */

#define SS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0,
               "a Fortran status is MPI_Status in MPI_Fint");

static MPI_Status *c_status(MPI_Fint *f, MPI_Status *c)
{
    return !f || is(S_STATUS, f) ? MPI_STATUS_IGNORE : c;
}

static void f_status(const MPI_Status *c, MPI_Fint *f)
{
    if (c != MPI_STATUS_IGNORE)
        MPI_Status_c2f(c, f);
}

struct arr {
    MPI_Request *r;
    MPI_Status *s; /* MPI_STATUSES_IGNORE or an array */
    MPI_Request small_r[16];
    MPI_Status small_s[16];
    int n;
};

/* Fortran requests (and room for statuses, unless ignored) as C ones.
 * 0: no memory. */
static int arr_open(struct arr *a, int n, const MPI_Fint *req,
                    MPI_Fint *statuses)
{
    a->n = n; /* a negative count goes to MPI as it is (its error) */
    a->r = a->small_r;
    a->s = !statuses || is(S_STATUSES, statuses) ? MPI_STATUSES_IGNORE
                                                 : a->small_s;
    if (a->n > 16) {
        a->r = malloc(sizeof *a->r * (size_t)a->n);
        if (a->s != MPI_STATUSES_IGNORE)
            a->s = malloc(sizeof *a->s * (size_t)a->n);
        if (!a->r || !a->s) {
            free(a->r);
            if (a->s != MPI_STATUSES_IGNORE)
                free(a->s);
            return 0;
        }
    }
    for (int i = 0; i < a->n; i++)
        a->r[i] = MPI_Request_f2c(req[i]);
    return 1;
}

/* Requests back, and the first ns statuses into Fortran's. */
static void arr_close(struct arr *a, MPI_Fint *req, MPI_Fint *statuses,
                      int ns)
{
    for (int i = 0; i < a->n; i++)
        req[i] = MPI_Request_c2f(a->r[i]);
    if (a->s != MPI_STATUSES_IGNORE)
        for (int k = 0; k < ns; k++)
            MPI_Status_c2f(&a->s[k], statuses + (size_t)k * SS);
    if (a->r != a->small_r)
        free(a->r);
    if (a->s != a->small_s && a->s != MPI_STATUSES_IGNORE)
        free(a->s);
}

/* ---- environment ---- */

static int verbose(void)
{
    const char *v = nbcx_setting_value("NBCX_PMPI_VERBOSE");
    const char *e = nbcx_setting_value("NBCX_PMPI");
    int off = e && (!strcmp(e, "off") || !strcmp(e, "0") ||
                    !strcmp(e, "no") || !strcmp(e, "false"));
    return v && *v && strcmp(v, "0") != 0 && !off;
}

/* With NBCX_PMPI_VERBOSE, rank 0 says which Fortran bindings the shim
 * serves in this library, and which it cannot. */
static void report_bindings(void)
{
    int rank = 0;
    if (!verbose() || PMPI_Comm_rank(MPI_COMM_WORLD, &rank) || rank)
        return;
#if defined(OPEN_MPI)
    fprintf(stderr, "nbcx-pmpi: Fortran (Open MPI): mpif.h, use mpi and "
                    "use mpi_f08 served (nonblocking and MPIX_ persistent "
                    "collectives, request functions)\n");
    if (dlsym(RTLD_DEFAULT, "mpi_ibcast_f08ts_") ||
        dlsym(RTLD_DEFAULT, "mpi_ibcast_f08ts"))
        fprintf(stderr, "nbcx-pmpi: Fortran (Open MPI): this library's "
                        "use mpi_f08 passes array descriptors (f08ts): "
                        "those calls are NOT served (native)\n");
#elif defined(MPICH_VERSION)
    fprintf(stderr, "nbcx-pmpi: Fortran (MPICH): mpif.h and use mpi "
                    "served; use mpi_f08: init, request functions, "
                    "ibarrier and barrier_init served, its calls with "
                    "buffers (mpi_*_f08ts_) through MPICH's C MPI_* "
                    "calls\n");
#else
    fprintf(stderr, "nbcx-pmpi: Fortran: mpif.h and use mpi served (this "
                    "MPI library is not one the shim knows: use mpi_f08 "
                    "NOT served)\n");
#endif
}

void nbcxf_init(MPI_Fint *ierror)
{
    pthread_once(&g_once, setup);
    int rc = MPI_Init(NULL, NULL);
    if (rc == MPI_SUCCESS)
        report_bindings();
    nbcxf_ierr(ierror, rc);
}

void nbcxf_init_thread(MPI_Fint *required, MPI_Fint *provided,
                       MPI_Fint *ierror)
{
    pthread_once(&g_once, setup);
    int p = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &p);
    *provided = (MPI_Fint)p;
    if (rc == MPI_SUCCESS)
        report_bindings();
    nbcxf_ierr(ierror, rc);
}

void nbcxf_finalize(MPI_Fint *ierror)
{
    nbcxf_ierr(ierror, MPI_Finalize());
}

void nbcxf_query_thread(MPI_Fint *provided, MPI_Fint *ierror)
{
    int p = MPI_THREAD_SINGLE;
    int rc = MPI_Query_thread(&p);
    *provided = (MPI_Fint)p;
    nbcxf_ierr(ierror, rc);
}

/* ---- completion ---- */

void nbcxf_wait(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    MPI_Status s, *sp = c_status(status, &s);
    int rc = MPI_Wait(&r, sp);
    *request = MPI_Request_c2f(r);
    f_status(sp, status);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_test(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    MPI_Status s, *sp = c_status(status, &s);
    int f = 0, rc = MPI_Test(&r, &f, sp);
    *request = MPI_Request_c2f(r);
    *flag = f ? 1 : 0;
    if (f)
        f_status(sp, status);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_request_get_status(MPI_Fint *request, MPI_Fint *flag,
                              MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status s, *sp = c_status(status, &s);
    int f = 0, rc = MPI_Request_get_status(MPI_Request_f2c(*request), &f, sp);
    *flag = f ? 1 : 0;
    if (f)
        f_status(sp, status);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_waitall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses,
                   MPI_Fint *ierror)
{
    struct arr a;
    if (!arr_open(&a, *count, requests, statuses)) {
        nbcxf_ierr(ierror, MPI_ERR_NO_MEM);
        return;
    }
    int rc = MPI_Waitall(a.n, a.r, a.s);
    arr_close(&a, requests, statuses, a.n);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_testall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag,
                   MPI_Fint *statuses, MPI_Fint *ierror)
{
    struct arr a;
    if (!arr_open(&a, *count, requests, statuses)) {
        nbcxf_ierr(ierror, MPI_ERR_NO_MEM);
        return;
    }
    int f = 0, rc = MPI_Testall(a.n, a.r, &f, a.s);
    arr_close(&a, requests, statuses, f ? a.n : 0);
    *flag = f ? 1 : 0;
    nbcxf_ierr(ierror, rc);
}

static void any(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    struct arr a;
    if (!arr_open(&a, *count, requests, NULL)) {
        nbcxf_ierr(ierror, MPI_ERR_NO_MEM);
        return;
    }
    MPI_Status s, *sp = c_status(status, &s);
    int i = MPI_UNDEFINED, f = 1;
    int rc = flag ? MPI_Testany(a.n, a.r, &i, &f, sp)
                  : MPI_Waitany(a.n, a.r, &i, sp);
    arr_close(&a, requests, NULL, 0);
    *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
    if (flag)
        *flag = f ? 1 : 0;
    if (f)
        f_status(sp, status);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_waitany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                   MPI_Fint *status, MPI_Fint *ierror)
{
    any(count, requests, index, NULL, status, ierror);
}

void nbcxf_testany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                   MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    any(count, requests, index, flag, status, ierror);
}

static void some(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                 MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror,
                 int blocking)
{
    struct arr a;
    if (!arr_open(&a, *incount, requests, statuses)) {
        nbcxf_ierr(ierror, MPI_ERR_NO_MEM);
        return;
    }
    int out = MPI_UNDEFINED;
    int *idx = (int *)indices; /* MPI_Fint is int */
    int rc = blocking ? MPI_Waitsome(a.n, a.r, &out, idx, a.s)
                      : MPI_Testsome(a.n, a.r, &out, idx, a.s);
    arr_close(&a, requests, statuses, out == MPI_UNDEFINED ? 0 : out);
    for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
        indices[k] += 1;
    *outcount = (MPI_Fint)out;
    nbcxf_ierr(ierror, rc);
}

void nbcxf_waitsome(MPI_Fint *incount, MPI_Fint *requests,
                    MPI_Fint *outcount, MPI_Fint *indices,
                    MPI_Fint *statuses, MPI_Fint *ierror)
{
    some(incount, requests, outcount, indices, statuses, ierror, 1);
}

void nbcxf_testsome(MPI_Fint *incount, MPI_Fint *requests,
                    MPI_Fint *outcount, MPI_Fint *indices,
                    MPI_Fint *statuses, MPI_Fint *ierror)
{
    some(incount, requests, outcount, indices, statuses, ierror, 0);
}

/* ---- requests ---- */

void nbcxf_start(MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    int rc = MPI_Start(&r);
    *request = MPI_Request_c2f(r);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_startall(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierror)
{
    struct arr a;
    if (!arr_open(&a, *count, requests, NULL)) {
        nbcxf_ierr(ierror, MPI_ERR_NO_MEM);
        return;
    }
    int rc = MPI_Startall(a.n, a.r);
    arr_close(&a, requests, NULL, 0);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_request_free(MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    *request = MPI_Request_c2f(r);
    nbcxf_ierr(ierror, rc);
}

void nbcxf_cancel(MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    nbcxf_ierr(ierror, MPI_Cancel(&r));
}
