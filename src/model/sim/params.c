/*
 * params.c - the simulator's parameter file, format "nbcx-loggp/1"
 * (docs/sim.md), shared with the LogGP measuring tool:
 *
 *   {"format": "nbcx-loggp/1", "source": "free text", "cores_per_node": 2,
 *    "intra": {"L": 0.35, "o": 0.25, "g": 0.30, "G": 0.00012},
 *    "inter": {"L": 45.0, "o": 3.0, "g": 4.0, "G": 0.0080},
 *    "copy_per_byte": 0.00008, "reduce_per_byte": 0.0003,
 *    "start_cost": 0.3, "node_cost": 0.05, "message_cost": 0.1,
 *    "cache_bytes": 524288,
 *    "copy_per_byte_cached": 0.00002, "reduce_per_byte_cached": 0.00003}
 *
 * Times in µs, per-byte costs in µs per byte. Every key but "source" is
 * required, except the later additions, so that files written before
 * nbcx-loggp measured them still load: "start_cost", "node_cost" and
 * "message_cost" (nbcx's engine, default 0), "cache_bytes" (default 0:
 * no copy or reduction counts as cached), the cached rates (default:
 * the uncached ones), "sched_latency" (its presence turns on the
 * time-sharing of oversubscribed cores, simulate.c), "eager_limit"
 * (bytes; rendezvous on time-shared cores, default 0: none) and
 * "rndv_latency" (default 0); unknown keys are
 * skipped (a measuring tool may add its own, e.g. the raw samples). A tiny JSON reader for exactly this: any JSON
 * value is accepted where a key is skipped, numbers must be finite and
 * not negative, cores_per_node a positive integer.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct rd {
    const char *p, *end, *start;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct rd *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(struct rd *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    int line = 1;
    for (const char *q = r->start; q < r->p && q < r->end; q++)
        line += *q == '\n';
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "line %d: %s", line, msg);
}

static void ws(struct rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
                             *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int peek(struct rd *r)
{
    ws(r);
    return r->p < r->end ? (unsigned char)*r->p : -1;
}

static int expect(struct rd *r, char c)
{
    if (peek(r) != c) {
        if (r->p >= r->end)
            fail(r, "expected '%c', found the end of the file", c);
        else
            fail(r, "expected '%c', found '%c'", c, *r->p);
        return -1;
    }
    r->p++;
    return 0;
}

/* A string into buf (truncated to len - 1; escapes kept simple: \uXXXX
 * becomes '?'). */
static int string(struct rd *r, char *buf, size_t len)
{
    if (expect(r, '"'))
        return -1;
    size_t n = 0;
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if ((unsigned char)c < 0x20) {
            fail(r, "control character in a string");
            return -1;
        }
        if (c == '\\') {
            if (r->p >= r->end)
                break;
            char e = *r->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u':
                if (r->end - r->p < 4) {
                    fail(r, "bad \\u escape");
                    return -1;
                }
                r->p += 4;
                c = '?';
                break;
            case '"': case '\\': case '/': c = e; break;
            default:
                fail(r, "bad escape '\\%c'", e);
                return -1;
            }
        }
        if (buf && n + 1 < len)
            buf[n++] = c;
    }
    if (r->p >= r->end) {
        fail(r, "unterminated string");
        return -1;
    }
    r->p++;
    if (buf && len)
        buf[n] = '\0';
    return 0;
}

static int number(struct rd *r, double *v)
{
    ws(r);
    const char *q = r->p;
    if (q < r->end && *q == '-')
        q++;
    while (q < r->end && ((*q >= '0' && *q <= '9') || *q == '.' ||
                          *q == 'e' || *q == 'E' || *q == '+' || *q == '-'))
        q++;
    char tmp[64];
    size_t n = (size_t)(q - r->p);
    if (n == 0 || n >= sizeof tmp) {
        fail(r, "expected a number");
        return -1;
    }
    memcpy(tmp, r->p, n);
    tmp[n] = '\0';
    char *e;
    errno = 0;
    *v = strtod(tmp, &e);
    if (*e || errno) {
        fail(r, "bad number '%s'", tmp);
        return -1;
    }
    r->p = q;
    return 0;
}

static int literal(struct rd *r, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(r->end - r->p) < n || strncmp(r->p, w, n) != 0) {
        fail(r, "unexpected character '%c'", *r->p);
        return -1;
    }
    r->p += n;
    return 0;
}

static int skip_value(struct rd *r, int depth)
{
    if (depth > 64) {
        fail(r, "nested too deeply");
        return -1;
    }
    int c = peek(r);
    double d;
    switch (c) {
    case '"':
        return string(r, NULL, 0);
    case '{':
    case '[': {
        char close = c == '{' ? '}' : ']';
        r->p++;
        if (peek(r) == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (c == '{' && (string(r, NULL, 0) || expect(r, ':')))
                return -1;
            if (skip_value(r, depth + 1))
                return -1;
            if (peek(r) == ',') {
                r->p++;
                continue;
            }
            return expect(r, close);
        }
    }
    case 't':
        return literal(r, "true");
    case 'f':
        return literal(r, "false");
    case 'n':
        return literal(r, "null");
    case -1:
        fail(r, "expected a value, found the end of the file");
        return -1;
    default:
        return number(r, &d);
    }
}

/* A non-negative finite number for key `name`. */
static int param(struct rd *r, const char *name, double *v)
{
    if (peek(r) != '-' && (peek(r) < '0' || peek(r) > '9')) {
        fail(r, "\"%s\" must be a number", name);
        return -1;
    }
    if (number(r, v))
        return -1;
    if (!isfinite(*v) || *v < 0) {
        fail(r, "\"%s\" must be a finite number >= 0 (got %g)", name, *v);
        return -1;
    }
    return 0;
}

/* {"L": .., "o": .., "g": .., "G": ..} */
static int loggp(struct rd *r, const char *which, struct nbcxi_loggp *m)
{
    if (peek(r) != '{') {
        fail(r, "\"%s\" must be an object {\"L\", \"o\", \"g\", \"G\"}", which);
        return -1;
    }
    r->p++;
    int seen = 0;
    if (peek(r) == '}') {
        r->p++;
    } else {
        for (;;) {
            char key[64], name[80];
            if (string(r, key, sizeof key) || expect(r, ':'))
                return -1;
            snprintf(name, sizeof name, "%s.%s", which, key);
            double *dst = strcmp(key, "L") == 0   ? &m->L
                          : strcmp(key, "o") == 0 ? &m->o
                          : strcmp(key, "g") == 0 ? &m->g
                          : strcmp(key, "G") == 0 ? &m->G
                                                  : NULL;
            if (dst) {
                if (param(r, name, dst))
                    return -1;
                seen |= dst == &m->L ? 1 : dst == &m->o ? 2
                        : dst == &m->g ? 4 : 8;
            } else if (skip_value(r, 1)) {
                return -1;
            }
            if (peek(r) == ',') {
                r->p++;
                continue;
            }
            if (expect(r, '}'))
                return -1;
            break;
        }
    }
    static const char *const keys[] = { "L", "o", "g", "G" };
    for (int i = 0; i < 4; i++)
        if (!(seen & (1 << i))) {
            fail(r, "missing key \"%s\" in \"%s\"", keys[i], which);
            return -1;
        }
    return 0;
}

int nbcxi_sim_params_parse(const char *text, size_t len,
                           struct nbcxi_sim_params *p, char *err,
                           size_t errlen)
{
    struct rd r = { text, text + len, text, err, errlen, 0 };
    memset(p, 0, sizeof *p);
    enum { FORMAT = 1, CORES = 2, INTRA = 4, INTER = 8, COPY = 16,
           REDUCE = 32, ALL = 63 };
    int seen = 0, cached = 0;
    if (peek(&r) != '{') {
        fail(&r, "a parameter file is one JSON object");
        return -1;
    }
    r.p++;
    if (peek(&r) == '}')
        r.p++;
    else
        for (;;) {
            char key[64];
            if (string(&r, key, sizeof key) || expect(&r, ':'))
                return -1;
            if (strcmp(key, "format") == 0) {
                char f[64];
                if (peek(&r) != '"') {
                    fail(&r, "\"format\" must be a string");
                    return -1;
                }
                if (string(&r, f, sizeof f))
                    return -1;
                if (strcmp(f, "nbcx-loggp/1") != 0) {
                    fail(&r, "format \"%s\" is not \"nbcx-loggp/1\"", f);
                    return -1;
                }
                seen |= FORMAT;
            } else if (strcmp(key, "source") == 0) {
                if (peek(&r) != '"') {
                    fail(&r, "\"source\" must be a string");
                    return -1;
                }
                if (string(&r, p->source, sizeof p->source))
                    return -1;
            } else if (strcmp(key, "cores_per_node") == 0) {
                double v;
                if (param(&r, key, &v))
                    return -1;
                if (v < 1 || v > 1 << 20 || v != floor(v)) {
                    fail(&r, "\"cores_per_node\" must be an integer from 1 "
                             "to %d (got %g)", 1 << 20, v);
                    return -1;
                }
                p->cores_per_node = (int)v;
                seen |= CORES;
            } else if (strcmp(key, "intra") == 0) {
                if (loggp(&r, "intra", &p->intra))
                    return -1;
                seen |= INTRA;
            } else if (strcmp(key, "inter") == 0) {
                if (loggp(&r, "inter", &p->inter))
                    return -1;
                seen |= INTER;
            } else if (strcmp(key, "inter_link") == 0) {
                char v[16];
                if (peek(&r) != '"') {
                    fail(&r, "\"inter_link\" must be \"duplex\" or "
                             "\"shared\"");
                    return -1;
                }
                if (string(&r, v, sizeof v))
                    return -1;
                if (strcmp(v, "shared") && strcmp(v, "duplex")) {
                    fail(&r, "\"inter_link\" must be \"duplex\" or "
                             "\"shared\" (got \"%s\")", v);
                    return -1;
                }
                p->inter_shared = strcmp(v, "shared") == 0;
            } else if (strcmp(key, "intra_link") == 0) {
                char v[16];
                if (peek(&r) != '"') {
                    fail(&r, "\"intra_link\" must be \"nic\" or \"cpu\"");
                    return -1;
                }
                if (string(&r, v, sizeof v))
                    return -1;
                if (strcmp(v, "nic") && strcmp(v, "cpu")) {
                    fail(&r, "\"intra_link\" must be \"nic\" or \"cpu\" "
                             "(got \"%s\")", v);
                    return -1;
                }
                p->intra_cpu_share = strcmp(v, "cpu") == 0 ? 1 : 0;
            } else if (strcmp(key, "intra_cpu_share") == 0) {
                if (param(&r, key, &p->intra_cpu_share))
                    return -1;
                if (p->intra_cpu_share > 1) {
                    fail(&r, "\"intra_cpu_share\" must be from 0 to 1 "
                             "(got %g)", p->intra_cpu_share);
                    return -1;
                }
            } else if (strcmp(key, "copy_per_byte") == 0) {
                if (param(&r, key, &p->copy_per_byte))
                    return -1;
                seen |= COPY;
            } else if (strcmp(key, "reduce_per_byte") == 0) {
                if (param(&r, key, &p->reduce_per_byte))
                    return -1;
                seen |= REDUCE;
            } else if (strcmp(key, "start_cost") == 0) {
                if (param(&r, key, &p->start_cost))
                    return -1;
            } else if (strcmp(key, "node_cost") == 0) {
                if (param(&r, key, &p->node_cost))
                    return -1;
            } else if (strcmp(key, "message_cost") == 0) {
                if (param(&r, key, &p->message_cost))
                    return -1;
            } else if (strcmp(key, "sched_latency") == 0) {
                if (param(&r, key, &p->sched_latency))
                    return -1;
                p->time_share = true;
            } else if (strcmp(key, "eager_limit") == 0) {
                if (param(&r, key, &p->eager_limit))
                    return -1;
            } else if (strcmp(key, "rndv_latency") == 0) {
                if (param(&r, key, &p->rndv_latency))
                    return -1;
            } else if (strcmp(key, "cache_bytes") == 0) {
                if (param(&r, key, &p->cache_bytes))
                    return -1;
            } else if (strcmp(key, "copy_per_byte_cached") == 0) {
                if (param(&r, key, &p->copy_per_byte_cached))
                    return -1;
                cached |= 1;
            } else if (strcmp(key, "reduce_per_byte_cached") == 0) {
                if (param(&r, key, &p->reduce_per_byte_cached))
                    return -1;
                cached |= 2;
            } else if (skip_value(&r, 1)) {
                return -1;
            }
            if (peek(&r) == ',') {
                r.p++;
                continue;
            }
            if (expect(&r, '}'))
                return -1;
            break;
        }
    if (peek(&r) != -1) {
        fail(&r, "text after the JSON object");
        return -1;
    }
    static const char *const names[] = { "format", "cores_per_node",
                                         "intra", "inter", "copy_per_byte",
                                         "reduce_per_byte" };
    for (int i = 0; i < 6; i++)
        if (!(seen & (1 << i)) && !((1 << i) & (INTRA | INTER))) {
            snprintf(err, errlen, "missing key \"%s\"", names[i]);
            return -1;
        }
    /* intra and inter: at least one (a file of one nbcx-loggp run has
     * only the block it measured) */
    if (!(seen & (INTRA | INTER))) {
        snprintf(err, errlen, "missing key \"intra\" or \"inter\" (at "
                              "least one is needed)");
        return -1;
    }
    if (!(cached & 1))
        p->copy_per_byte_cached = p->copy_per_byte;
    if (!(cached & 2))
        p->reduce_per_byte_cached = p->reduce_per_byte;
    p->has_intra = seen & INTRA;
    p->has_inter = seen & INTER;
    return 0;
}

int nbcxi_sim_params_load(const char *path, struct nbcxi_sim_params *p,
                          char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= (size_t)16 << 20) { /* no parameter file is that big */
                fclose(f);
                free(buf);
                snprintf(err, errlen, "%s: larger than 16 MiB", path);
                return -1;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path,
                 buf ? "read error" : "out of memory");
        return -1;
    }
    char msg[384];
    int rc = nbcxi_sim_params_parse(buf, n, p, msg, sizeof msg);
    free(buf);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, msg);
    return rc;
}
