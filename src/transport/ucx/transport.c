/* transport.c - the UCX transport: nbcx's point-to-point over UCP tag
 * matching (ucp_tag_send_nbx / ucp_tag_recv_nbx).
 *
 * One UCP context and one worker per process, shared by every UCX
 * communicator; endpoints per peer worker, made on the first send to it
 * and shared by every communicator that reaches that peer. Rendezvous
 * for large messages is left to UCX.
 *
 * Tags: a 64-bit UCP tag holds the communicator's context id (16 bits,
 * agreed by its members at creation), the sender's rank in the
 * communicator (20 bits) and nbcx's transport tag (28 bits: tag slot and
 * schedule tag, base/comm.c); receives match it with a full mask, so two
 * communicators never cross and a receive matches only its peer.
 *
 * Datatypes: contiguous ones go as they are; a face's non-contiguous
 * derived type is packed into a staging buffer before a send and
 * unpacked from one after a receive (nbcxi_type_pack / unpack).
 *
 * Created by name (ops->create, NBCX_TRANSPORT=ucx): the bootstrap
 * (transport.h) exchanges worker addresses with one allgather, after
 * which nothing but UCX is on the data path. No MPI in this folder.
 * The first allgather also carries each rank's host, from which the
 * transport knows the nodes (node_of: the node-aware algorithms). 
 *
 * Built as a module, libnbcx-ucx.so (MODULE in its nbcx_backend() line,
 * base/transport.h): libnbcx loads it the first time a communicator
 * asks for "ucx", so programs that never do never load UCX (nor libucm's
 * memory hooks). The functions of base/ called here reach libnbcx through
 * base/module_base.c.
 *
 * Threads: every executor call (post, test, cancel, arm) runs under the
 * communicator's progress lock, which for this transport is one lock for
 * all its communicators (no NBCXI_CAP_COMM_PARALLEL: base.h,
 * nbcxi_serial_plock), but communicators are made and freed outside it,
 * so the
 * worker is asked for UCS_THREAD_MODE_MULTI (SERIALIZED is accepted if
 * that is all UCX gives: that lock then serialises the data path,
 * and the bootstrap only reads the worker's address, taken once).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucp/api/ucp.h>
#include <ucs/config/parser.h>

#include "../../base/base.h"

enum {
    CTX_BITS = 16,
    RANK_BITS = 20,
    TAG_BITS = 28,
    SPIN_CANCEL = 1000, /* progress calls a cancelled request may take */
};

/* ---- the process's context, worker and endpoints ---- */

struct peer { /* an endpoint, by the peer worker's address */
    struct peer *next;
    uint64_t hash;
    size_t len;
    ucp_ep_h ep;
    unsigned char addr[];
};

static struct {
    pthread_once_t once;
    int err;                   /* of the initialisation */
    char why[200];
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_address_t *addr;       /* this worker's address */
    size_t addrlen;
    int efd;                   /* the worker's event fd, -1 if none */
    pthread_mutex_t lock;      /* peers, next_ctx */
    struct peer *peers;
    uint32_t next_ctx;         /* next context id to propose */
    char tls[64];              /* its transports, for nbcx_info */
    char set[160];             /* the settings nbcx gave it, the same */
    size_t lazy_max;           /* what it carries by itself (ucx_lazy_max) */
} ux = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER,
         .efd = -1 };

/* The transports nbcx's UCX was given (NULL: UCX's default, all). */
static const char *tls_given(void)
{
    const char *tls = nbcxi_getenv("NBCX_UCX_TLS");
    return tls ? tls : nbcxi_getenv("UCX_TLS");
}

/* Whether UCX may use TCP, by the list it was given. */
static bool tcp_allowed(void)
{
    const char *tls = tls_given();
    return !tls || strstr(tls, "tcp") || strstr(tls, "all");
}

/* Whether UCX was given TCP as its only transport (besides self). */
static bool tcp_only(void)
{
    const char *tls = tls_given();
    if (!tls || !*tls)
        return false;
    char list[128];
    snprintf(list, sizeof list, "%s", tls);
    for (char *save = NULL, *tl = strtok_r(list, ",", &save); tl;
         tl = strtok_r(NULL, ",", &save))
        if (strcmp(tl, "tcp") != 0 && strcmp(tl, "self") != 0)
            return false;
    return true;
}

/* nbcx's own settings of its UCX context: NBCX_UCX_<name> sets UCX's
 * <name> for nbcx alone, not for an MPI library that runs on UCX too
 * (UCX_<name> sets both). Where a default is given, nbcx sets it unless
 * either variable says otherwise, and only where `applies` says it is for
 * the transports UCX was given (UCX warns of a setting no transport
 * took). */
static const struct {
    const char *name;    /* NBCX_UCX_<name>, UCX_<name>             */
    const char *key;     /* for ucp_config_modify (a transport's
                            setting without the transport's prefix) */
    const char *dflt;    /* nbcx's default, or NULL: UCX's          */
    bool (*applies)(void); /* whether the default is for these TLS  */
    /* For a transport's setting, nbcx's check of the value with UCX's
     * own parser of its type (1: valid): ucp_config_modify takes any
     * value there, and UCX only warns when a worker is made. */
    int (*parse)(const char *v, void *out, const void *arg);
} settings[] = {
    /* The transports (UCX's default: all it finds). */
    { "TLS", "TLS", NULL, NULL, NULL },
    /* The rendezvous threshold (UCX: auto, ~256 KiB on TCP). On TCP a
     * rendezvous needs the peer's progress for its handshake, whose
     * reply can queue behind that peer's own outgoing data: a ring
     * allreduce, whose 256 KiB fragments (.segsize below) cross in both
     * directions, then sometimes serialises one block. Through the
     * emulated switch at 200 Mbit/s, in a program on MPICH, the
     * allreduce of 1 MiB took 1.3-1.5x native in 4 runs of 6, and 1.00x
     * in all 8 with the threshold at 1m or inf (on Open MPI 42.5-45.0 ms,
     * with 1m 42.4 ms in 6 of 6; docs/results/ucx, session 15). Larger
     * messages keep the rendezvous: sent eagerly, a 4 MiB alltoall
     * overlapped less through the 1 Gbit/s switch (one sitting). Only on
     * TCP alone: not measured elsewhere. */
    { "RNDV_THRESH", "RNDV_THRESH", "1m", tcp_only, NULL },
    /* TCP's send segment (UCX: 8 KiB). A 64 KiB message then goes out
     * as one segment instead of eight, each of which waited for a
     * progress pass: on the emulated 1 Gbit/s network, auto mode, the
     * four 64 KiB operations took 1.04-1.17x native with 13-17 %
     * progress CPU at 8 KiB, 1.03-1.05x with 2-14 % at 64 KiB (medians
     * of 3 sittings, docs/results/ucx, session 10). Thread mode at
     * 1 MiB overlaps more with 8-32 KiB. */
    { "TCP_TX_SEG_SIZE", "TX_SEG_SIZE", "64K", tcp_allowed,
      ucs_config_sscanf_memunits },
};

/* The value settings[i] is given: NBCX_UCX_<name>, else UCX_<name>
 * (which UCX reads itself: *ours false), else nbcx's default where it
 * applies; NULL: none, UCX's own default. */
static const char *setting_value(size_t i, bool *ours)
{
    char var[64];
    snprintf(var, sizeof var, "NBCX_UCX_%s", settings[i].name);
    const char *v = nbcxi_getenv(var);
    *ours = true;
    if (v)
        return v;
    snprintf(var, sizeof var, "UCX_%s", settings[i].name);
    if ((v = nbcxi_getenv(var)) != NULL) {
        *ours = false;
        return v;
    }
    return settings[i].dflt && settings[i].applies() ? settings[i].dflt
                                                     : NULL;
}

/* Applies settings[] to cfg. Returns UCS_OK, or UCX's answer to the one
 * it refused, named in ux.why. */
static ucs_status_t apply_settings(ucp_config_t *cfg)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        bool ours;
        const char *v = setting_value(i, &ours);
        if (!v || !ours)
            continue; /* UCX's own reading of its environment */
        char var[64];
        snprintf(var, sizeof var, "NBCX_UCX_%s", settings[i].name);
        size_t parsed;
        if (settings[i].parse && !settings[i].parse(v, &parsed, NULL)) {
            snprintf(ux.why, sizeof ux.why, "%s=%s: not a size (UCX's "
                     "syntax: a number with an optional unit, as 64K, or "
                     "inf or auto)", var, v);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_status_t st = ucp_config_modify(cfg, settings[i].key, v);
        if (st != UCS_OK) {
            snprintf(ux.why, sizeof ux.why, "%s=%s: UCX does not take it "
                     "(%s)", var, v, ucs_status_string(st));
            return st;
        }
        if (strcmp(settings[i].name, "TLS") != 0) { /* (shown apart) */
            size_t n = strlen(ux.set);
            snprintf(ux.set + n, sizeof ux.set - n, ";%s=%s",
                     settings[i].name, v);
        }
    }
    return UCS_OK;
}

/* The size setting `name` of settings[] is in force (setting_value), or
 * SIZE_MAX when none is (UCX's own default, or auto). */
static size_t setting_bytes(const char *name)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        if (strcmp(settings[i].name, name) != 0)
            continue;
        bool ours;
        const char *v = setting_value(i, &ours);
        size_t n;
        /* (UCS_MEMUNITS_AUTO is (size_t)-2 and inf (size_t)-1, from
         * ucs/sys/string.h, whose inline assembly is not C11) */
        if (v && ucs_config_sscanf_memunits(v, &n, NULL) && n != SIZE_MAX - 1)
            return n;
    }
    return SIZE_MAX;
}

/* The largest operation UCX carries with no progress call once posted
 * (transport.h, carries_max): on TCP alone, a message that leaves in one
 * send segment (nbcx's 64 KiB, TCP_TX_SEG_SIZE) and below the rendezvous
 * threshold (UCX's own sends 64 KiB eagerly and 256 KiB by rendezvous):
 * the kernel takes it at the send and buffers it at the receiver. Not on
 * shared memory, nor where UCX chooses its transports: not measured
 * there (on one node of this project's machines auto mode leaves copying
 * to the application anyway, mode_auto.c's copy_bound). A send queued behind
 * a full socket buffer would wait for the next look or the wait.
 * Through the emulated switch, 64 KiB operations left to the application
 * overlapped 65-76 % with UCX's own threshold or 1 MiB, and 32-36 % with
 * NBCX_UCX_RNDV_THRESH=8k (docs/results/ucx, session 14). */
static size_t lazy_max_of_config(void)
{
    if (!tcp_only())
        return 0;
    size_t max = (size_t)64 << 10; /* measured there */
    size_t seg = setting_bytes("TCP_TX_SEG_SIZE"); /* nbcx's default: 64K */
    size_t rndv = setting_bytes("RNDV_THRESH");
    max = seg < max ? seg : max;
    return rndv <= max ? (rndv ? rndv - 1 : 0) : max;
}

static size_t ucx_lazy_max(const nbcxi_transport *t)
{
    (void)t;
    return ux.lazy_max;
}

static void init_once(void)
{
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
    if (st == UCS_OK && (st = apply_settings(cfg)) != UCS_OK) {
        ucp_config_release(cfg);
        ux.err = NBCX_ERR_TRANSPORT;
        return;
    }
    const char *tls = tls_given();
    snprintf(ux.tls, sizeof ux.tls, "%s", tls ? tls : "default");
    ux.lazy_max = lazy_max_of_config();
    if (st == UCS_OK) {
        ucp_params_t p = {
            .field_mask = UCP_PARAM_FIELD_FEATURES |
                          UCP_PARAM_FIELD_MT_WORKERS_SHARED,
            .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP,
            .mt_workers_shared = 1,
        };
        st = ucp_init(&p, cfg, &ux.ctx);
        ucp_config_release(cfg);
    }
    if (st != UCS_OK) {
        snprintf(ux.why, sizeof ux.why, "UCX could not be initialised "
                 "(ucp_init: %s)", ucs_status_string(st));
        ux.err = NBCX_ERR_TRANSPORT;
        return;
    }
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_MULTI,
    };
    st = ucp_worker_create(ux.ctx, &wp, &ux.worker);
    ucp_worker_attr_t wa = { .field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE };
    if (st == UCS_OK && ucp_worker_query(ux.worker, &wa) == UCS_OK &&
        wa.thread_mode == UCS_THREAD_MODE_SINGLE) {
        snprintf(ux.why, sizeof ux.why, "UCX gives a worker for one thread "
                 "only (nbcx needs UCS_THREAD_MODE_SERIALIZED at least)");
        ux.err = NBCX_ERR_TRANSPORT;
        return;
    }
    if (st == UCS_OK)
        st = ucp_worker_get_address(ux.worker, &ux.addr, &ux.addrlen);
    if (st != UCS_OK) {
        snprintf(ux.why, sizeof ux.why, "UCX: no worker (%s)",
                 ucs_status_string(st));
        ux.err = NBCX_ERR_TRANSPORT;
        return;
    }
    if (ucp_worker_get_efd(ux.worker, &ux.efd) != UCS_OK)
        ux.efd = -1; /* progress then polls, as for MPI */
}

static uint64_t hash_of(const unsigned char *a, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ a[i]) * 1099511628211ull;
    return h;
}

/* The endpoint to the worker at addr, made on first use. */
static int endpoint(const unsigned char *addr, size_t len, ucp_ep_h *ep)
{
    uint64_t h = hash_of(addr, len);
    pthread_mutex_lock(&ux.lock);
    struct peer *p = ux.peers;
    while (p && !(p->hash == h && p->len == len &&
                  memcmp(p->addr, addr, len) == 0))
        p = p->next;
    int err = NBCX_SUCCESS;
    if (!p) {
        p = malloc(sizeof *p + len);
        ucp_ep_params_t ep_params = {
            .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
            .address = (const ucp_address_t *)addr,
        };
        ucs_status_t st = p ? ucp_ep_create(ux.worker, &ep_params, &p->ep)
                            : UCS_ERR_NO_MEMORY;
        if (st != UCS_OK) {
            free(p);
            p = NULL;
            err = nbcxi_error(st == UCS_ERR_NO_MEMORY ? NBCX_ERR_NOMEM
                                                      : NBCX_ERR_TRANSPORT,
                              "UCX: no endpoint to a peer (%s)",
                              ucs_status_string(st));
        } else {
            p->hash = h;
            p->len = len;
            memcpy(p->addr, addr, len);
            p->next = ux.peers;
            ux.peers = p;
        }
    }
    *ep = p ? p->ep : NULL;
    pthread_mutex_unlock(&ux.lock);
    return err;
}

/* ---- a communicator ---- */

struct ucx_comm {
    int rank, size;
    uint64_t ctx_bits;     /* context id, in place */
    size_t addrlen;        /* stride of addrs */
    unsigned char *addrs;  /* every rank's worker address */
    size_t *lens;          /* and its length */
    ucp_ep_h *eps;         /* per rank, NULL until the first send */
    int *nodes;            /* per rank, its node's lowest rank (node_of) */
};

static struct ucx_comm *comm_of(nbcxi_transport *t)
{
    return t->state;
}

static uint64_t tag_of(const struct ucx_comm *c, int src, int tag)
{
    return c->ctx_bits | ((uint64_t)src << TAG_BITS) | (uint64_t)tag;
}

static int ep_of(struct ucx_comm *c, int peer, ucp_ep_h *ep)
{
    if (c->eps[peer]) {
        *ep = c->eps[peer];
        return NBCX_SUCCESS;
    }
    int err = endpoint(c->addrs + (size_t)peer * c->addrlen, c->lens[peer],
                       ep);
    if (err == NBCX_SUCCESS)
        c->eps[peer] = *ep;
    return err;
}

static int error_of(ucs_status_t st)
{
    switch (st) {
    case UCS_OK: return NBCX_SUCCESS;
    case UCS_ERR_MESSAGE_TRUNCATED: return NBCX_ERR_TRUNCATE;
    case UCS_ERR_NO_MEMORY: return NBCX_ERR_NOMEM;
    default: return NBCX_ERR_TRANSPORT;
    }
}

/* ---- requests ----
 *
 * A request slot (the executor's, moved around by memcpy: UCX never
 * holds its address) has the UCX request in flight and, for a staged
 * (non-contiguous) or persistent operation, the operation's record. A
 * persistent operation's record is made once by send_init/recv_init and
 * reused by every start; a plain staged one lives until it completes. */

struct op {
    bool send, persistent;
    bool orphan;           /* freed while UCX may still use tmp: leak it */
    void *buf;
    int count;
    struct nbcx_datatype_s *type;
    int peer, tag;
    void *tmp;             /* staging, count * size bytes, or NULL */
    size_t len;            /* bytes received (completed at post) */
};

struct slot {
    void *ucp;             /* UCX request in flight, or NULL */
    struct op *op;         /* NULL: plain contiguous */
    int status;            /* done at post: its nbcx result */
    bool recv;
    bool posted_done;      /* completed when posted */
};
_Static_assert(sizeof(struct slot) <= 32, "a small slot");

static bool staged(const struct nbcx_datatype_s *type)
{
    return !type->contiguous;
}

/* The result of a finished request: for a staged receive, unpacks the
 * len bytes received. */
static int complete(struct slot *s, int err, size_t len)
{
    struct op *op = s->op;
    if (op && op->tmp && !op->send && err == NBCX_SUCCESS) {
        size_t esz = op->type->size;
        if (esz && len % esz)
            err = NBCX_ERR_TRUNCATE; /* not whole elements: a mismatch */
        else if (esz)
            err = nbcxi_type_unpack(op->tmp, (int)(len / esz), op->type,
                                    op->buf);
    }
    if (op && !op->persistent) {
        free(op->tmp);
        free(op);
    }
    s->op = NULL;
    s->ucp = NULL;
    return err;
}

/* Posts one operation into slot s (op: its record or NULL). */
static int post(nbcxi_transport *t, struct slot *s, struct op *op, bool send,
                void *buf, int count, struct nbcx_datatype_s *type, int peer,
                int tag)
{
    struct ucx_comm *c = comm_of(t);
    size_t bytes = (size_t)count * type->size;
    void *data = buf;
    memset(s, 0, sizeof *s);
    s->recv = !send;
    if (staged(type) && bytes) {
        if (!op) {
            op = calloc(1, sizeof *op);
            if (!op)
                return NBCX_ERR_NOMEM;
            op->send = send;
            op->buf = buf;
            op->count = count;
            op->type = type;
        }
        if (!op->tmp && !(op->tmp = malloc(bytes))) {
            if (!op->persistent)
                free(op);
            return NBCX_ERR_NOMEM;
        }
        data = op->tmp;
        if (send) {
            int err = nbcxi_type_pack(buf, count, type, data);
            if (err != NBCX_SUCCESS) {
                s->op = op;
                complete(s, err, 0);
                return err;
            }
        }
    }
    s->op = op;
    ucp_tag_recv_info_t info = { 0 };
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(1),
    };
    ucs_status_ptr_t r;
    if (send) {
        ucp_ep_h ep = NULL;
        int err = ep_of(c, peer, &ep);
        if (err != NBCX_SUCCESS) {
            complete(s, err, 0);
            return err;
        }
        r = ucp_tag_send_nbx(ep, data, bytes, tag_of(c, c->rank, tag), &p);
    } else {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_RECV_INFO;
        p.recv_info.tag_info = &info;
        /* UCX 1.13 leaves info.length unset when a receive completes at
         * once; a staged one needs it (to unpack what came). */
        if (data != buf)
            p.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
        r = ucp_tag_recv_nbx(ux.worker, data, bytes, tag_of(c, peer, tag),
                             UINT64_MAX, &p);
    }
    if (UCS_PTR_IS_ERR(r)) {
        int err = error_of(UCS_PTR_STATUS(r));
        complete(s, err, 0);
        return nbcxi_error(err, "UCX: %s to rank %d failed (%s)",
                           send ? "send" : "receive", peer,
                           ucs_status_string(UCS_PTR_STATUS(r)));
    }
    if (r == NULL) { /* done already */
        s->posted_done = true;
        s->status = complete(s, NBCX_SUCCESS, info.length);
        return NBCX_SUCCESS;
    }
    s->ucp = r;
    return NBCX_SUCCESS;
}

static int ucx_isend(nbcxi_transport *t, const void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return post(t, req, NULL, true, (void *)buf, count, type, peer, tag);
}

static int ucx_irecv(nbcxi_transport *t, void *buf, int count,
                     struct nbcx_datatype_s *type, int peer, int tag,
                     void *req)
{
    return post(t, req, NULL, false, buf, count, type, peer, tag);
}

/* Whether slot s is finished; *err gets its result. Releases its UCX
 * request. */
static bool finished(struct slot *s, int *err)
{
    if (s->posted_done) {
        *err = s->status;
        s->posted_done = false;
        s->op = NULL;
        return true;
    }
    ucs_status_t st;
    size_t len = 0;
    if (s->recv) {
        ucp_tag_recv_info_t info;
        st = ucp_tag_recv_request_test(s->ucp, &info);
        len = info.length;
    } else {
        st = ucp_request_check_status(s->ucp);
    }
    if (st == UCS_INPROGRESS)
        return false;
    ucp_request_free(s->ucp);
    *err = complete(s, error_of(st), len);
    return true;
}

static int ucx_testsome(nbcxi_transport *t, int n, void *reqs, int *ndone,
                        int *idx)
{
    (void)t;
    for (int k = 0; k < 64 && ucp_worker_progress(ux.worker); k++)
        ;
    struct slot *s = reqs;
    int out = 0, first = NBCX_SUCCESS;
    for (int i = 0; i < n; i++) {
        int err;
        if (!finished(&s[i], &err))
            continue;
        idx[out++] = i;
        if (first == NBCX_SUCCESS && err != NBCX_SUCCESS)
            first = err;
    }
    *ndone = out;
    return first;
}

/* Cancels a request in flight and waits (a little) for UCX to let go of
 * its buffer; a send that does not finish by then keeps its staging
 * buffer, leaked (error paths only). */
static void cancel_slot(struct slot *s)
{
    if (s->posted_done || !s->ucp) {
        s->posted_done = false;
        return;
    }
    ucp_request_cancel(ux.worker, s->ucp);
    for (int k = 0; k < SPIN_CANCEL &&
                    ucp_request_check_status(s->ucp) == UCS_INPROGRESS; k++)
        ucp_worker_progress(ux.worker);
    if (ucp_request_check_status(s->ucp) == UCS_INPROGRESS && s->op)
        s->op->orphan = true;
    ucp_request_free(s->ucp);
    s->ucp = NULL;
}

static void ucx_cancel(nbcxi_transport *t, void *req)
{
    (void)t;
    struct slot *s = req;
    cancel_slot(s);
    if (s->op && !s->op->orphan) {
        free(s->op->tmp);
        free(s->op);
    }
    s->op = NULL;
}

/* ---- persistent operations: the record is made once ---- */

static int prepare(nbcxi_transport *t, bool send, void *buf, int count,
                   struct nbcx_datatype_s *type, int peer, int tag, void *req)
{
    (void)t;
    struct op *op = calloc(1, sizeof *op);
    if (!op)
        return NBCX_ERR_NOMEM;
    *op = (struct op){ .send = send, .persistent = true, .buf = buf,
                       .count = count, .type = type, .peer = peer,
                       .tag = tag };
    size_t bytes = (size_t)count * type->size;
    if (staged(type) && bytes && !(op->tmp = malloc(bytes))) {
        free(op);
        return NBCX_ERR_NOMEM;
    }
    struct slot *s = req;
    memset(s, 0, sizeof *s);
    s->op = op;
    s->recv = !send;
    return NBCX_SUCCESS;
}

static int ucx_send_init(nbcxi_transport *t, const void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return prepare(t, true, (void *)buf, count, type, peer, tag, req);
}

static int ucx_recv_init(nbcxi_transport *t, void *buf, int count,
                         struct nbcx_datatype_s *type, int peer, int tag,
                         void *req)
{
    return prepare(t, false, buf, count, type, peer, tag, req);
}

static int ucx_start(nbcxi_transport *t, int n, void *reqs)
{
    struct slot *s = reqs;
    for (int i = 0; i < n; i++) {
        struct op *op = s[i].op;
        int err = post(t, &s[i], op, op->send, op->buf, op->count, op->type,
                       op->peer, op->tag);
        if (err != NBCX_SUCCESS) {
            /* All or none (MPI_Startall): the executor counts none of
             * them as started. */
            s[i].op = op;
            while (--i >= 0)
                cancel_slot(&s[i]);
            return err;
        }
    }
    return NBCX_SUCCESS;
}

static void ucx_cancel_prepared(nbcxi_transport *t, void *req)
{
    (void)t;
    cancel_slot(req);
}

static void ucx_free_prepared(nbcxi_transport *t, void *req)
{
    (void)t;
    struct slot *s = req;
    if (s->op && !s->op->orphan) {
        free(s->op->tmp);
        free(s->op);
    }
    s->op = NULL;
}

/* ---- sleeping on events ---- */

static int ucx_event_fd(nbcxi_transport *t)
{
    (void)t;
    return ux.efd;
}

static int ucx_arm(nbcxi_transport *t)
{
    (void)t;
    if (ux.efd < 0)
        return -1;
    if (ucp_worker_progress(ux.worker))
        return 1; /* something moved: test before sleeping */
    ucs_status_t st = ucp_worker_arm(ux.worker);
    return st == UCS_OK ? 0 : st == UCS_ERR_BUSY ? 1 : -1;
}

static void ucx_describe(char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    char lazy[48] = "";
    if (ux.lazy_max)
        snprintf(lazy, sizeof lazy, ";lazy_max=%zu", ux.lazy_max);
    if (ux.worker)
        snprintf(buf, len, "ucx(tls=%s%s%s%s)", ux.tls, ux.set, lazy,
                 ux.efd >= 0 ? "" : ", no event fd");
}

/* ---- creation and destruction ---- */

static void ucx_destroy(nbcxi_transport *t)
{
    struct ucx_comm *c = comm_of(t);
    if (c) { /* endpoints stay: other communicators may use them */
        free(c->addrs);
        free(c->lens);
        free(c->eps);
        free(c->nodes);
        free(c);
    }
    free(t);
}

static int ucx_create(const struct nbcxi_bootstrap *b, nbcxi_transport **out);

static int ucx_node_of(const nbcxi_transport *t, int r)
{
    return comm_of((nbcxi_transport *)t)->nodes[r];
}

const struct nbcxi_transport_ops nbcxi_ucx_ops = {
    .name = "ucx",
    .req_size = sizeof(struct slot),
    .isend = ucx_isend,
    .irecv = ucx_irecv,
    .testsome = ucx_testsome,
    .cancel = ucx_cancel,
    .destroy = ucx_destroy,
    .send_init = ucx_send_init,
    .recv_init = ucx_recv_init,
    .start = ucx_start,
    .cancel_prepared = ucx_cancel_prepared,
    .free_prepared = ucx_free_prepared,
    .create = ucx_create,
    .event_fd = ucx_event_fd,
    .arm = ucx_arm,
    .describe = ucx_describe,
    .caps = NBCXI_CAP_WAKES | NBCXI_CAP_PROGRESS_THREAD,
    .node_of = ucx_node_of,
    .carries_max = ucx_lazy_max,
    /* 256 KiB fragments. Every UCX message costs the progress thread more
     * than an MPI one: a ring allreduce of 1-4 MiB in 64 KiB fragments
     * took 10-11 % progress CPU and overlapped 58-63 % in thread mode on
     * the emulated 1 Gbit/s network, in 256 KiB fragments 5-6 % and
     * 70-74 %, level with the MPI transport's 4-6 % and 71-74 % (medians
     * of 3 sittings, docs/results/ucx, session 12). UCX's own rendezvous
     * threshold is not the cause: 64 KiB fragments sent eagerly
     * (NBCX_UCX_RNDV_THRESH=128k) did as badly. On shared memory 256 KiB
     * was as fast (within the sittings' range) or faster at every size
     * measured. */
    .segsize = 256 * 1024,
};

/* What each rank tells the others first. */
struct hello {
    uint32_t ctx;       /* the context id it proposes */
    uint32_t pad;
    uint64_t addrlen;
    uint64_t host;      /* its host (host_id) */
};

/* This host, as a 64-bit FNV-1a hash of its name and its kernel's boot
 * id (two machines with one name, containers of one kernel: the boot id
 * tells the first apart and keeps the second together, which share
 * memory). A collision of two hosts' hashes would put them on one node:
 * the node-aware algorithms would be slower there, not wrong. */
static uint64_t host_id(void)
{
    char buf[320] = { 0 };
    if (gethostname(buf, 256) != 0)
        buf[0] = '\0';
    buf[255] = '\0';
    size_t len = strlen(buf);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        len += fread(buf + len, 1, sizeof buf - len - 1, f);
        fclose(f);
    }
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
    return h;
}

struct host_rank {
    uint64_t host;
    int rank;
};

static int by_host(const void *x, const void *y)
{
    const struct host_rank *a = x, *b = y;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Each rank's node, named by its lowest rank (transport.h, node_of), from
 * the hosts of the hellos, or blocks of NBCX_NODE_RANKS ranks (tests on
 * one host); by (host, rank) order in `order`, n entries. */
static void nodes_of(const struct hello *all, int n, struct host_rank *order,
                     int *nodes)
{
    const char *v = nbcxi_getenv("NBCX_NODE_RANKS");
    char *end = NULL;
    unsigned long fake = v && *v ? strtoul(v, &end, 10) : 0;
    if (end && *end) /* (not a number: as unset; the same on all ranks) */
        fake = 0;
    if (fake > 0) {
        for (int r = 0; r < n; r++)
            nodes[r] = r - (int)((unsigned long)r % fake);
        return;
    }
    for (int r = 0; r < n; r++)
        order[r] = (struct host_rank){ all[r].host, r };
    qsort(order, (size_t)n, sizeof *order, by_host);
    for (int i = 0, lead = 0; i < n; i++) { /* a host's first: lowest */
        if (i == 0 || order[i].host != order[i - 1].host)
            lead = order[i].rank;
        nodes[order[i].rank] = lead;
    }
}

/* After a member's local step (ok: it succeeded; what: what failed
 * there), all go on or all stop (transport.h). Returns NBCX_SUCCESS to
 * go on, or this member's error. */
static int all_ok(const struct nbcxi_bootstrap *b, bool ok, int local_err,
                  const char *what)
{
    int bad, err = b->first_failed(b->ctx, ok, &bad);
    if (err != NBCX_SUCCESS || bad < 0)
        return err;
    if (!ok)
        return local_err == NBCX_ERR_NOMEM
                   ? NBCX_ERR_NOMEM
                   : nbcxi_error(local_err, "NBCX_TRANSPORT=ucx: %s", what);
    return nbcxi_error(NBCX_ERR_TRANSPORT, "NBCX_TRANSPORT=ucx: rank %d "
                       "could not %s (see its error there)", bad,
                       local_err == NBCX_ERR_NOMEM
                           ? "allocate what the UCX transport needs"
                           : "start UCX");
}

static int ucx_create(const struct nbcxi_bootstrap *b, nbcxi_transport **out)
{
    *out = NULL;
    pthread_once(&ux.once, init_once);
    int n = b->size;
    struct hello mine = { .addrlen = ux.addrlen, .host = host_id() };
    pthread_mutex_lock(&ux.lock);
    mine.ctx = ux.next_ctx;
    pthread_mutex_unlock(&ux.lock);
    bool up = ux.err == NBCX_SUCCESS && n < (1 << RANK_BITS);
    struct hello *all = calloc((size_t)n, sizeof *all);
    int err = all_ok(b, up && all, up ? NBCX_ERR_NOMEM : NBCX_ERR_TRANSPORT,
                     ux.err ? ux.why
                            : "too many ranks for UCX tags (2^20 at most)");
    if (err == NBCX_SUCCESS)
        err = b->allgather(b->ctx, &mine, sizeof mine, all);
    if (err != NBCX_SUCCESS) {
        free(all);
        return err;
    }
    uint32_t ctx = 0;
    size_t maxlen = 0;
    for (int i = 0; i < n; i++) {
        ctx = all[i].ctx > ctx ? all[i].ctx : ctx;
        maxlen = all[i].addrlen > maxlen ? (size_t)all[i].addrlen : maxlen;
    }
    if (ctx >= (1u << CTX_BITS)) { /* (every member sees the same) */
        free(all);
        return nbcxi_error(NBCX_ERR_TRANSPORT, "NBCX_TRANSPORT=ucx: this "
                           "process has made %u UCX communicators, the most "
                           "its tags can tell apart", 1u << CTX_BITS);
    }

    /* Every worker address, padded to the longest (the true lengths are
     * in the hellos: an endpoint is found by its peer's true address). */
    size_t stride = maxlen ? maxlen : 1;
    unsigned char *pad = calloc(1, stride);
    unsigned char *addrs = calloc((size_t)n, stride);
    nbcxi_transport *t = calloc(1, sizeof *t);
    struct ucx_comm *c = calloc(1, sizeof *c);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    ucp_ep_h *eps = calloc((size_t)n, sizeof *eps);
    int *nodes = malloc(sizeof(int) * (size_t)n);
    struct host_rank *order = malloc(sizeof *order * (size_t)n);
    err = all_ok(b, pad && addrs && t && c && lens && eps && nodes && order,
                 NBCX_ERR_NOMEM, "");
    if (err == NBCX_SUCCESS) {
        nodes_of(all, n, order, nodes);
        memcpy(pad, ux.addr, ux.addrlen);
        err = b->allgather(b->ctx, pad, maxlen, addrs);
    }
    free(order);
    for (int i = 0; lens && i < n; i++)
        lens[i] = (size_t)all[i].addrlen;
    free(pad);
    free(all);
    if (err != NBCX_SUCCESS) {
        free(addrs);
        free(lens);
        free(eps);
        free(nodes);
        free(c);
        free(t);
        return err;
    }
    pthread_mutex_lock(&ux.lock);
    if (ux.next_ctx < ctx + 1)
        ux.next_ctx = ctx + 1;
    pthread_mutex_unlock(&ux.lock);
    c->addrs = addrs;
    c->lens = lens;
    c->eps = eps;
    c->nodes = nodes;
    for (int r = 0; r < n; r++)
        t->nnodes += nodes[r] == r;
    c->rank = b->rank;
    c->size = n;
    c->addrlen = maxlen;
    c->ctx_bits = (uint64_t)ctx << (RANK_BITS + TAG_BITS);
    t->ops = &nbcxi_ucx_ops;
    t->state = c;
    t->tag_ub = (1 << TAG_BITS) - 1;
    *out = t;
    return NBCX_SUCCESS;
}
