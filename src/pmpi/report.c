/* report.c - NBCX_PMPI_REPORT: the shim's table per call site, printed at
 * MPI_Finalize (docs/shim.md, "The report per call site").
 *
 * A row is a call site (the return address of the MPI_I<op> or
 * MPI_<op>_init wrapper, or of the Fortran entry point), an operation,
 * and how its calls went (served by nbcx, or native and why). The shim
 * counts calls and bytes into it and, for an operation nbcx served, the
 * time from the call to its completion as the application saw it (the
 * completion call that found it done) and the time the application
 * spent in completion calls (MPI_Wait*, MPI_Test*) on it while it was
 * not done: the exposed time. Hidden share = 1 - exposed / (start to
 * completion).
 *
 * At MPI_Finalize each rank names its sites with dladdr (object, and
 * the address addr2line wants), rank 0 gathers every rank's rows with
 * PMPI_Gather/PMPI_Gatherv, merges the rows of the same site, asks
 * addr2line (binutils, run once per object, when it is on the PATH) for
 * each site's function and file:line, and prints the table.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

int shim_report;
_Thread_local void *shim_fsite;

struct shim_site {
    void *ra;
    int op, reason;
    long long calls, bytes;
    long long total, exposed, timed; /* ns, ns, operations timed */
    struct shim_site *next;
};

enum { SITE_BUCKETS = 256 };
static struct shim_site *g_sites[SITE_BUCKETS];
static pthread_mutex_t g_site_lock = PTHREAD_MUTEX_INITIALIZER;

long long shim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct shim_site *shim_site_get(void *ra, int op, int reason)
{
    unsigned b = (unsigned)((((uintptr_t)ra >> 2) ^ (unsigned)op * 31u ^
                             (unsigned)reason * 7u) %
                            SITE_BUCKETS);
    pthread_mutex_lock(&g_site_lock);
    struct shim_site *s = g_sites[b];
    while (s && !(s->ra == ra && s->op == op && s->reason == reason))
        s = s->next;
    if (!s && (s = calloc(1, sizeof *s))) {
        s->ra = ra;
        s->op = op;
        s->reason = reason;
        s->next = g_sites[b];
        g_sites[b] = s;
    }
    pthread_mutex_unlock(&g_site_lock);
    return s;
}

void shim_site_count(struct shim_site *s, long long calls, long long bytes)
{
    if (!s)
        return;
    pthread_mutex_lock(&g_site_lock);
    s->calls += calls;
    s->bytes += bytes;
    pthread_mutex_unlock(&g_site_lock);
}

void shim_site_time(struct shim_site *s, long long total, long long exposed)
{
    if (!s)
        return;
    pthread_mutex_lock(&g_site_lock);
    s->total += total;
    s->exposed += exposed < total ? exposed : total;
    s->timed++;
    pthread_mutex_unlock(&g_site_lock);
}

long long shim_bytes(long long n, nbcx_datatype t)
{
    size_t size = 0;
    if (n <= 0 || t == NBCX_DATATYPE_NULL ||
        nbcx_datatype_size(t, &size) != NBCX_SUCCESS)
        return 0;
    return (long long)n * (long long)size;
}

long long shim_bytes_v(int n, const int *counts, nbcx_datatype t)
{
    long long sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += shim_bytes(counts[i], t);
    return sum;
}

long long shim_bytes_w(int n, const int *counts, const nbcx_datatype *t)
{
    long long sum = 0;
    for (int i = 0; counts && t && i < n; i++)
        sum += shim_bytes(counts[i], t[i]);
    return sum;
}

#if SHIM_LARGE_COUNT
long long shim_bytes_vc(int n, const MPI_Count *counts, nbcx_datatype t)
{
    long long sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += shim_bytes(counts[i], t);
    return sum;
}

long long shim_bytes_wc(int n, const MPI_Count *counts,
                        const nbcx_datatype *t)
{
    long long sum = 0;
    for (int i = 0; counts && t && i < n; i++)
        sum += shim_bytes(counts[i], t[i]);
    return sum;
}
#endif

/* ---- naming a site ---- */

/* The ELF type of an object file (2: ET_EXEC, whose addresses addr2line
 * takes as they are; 3: ET_DYN, which it takes relative to the load
 * address); 0 when unreadable. */
static int elf_type(const char *path)
{
    unsigned char h[18];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    if (n != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) != 0)
        return 0;
    uint16_t t;
    memcpy(&t, h + 16, sizeof t); /* in the host's byte order */
    return t;
}

/* One row as text: object, addr2line address, dladdr's symbol and its
 * offset, operation, reason, calls, bytes, total, exposed, timed. */
static int site_line(const struct shim_site *s, char *out, size_t cap)
{
    Dl_info di;
    memset(&di, 0, sizeof di);
    char obj[4096] = "?";
    uintptr_t addr = (uintptr_t)s->ra, base = 0;
    const char *sym = "-";
    uintptr_t symoff = 0;
    if (s->ra && dladdr(s->ra, &di) && di.dli_fname) {
        base = (uintptr_t)di.dli_fbase;
        /* The main program's name is argv[0]: its real path instead. */
        ssize_t n = -1;
        if (!*di.dli_fname || !strchr(di.dli_fname, '/') ||
            elf_type(di.dli_fname) == 0)
            n = readlink("/proc/self/exe", obj, sizeof obj - 1);
        if (n > 0)
            obj[n] = 0;
        else
            snprintf(obj, sizeof obj, "%s", di.dli_fname);
        if (di.dli_sname) {
            sym = di.dli_sname;
            symoff = addr - (uintptr_t)di.dli_saddr;
        }
        /* The call instruction ends at the return address. */
        addr = (elf_type(obj) == 2 ? addr : addr - base) - 1;
    }
    return snprintf(out, cap, "%s\t%#llx\t%s\t%#llx\t%d\t%d\t%lld\t%lld\t%lld"
                              "\t%lld\t%lld\n",
                    obj, (unsigned long long)addr, sym,
                    (unsigned long long)symoff, s->op, s->reason, s->calls,
                    s->bytes, s->total, s->exposed, s->timed);
}

/* This rank's rows as text (malloc'd, NUL-terminated). */
static char *local_rows(int *len)
{
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    buf[0] = 0;
    pthread_mutex_lock(&g_site_lock);
    for (int b = 0; b < SITE_BUCKETS; b++)
        for (struct shim_site *s = g_sites[b]; s; s = s->next) {
            char line[4096 + 512];
            int n = site_line(s, line, sizeof line);
            if (n <= 0 || (size_t)n >= sizeof line)
                continue;
            if (used + (size_t)n + 1 > cap) {
                size_t ncap = 2 * cap + (size_t)n;
                char *nb = realloc(buf, ncap);
                if (!nb)
                    continue;
                buf = nb;
                cap = ncap;
            }
            memcpy(buf + used, line, (size_t)n + 1);
            used += (size_t)n;
        }
    pthread_mutex_unlock(&g_site_lock);
    *len = (int)used;
    return buf;
}

/* ---- merging and printing ---- */

struct row {
    char *obj, *sym;
    unsigned long long addr, symoff;
    int op, reason, ranks;
    long long calls, bytes, total, exposed, timed;
    double hid_min, hid_max; /* over ranks with timed operations */
    int hid_ranks;
    char *func, *where; /* from addr2line (NULL: not known) */
};

static int parse_row(char *line, struct row *r)
{
    char *f[11];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, "\t", &save); t && n < 11;
         t = strtok_r(NULL, "\t", &save))
        f[n++] = t;
    if (n != 11)
        return 0;
    memset(r, 0, sizeof *r);
    r->obj = f[0];
    r->addr = strtoull(f[1], NULL, 0);
    r->sym = f[2];
    r->symoff = strtoull(f[3], NULL, 0);
    r->op = atoi(f[4]);
    r->reason = atoi(f[5]);
    r->calls = atoll(f[6]);
    r->bytes = atoll(f[7]);
    r->total = atoll(f[8]);
    r->exposed = atoll(f[9]);
    r->timed = atoll(f[10]);
    r->ranks = 1;
    if (r->timed > 0 && r->total > 0) {
        r->hid_min = r->hid_max = 1.0 - (double)r->exposed / (double)r->total;
        r->hid_ranks = 1;
    }
    return 1;
}

static void merge(struct row *into, const struct row *r)
{
    into->ranks++;
    into->calls += r->calls;
    into->bytes += r->bytes;
    into->total += r->total;
    into->exposed += r->exposed;
    into->timed += r->timed;
    if (r->hid_ranks) {
        if (!into->hid_ranks || r->hid_min < into->hid_min)
            into->hid_min = r->hid_min;
        if (!into->hid_ranks || r->hid_max > into->hid_max)
            into->hid_max = r->hid_max;
        into->hid_ranks++;
    }
}

static int on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *copy = strdup(path), *save = NULL;
    int found = 0;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
         d = strtok_r(NULL, ":", &save)) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", d, prog);
        found = access(full, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* A path in single quotes for the shell. */
static void shell_quote(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    if (cap < 3)
        return;
    out[o++] = '\'';
    for (; *s && o + 6 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Function and file:line of every row, one addr2line per object. */
static void resolve(struct row *rows, int n)
{
    if (!on_path("addr2line"))
        return;
    for (int i = 0; i < n; i++) {
        if (rows[i].func || !strcmp(rows[i].obj, "?"))
            continue;
        char q[8192];
        shell_quote(rows[i].obj, q, sizeof q);
        size_t cap = strlen(q) + 64 + 20 * (size_t)n, len;
        char *cmd = malloc(cap);
        if (!cmd)
            return;
        len = (size_t)snprintf(cmd, cap, "addr2line -f -C -e %s", q);
        int *idx = malloc(sizeof *idx * (size_t)n), m = 0;
        for (int j = i; idx && j < n; j++)
            if (!rows[j].func && !strcmp(rows[j].obj, rows[i].obj)) {
                len += (size_t)snprintf(cmd + len, cap - len, " %#llx",
                                        rows[j].addr);
                idx[m++] = j;
            }
        snprintf(cmd + len, cap - len, " 2>/dev/null");
        FILE *p = idx ? popen(cmd, "r") : NULL;
        for (int k = 0; k < m; k++) {
            struct row *r = &rows[idx[k]];
            char fn[1024] = "", fl[4096] = "";
            if (!p || !fgets(fn, sizeof fn, p) || !fgets(fl, sizeof fl, p)) {
                r->func = strdup("");
                continue;
            }
            fn[strcspn(fn, "\n")] = 0;
            fl[strcspn(fl, "\n")] = 0;
            char *disc = strstr(fl, " (discriminator");
            if (disc)
                *disc = 0;
            r->func = strdup(strcmp(fn, "??") ? fn : "");
            size_t fll = strlen(fl);
            int known = fll > 2 && strncmp(fl, "??", 2) &&
                        !strstr(fl, ":?") && strcmp(fl + fll - 2, ":0");
            if (known)
                r->where = strdup(base_name(fl));
        }
        if (p)
            pclose(p);
        free(idx);
        free(cmd);
        if (!rows[i].func)
            rows[i].func = strdup(""); /* not resolved: not again */
    }
}

/* nranks 0: one rank's own table (rank of size). */
static void print_table(FILE *out, struct row *rows, int n, int nranks,
                        int rank, int size, const char *const *op_names,
                        const char *const *reason_names)
{
    if (nranks)
        fprintf(out, "nbcx-pmpi report: %d rank%s, ", nranks,
                nranks == 1 ? "" : "s");
    else
        fprintf(out, "nbcx-pmpi report: rank %d of %d, ", rank, size);
    fprintf(out, "%d row%s (call site x operation x path)\n", n,
            n == 1 ? "" : "s");
    fprintf(out, "nbcx-pmpi report: calls, bytes: sums over ranks; "
                 "start-done, exposed: microseconds per operation, "
                 "means; hidden = 1 - exposed / start-done, [min-max] "
                 "over ranks\n");
    fprintf(out, "%-26s %-6s %5s %9s %13s %11s %11s %7s %-11s %s\n",
            "operation", "path", "ranks", "calls", "bytes", "start-done",
            "exposed", "hidden", "spread", "call site");
    for (int i = 0; i < n; i++) {
        struct row *r = &rows[i];
        char t[32] = "-", e[32] = "-", h[16] = "-", sp[32] = "";
        if (r->timed > 0) {
            snprintf(t, sizeof t, "%.1f",
                     (double)r->total / 1e3 / (double)r->timed);
            snprintf(e, sizeof e, "%.1f",
                     (double)r->exposed / 1e3 / (double)r->timed);
            if (r->total > 0)
                snprintf(h, sizeof h, "%.0f%%",
                         100.0 * (1.0 - (double)r->exposed /
                                            (double)r->total));
            if (r->hid_ranks > 1)
                snprintf(sp, sizeof sp, "[%.0f-%.0f%%]", 100.0 * r->hid_min,
                         100.0 * r->hid_max);
        }
        const char *fn = r->func && *r->func ? r->func
                         : strcmp(r->sym, "-") ? r->sym
                                               : "?";
        /* Where in the object: the file and line when addr2line knows
         * them, else the offset from dladdr's symbol or in the object. */
        char off[64] = "";
        if (r->where)
            off[0] = 0;
        else if (!(r->func && *r->func) && strcmp(r->sym, "-"))
            snprintf(off, sizeof off, "+%#llx", r->symoff);
        else
            snprintf(off, sizeof off, " @%#llx", r->addr + 1);
        fprintf(out, "%-26s %-6s %5d %9lld %13lld %11s %11s %7s %-11s "
                     "%s%s%s%s (%s)",
                op_names[r->op], r->reason ? "native" : "nbcx", r->ranks,
                r->calls, r->bytes, t, e, h, sp, fn, off,
                r->where ? " at " : "", r->where ? r->where : "",
                base_name(r->obj));
        if (r->reason)
            fprintf(out, " -- %s", reason_names[r->reason]);
        fprintf(out, "\n");
    }
    fflush(out);
}

static int row_order(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->obj, y->obj);
    if (c)
        return c;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->op != y->op)
        return x->op - y->op;
    return x->reason - y->reason;
}

void shim_report_write(const char *dest, const char *const *op_names,
                       const char *const *reason_names)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int per_rank = strstr(dest, "%r") != NULL;
    int len = 0;
    char *mine = local_rows(&len);
    if (!mine)
        len = 0;
    char *all = mine;
    int total = len, nranks = per_rank ? 0 : 1;
    if (!per_rank && size > 1) {
        int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
        int *displs = rank == 0 ? calloc((size_t)size, sizeof *displs)
                                : NULL;
        PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
        all = NULL;
        if (rank == 0) {
            total = 0;
            for (int i = 0; lens && displs && i < size; i++) {
                displs[i] = total;
                total += lens[i];
            }
            all = malloc((size_t)total + 1);
        }
        /* (rank 0 out of memory: the others still take part) */
        PMPI_Gatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0,
                     MPI_COMM_WORLD);
        free(lens);
        free(displs);
        free(mine);
        mine = NULL;
        nranks = size;
        if (rank != 0)
            return;
        if (!all) {
            fprintf(stderr, "nbcx-pmpi: report: out of memory\n");
            return;
        }
        all[total] = 0;
    }
    /* Parse and merge (every line is one rank's row). */
    int cap = 16, n = 0;
    struct row *rows = malloc(sizeof *rows * (size_t)cap);
    for (char *save = NULL, *l = rows && all ? strtok_r(all, "\n", &save)
                                             : NULL;
         l; l = strtok_r(NULL, "\n", &save)) {
        struct row r;
        if (!parse_row(l, &r))
            continue;
        int j;
        for (j = 0; j < n; j++)
            if (rows[j].addr == r.addr && rows[j].op == r.op &&
                rows[j].reason == r.reason && !strcmp(rows[j].obj, r.obj))
                break;
        if (j < n) {
            merge(&rows[j], &r);
            continue;
        }
        if (n == cap) {
            struct row *nr = realloc(rows, sizeof *rows * (size_t)cap * 2);
            if (!nr)
                break;
            rows = nr;
            cap *= 2;
        }
        rows[n++] = r;
    }
    if (rows) {
        qsort(rows, (size_t)n, sizeof *rows, row_order);
        resolve(rows, n);
    }
    FILE *out = stderr;
    if (strcmp(dest, "1") != 0) {
        char path[4096];
        size_t o = 0;
        for (const char *s = dest; *s && o + 16 < sizeof path; s++) {
            if (s[0] == '%' && s[1] == 'r') {
                o += (size_t)snprintf(path + o, sizeof path - o, "%d", rank);
                s++;
            } else {
                path[o++] = *s;
            }
        }
        path[o] = 0;
        out = fopen(path, "w");
        if (!out) {
            fprintf(stderr, "nbcx-pmpi: NBCX_PMPI_REPORT: cannot write "
                            "'%s' (%s): the report goes to stderr\n",
                    path, strerror(errno));
            out = stderr;
        }
    }
    if (rows)
        print_table(out, rows, n, nranks, rank, size, op_names,
                    reason_names);
    else
        fprintf(stderr, "nbcx-pmpi: report: out of memory\n");
    if (out != stderr)
        fclose(out);
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].func);
        free(rows[i].where);
    }
    free(rows);
    free(all);
}
