/*
 * report.c - what nbcx-bench writes: the machine and library it ran on,
 * statistics, the OSU-style table and the JSON document (described by
 * tools/bench/schema.json): schema nbcx-bench/1 with MPI, where nbcx
 * runs next to the MPI library's own collectives; nbcx-bench/1.1 on the
 * inproc transport, where the blocking reference is nbcx's own
 * blocking-style path and there is no native implementation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* ---- statistics ------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_stat bench_stat_of(const double *v, int n)
{
    struct bench_stat s = { 0, 0, 0 };
    double *c = n > 0 ? malloc((size_t)n * sizeof *c) : NULL;
    if (!c)
        return s;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    s.min = c[0];
    s.max = c[n - 1];
    s.median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return s;
}

/* ---- machine and library ---------------------------------------------- */

/* Copies src into dst (size len), cut at the first newline. */
void bench_copy_line(char *dst, size_t len, const char *src)
{
    size_t n = strcspn(src, "\r\n");
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                bench_copy_line(buf, len, colon);
            }
            break;
        }
    }
    fclose(f);
}

void meta_collect(struct bench_meta *m, nbcx_comm comm, int ranks)
{
    memset(m, 0, sizeof *m);
    snprintf(m->native_persistent, sizeof m->native_persistent, "none");
    snprintf(m->shim_persistent, sizeof m->shim_persistent, "none");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(m->hostname, sizeof m->hostname - 1) != 0)
        snprintf(m->hostname, sizeof m->hostname, "unknown");
    cpu_model(m->cpu_model, sizeof m->cpu_model);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->os, sizeof m->os, "%s %s %s %s", u.sysname, u.release,
                 u.version, u.machine);
    else
        snprintf(m->os, sizeof m->os, "unknown");
    m->cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(m->mpi_library, sizeof m->mpi_library, "none");
    snprintf(m->mpi_version, sizeof m->mpi_version, "none");
    snprintf(m->mpi_version_string, sizeof m->mpi_version_string, "none");

    const char *transport = NULL;
    if (nbcx_comm_transport(comm, &transport) != NBCX_SUCCESS || !transport)
        transport = "unknown";
    snprintf(m->transport, sizeof m->transport, "%s", transport);
    snprintf(m->transport_desc, sizeof m->transport_desc, "%s", transport);
    const char *net = getenv("NBCX_BENCH_NETWORK");
    snprintf(m->network, sizeof m->network, "%s", net && *net ? net : "shm");

    /* nbcx says "progress=MODE" in its info line; "caller" until it
     * does. */
    snprintf(m->progress, sizeof m->progress, "caller");
    snprintf(m->progress_cpus, sizeof m->progress_cpus, "none");
    if (nbcx_info(m->nbcx_info, sizeof m->nbcx_info) == NBCX_SUCCESS) {
        const char *p = strstr(m->nbcx_info, "progress=");
        if (p) {
            p += strlen("progress=");
            size_t n = strcspn(p, " \t\r\n,;");
            if (n > 0 && n < sizeof m->progress) {
                memcpy(m->progress, p, n);
                m->progress[n] = '\0';
            }
        }
        /* "cpus=LIST (why)": where the progress thread runs. */
        const char *c = strstr(m->nbcx_info, "cpus=");
        if (c) {
            c += strlen("cpus=");
            const char *end = strchr(c, ')');
            size_t n = end ? (size_t)(end - c) + 1 : strcspn(c, " ");
            if (n < sizeof m->progress_cpus) {
                memcpy(m->progress_cpus, c, n);
                m->progress_cpus[n] = '\0';
            }
        }
        /* "transport=ucx(tls=...)": a transport created by name says
         * which of its own transports it runs on (UCX_TLS). */
        const char *t = strstr(m->nbcx_info, "transport=");
        if (t) {
            t += strlen("transport=");
            snprintf(m->transport_desc, sizeof m->transport_desc, "%.*s",
                     (int)strcspn(t, " "), t);
        }
    } else {
        m->nbcx_info[0] = '\0';
    }
    m->ranks = ranks;
}

/* ---- table -------------------------------------------------------------- */

const char *const bench_columns[] = {
    "size",             "t_block(us)",     "native_pure(us)",
    "nbcx_pure(us)",    "native_ovrl(us)", "nbcx_ovrl(us)",
    "native_overlap(%)", "nbcx_overlap(%)", "native_ovh(us)",
    "nbcx_ovh(us)",     "native_cpu(%)",   "nbcx_cpu(%)",
};
const int bench_ncolumns =
    (int)(sizeof bench_columns / sizeof bench_columns[0]);

/* --pmpi: native, shim and nbcx side by side for every figure. */
const char *const bench_columns_pmpi[] = {
    "size",              "t_block(us)",      "native_pure(us)",
    "shim_pure(us)",     "nbcx_pure(us)",    "native_ovrl(us)",
    "shim_ovrl(us)",     "nbcx_ovrl(us)",    "native_overlap(%)",
    "shim_overlap(%)",   "nbcx_overlap(%)",  "native_ovh(us)",
    "shim_ovh(us)",      "nbcx_ovh(us)",     "native_cpu(%)",
    "shim_cpu(%)",       "nbcx_cpu(%)",
};
const int bench_ncolumns_pmpi =
    (int)(sizeof bench_columns_pmpi / sizeof bench_columns_pmpi[0]);

/* Paper 000's variants (Fig. 6): blocking, nbc (start, wait at once) and
 * nbc+overlap (start, computation, wait), whose communication time (comm:
 * inside start, test and wait) is compared with the blocking time. */
const char *const bench_columns_inproc[] = {
    "size",         "t_block(us)", "nbc_pure(us)", "nbc/block",
    "nbc_ovrl(us)", "t_cpu(us)",   "comm(us)",     "comm/block",
    "overlap(%)",   "cpu(%)",
};
const int bench_ncolumns_inproc =
    (int)(sizeof bench_columns_inproc / sizeof bench_columns_inproc[0]);

#define FIRST_WIDTH 10 /* first column, "# " included in the header */

static int column_width(const char *name)
{
    int w = (int)strlen(name) + 2;
    return w < 12 ? 12 : w;
}

void table_header(FILE *f, const struct bench_meta *m,
                  const struct bench_options *o, const struct bench_op *op)
{
    const char *mpi = m->has_native ? m->mpi_library : "none";
    fprintf(f,
            "# nbcx-bench: op %s, ranks %d, cores %ld, MPI %s%s%s, "
            "network %s, progress %s (cpus %s), transport %s\n",
            op->name, m->ranks, m->cores, mpi, m->has_native ? " " : "",
            m->has_native ? m->mpi_version : "", m->network, m->progress,
            m->progress_cpus, m->transport_desc);
    fprintf(f, "# host %s, cpu %s, %s, nbcx %d.%d.%d, %s\n", m->hostname,
            m->cpu_model, m->os, NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR,
            NBCX_VERSION_PATCH, m->date);
    if (o->reps)
        fprintf(f, "# %d repetitions", o->reps);
    else
        fprintf(f, "# repetitions: ceil(%g s / t) in [%d, %d]", o->budget,
                BENCH_AUTO_REPS_MIN, BENCH_AUTO_REPS_MAX);
    fprintf(f, ", %d warm-up, %d tests, computation as long as t_%s; "
               "median over repetitions of the max over ranks; datatype %s\n",
            o->warmup, o->tests, bench_compute_name(o->compute),
            bench_op_datatype(op));
    if (o->persistent)
        fprintf(f, "# persistent requests: nbcx_<op>_init; native: %s\n",
                !m->has_native ? "none (no native library)"
                : strcmp(m->native_persistent, "MPIX") == 0
                    ? "MPIX_<op>_init (Open MPI mpi-ext.h)"
                : strcmp(m->native_persistent, "MPI-4") == 0
                    ? "MPI_<op>_init (MPI-4)"
                    : "none, the nonblocking call");
    if (m->has_shim)
        fprintf(f, "# shim: the same MPI_I... calls through %s (--pmpi)%s%s\n",
                m->shim_library, o->persistent ? "; persistent: " : "",
                !o->persistent ? ""
                : strcmp(m->shim_persistent, "MPIX") == 0
                    ? "MPIX_<op>_init"
                : strcmp(m->shim_persistent, "MPI-4") == 0
                    ? "MPI_<op>_init"
                    : "none, the nonblocking call");
    const char *const *cols = m->has_shim ? bench_columns_pmpi : bench_columns;
    int ncols = m->has_shim ? bench_ncolumns_pmpi : bench_ncolumns;
    if (!m->has_native) {
        fprintf(f,
                "# block: start + wait at once in %s progress; nbc: start + "
                "wait at once; nbc+overlap: start, computation, wait; comm: "
                "time inside start + test + wait of nbc+overlap\n",
                m->block_progress ? bench_progress_name(m->block_progress)
                                  : m->progress);
        cols = bench_columns_inproc;
        ncols = bench_ncolumns_inproc;
    }
    fprintf(f, "# %-*s", FIRST_WIDTH - 2, cols[0]);
    for (int i = 1; i < ncols; i++)
        fprintf(f, "%*s", column_width(cols[i]), cols[i]);
    fputc('\n', f);
}

static double median(const double *v, int n)
{
    return bench_stat_of(v, n).median;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void row(FILE *f, size_t bytes, const char *const *cols, int ncols,
                const double *v)
{
    fprintf(f, "%-*zu", FIRST_WIDTH, bytes);
    for (int i = 1; i < ncols; i++) {
        int percent = strchr(cols[i], '%') != NULL;
        int ratio_col = strchr(cols[i], '/') != NULL;
        fprintf(f, "%*.*f", column_width(cols[i]),
                ratio_col ? 3 : percent ? 1 : 2, v[i - 1]);
    }
    fputc('\n', f);
}

void table_row(FILE *f, const struct bench_meta *m,
               const struct bench_result *r)
{
    const struct bench_impl_result *n = &r->impl[IMPL_NATIVE];
    const struct bench_impl_result *x = &r->impl[IMPL_NBCX];
    const int k = r->reps;
    if (!m->has_native) {
        double block = median(r->t_block, k);
        double pure = median(x->t_pure, k);
        double comm = median(x->overhead, k);
        const double v[] = {
            block * 1e6,
            pure * 1e6,
            ratio(pure, block),
            median(x->t_ovrl, k) * 1e6,
            median(x->t_cpu, k) * 1e6,
            comm * 1e6,
            ratio(comm, block),
            median(x->overlap, k) * 100,
            median(x->cpu_progress, k) * 100,
        };
        row(f, r->bytes, bench_columns_inproc, bench_ncolumns_inproc, v);
        return;
    }
    if (m->has_shim) {
        const struct bench_impl_result *s = &r->impl[IMPL_SHIM];
        const double v[] = {
            median(r->t_block, k) * 1e6,
            median(n->t_pure, k) * 1e6,
            median(s->t_pure, k) * 1e6,
            median(x->t_pure, k) * 1e6,
            median(n->t_ovrl, k) * 1e6,
            median(s->t_ovrl, k) * 1e6,
            median(x->t_ovrl, k) * 1e6,
            median(n->overlap, k) * 100,
            median(s->overlap, k) * 100,
            median(x->overlap, k) * 100,
            median(n->overhead, k) * 1e6,
            median(s->overhead, k) * 1e6,
            median(x->overhead, k) * 1e6,
            median(n->cpu_progress, k) * 100,
            median(s->cpu_progress, k) * 100,
            median(x->cpu_progress, k) * 100,
        };
        row(f, r->bytes, bench_columns_pmpi, bench_ncolumns_pmpi, v);
        return;
    }
    const double v[] = {
        median(r->t_block, k) * 1e6,
        median(n->t_pure, k) * 1e6,
        median(x->t_pure, k) * 1e6,
        median(n->t_ovrl, k) * 1e6,
        median(x->t_ovrl, k) * 1e6,
        median(n->overlap, k) * 100,
        median(x->overlap, k) * 100,
        median(n->overhead, k) * 1e6,
        median(x->overhead, k) * 1e6,
        median(n->cpu_progress, k) * 100,
        median(x->cpu_progress, k) * 100,
    };
    row(f, r->bytes, bench_columns, bench_ncolumns, v);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity; the measurements never produce them, but
 * a document must stay valid whatever happens. */
static void json_number(FILE *f, double x)
{
    fprintf(f, "%.9g", isfinite(x) ? x : 0.0);
}

static void json_array(FILE *f, const double *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        json_number(f, v[i]);
    }
    fputc(']', f);
}

static void json_stat(FILE *f, const double *v, int n)
{
    struct bench_stat s = bench_stat_of(v, n);
    fputs("{\"median\": ", f);
    json_number(f, s.median);
    fputs(", \"min\": ", f);
    json_number(f, s.min);
    fputs(", \"max\": ", f);
    json_number(f, s.max);
    fputc('}', f);
}

/* The per-implementation figures, in the order of the contract. */
static const char *const impl_fields[] = { "t_pure", "t_cpu", "t_ovrl",
                                           "overhead", "cpu_progress",
                                           "overlap" };
enum { NFIELDS = sizeof impl_fields / sizeof impl_fields[0] };
static const char *const impl_names[IMPL_COUNT] = { "native", "nbcx",
                                                    "shim" };

static const double *impl_field(const struct bench_impl_result *r, int i)
{
    const double *const v[NFIELDS] = { r->t_pure,   r->t_cpu,
                                       r->t_ovrl,   r->overhead,
                                       r->cpu_progress, r->overlap };
    return v[i];
}

static void json_impl(FILE *f, const struct bench_impl_result *r, int reps,
                      int raw)
{
    fputc('{', f);
    for (int i = 0; i < NFIELDS; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", impl_fields[i]);
        if (raw)
            json_array(f, impl_field(r, i), reps);
        else
            json_stat(f, impl_field(r, i), reps);
    }
    fputc('}', f);
}

/* Without a native implementation (inproc) only nbcx's figures; the
 * shim's with --pmpi only. */
static void json_result(FILE *f, const struct bench_result *r, int has_native,
                        int has_shim)
{
    const int first = has_native ? IMPL_NATIVE : IMPL_NBCX;
    const int end = has_shim ? IMPL_COUNT : IMPL_SHIM;
    fputs("    {\"op\": ", f);
    json_string(f, r->op->name);
    fprintf(f, ", \"bytes\": %zu, \"count\": %d, \"datatype\": ", r->bytes,
            r->count);
    json_string(f, bench_op_datatype(r->op));
    fprintf(f, ", \"reps\": %d,\n     \"t_block\": ", r->reps);
    json_stat(f, r->t_block, r->reps);
    for (int i = first; i < end; i++) {
        fprintf(f, ",\n     \"%s\": ", impl_names[i]);
        json_impl(f, &r->impl[i], r->reps, 0);
    }
    fputs(",\n     \"raw\": {\"t_block\": ", f);
    json_array(f, r->t_block, r->reps);
    for (int i = first; i < end; i++) {
        fprintf(f, ",\n             \"%s\": ", impl_names[i]);
        json_impl(f, &r->impl[i], r->reps, 1);
    }
    fputs("}}", f);
}

static void json_document(FILE *f, const struct bench_meta *m,
                          const struct bench_options *o,
                          const struct bench_result *r, int nresults)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n",
            m->has_native ? "nbcx-bench/1" : "nbcx-bench/1.1");
    fputs("  \"tool\": \"nbcx-bench\",\n", f);
    fprintf(f, "  \"nbcx_version\": \"%d.%d.%d\",\n  \"date\": ",
            NBCX_VERSION_MAJOR, NBCX_VERSION_MINOR, NBCX_VERSION_PATCH);
    json_string(f, m->date);
    fputs(",\n  \"machine\": {\"hostname\": ", f);
    json_string(f, m->hostname);
    fputs(", \"cpu_model\": ", f);
    json_string(f, m->cpu_model);
    fprintf(f, ", \"cores\": %ld, \"os\": ", m->cores);
    json_string(f, m->os);
    fputs("},\n  \"mpi\": {\"library\": ", f);
    json_string(f, m->mpi_library);
    fputs(", \"version\": ", f);
    json_string(f, m->mpi_version);
    fputs(", \"version_string\": ", f);
    json_string(f, m->mpi_version_string);
    fputs("},\n  \"transport\": ", f);
    json_string(f, m->transport);
    fputs(",\n  \"network\": ", f);
    json_string(f, m->network);
    fputs(",\n  \"progress\": ", f);
    json_string(f, m->progress);
    fputs(",\n  \"progress_cpus\": ", f);
    json_string(f, m->progress_cpus);
    fputs(",\n  \"nbcx_info\": ", f);
    json_string(f, m->nbcx_info);
    fputs(",\n  \"cpu_accounting\": ", f);
    json_string(f, cpu_snapshot_method());
    fprintf(f, ",\n  \"ranks\": %d,\n  \"cores\": %ld,\n", m->ranks, m->cores);

    fputs("  \"config\": {\"ops\": [", f);
    for (int i = 0; i < o->nops; i++) {
        if (i)
            fputs(", ", f);
        json_string(f, bench_ops[o->ops[i]].name);
    }
    fputs("], \"sizes\": [", f);
    for (int i = 0; i < o->nsizes; i++)
        fprintf(f, "%s%zu", i ? ", " : "", o->sizes[i]);
    fprintf(f, "],\n             \"reps\": %d, \"budget\": ", o->reps);
    json_number(f, o->budget);
    fprintf(f, ", \"reps_min\": %d, \"reps_max\": %d, \"warmup\": %d, "
               "\"tests\": %d,\n             \"compute\": \"%s\"",
            BENCH_AUTO_REPS_MIN, BENCH_AUTO_REPS_MAX, o->warmup, o->tests,
            bench_compute_name(o->compute));
    fprintf(f, ", \"persistent\": %s, \"native_persistent\": \"%s\"",
            o->persistent ? "true" : "false", m->native_persistent);
    fprintf(f, ", \"pure_only\": %s", o->pure_only ? "true" : "false");
    if (!m->has_native)
        fprintf(f, ", \"block_progress\": \"%s\"",
                m->block_progress ? bench_progress_name(m->block_progress)
                                  : m->progress);
    fputs("},\n", f);
    if (m->has_shim) {
        fputs("  \"pmpi\": {\"library\": ", f);
        json_string(f, m->shim_library);
        fprintf(f, ", \"persistent\": \"%s\", \"served\": %lld, "
                   "\"native\": %lld},\n",
                m->shim_persistent, m->shim_served, m->shim_native);
    }

    fputs("  \"results\": [", f);
    for (int i = 0; i < nresults; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_result(f, &r[i], m->has_native, m->has_shim);
    }
    fputs(nresults ? "\n  ]\n}\n" : "]\n}\n", f);
}

int json_write(const char *path, const struct bench_meta *m,
               const struct bench_options *o, const struct bench_result *r,
               int nresults)
{
    size_t len = strlen(path) + 5;
    char *tmp = malloc(len);
    if (!tmp)
        return -1;
    snprintf(tmp, len, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int err = !f;
    if (f) {
        json_document(f, m, o, r, nresults);
        err = ferror(f);
        err |= fclose(f) != 0;
        if (!err)
            err = rename(tmp, path) != 0;
        if (err)
            remove(tmp);
    }
    free(tmp);
    return err ? -1 : 0;
}
