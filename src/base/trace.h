/*
 * trace.h - the trace recorder (trace.c): NBCX_TRACE=DIR writes one
 * Chrome Trace Event file per process, DIR/nbcx-trace.<rank>.json (MPI:
 * the rank in MPI_COMM_WORLD) or DIR/nbcx-trace.p<pid>.json (no rank
 * known: thread ranks, the simulator), read by tools/trace/nbcx-trace
 * and by Perfetto (docs/observability.md).
 *
 * Off, every hook is one predictable branch on nbcxi_trace_on, a global
 * set once when libnbcx is loaded. On, each recording thread (the
 * application threads that call nbcx, the progress thread) appends
 * fixed-size events to its own buffer of NBCXI_TRACE_EVENTS events,
 * written out when full, when the thread ends, at MPI_Finalize and at
 * exit: memory is bounded by NBCXI_TRACE_EVENTS * sizeof(struct
 * nbcxi_trace_ev) per recording thread (4,096 x 80 B = 320 KiB).
 *
 * What is recorded, by the layer that knows it:
 *   - the application's time inside nbcx: each start (progress/
 *     request.c: activate), test and wait (request.c), with the schedule
 *     nodes the call ran itself;
 *   - each collective from its start to its completion (request.c:
 *     finish notes the completion, retire writes the slice): operation,
 *     algorithm, bytes, communicator, call site, time exposed in the
 *     application's tests and waits, progress-thread CPU spent on it;
 *   - the progress thread's passes that ran something (progress/
 *     progress_thread.c), with the nodes run (sched/executor.c), and its sleeps,
 *     consecutive ones merged into one "idle" slice.
 */
#ifndef NBCX_TRACE_H
#define NBCX_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NBCXI_TRACE_HIDDEN __attribute__((visibility("hidden")))
#define NBCXI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define NBCXI_TRACE_HIDDEN
#define NBCXI_UNLIKELY(x) (x)
#endif

enum { NBCXI_TRACE_EVENTS = 4096 };

/* Kinds of schedule nodes counted (the executor maps its own). */
enum { NBCXI_TRACE_SEND, NBCXI_TRACE_RECV, NBCXI_TRACE_REDUCE,
       NBCXI_TRACE_COPY, NBCXI_TRACE_OTHER, NBCXI_TRACE_NKINDS };

/* A collective as the trace sees it (filled by the progress layer). */
struct nbcxi_trace_op {
    const char *op, *alg;   /* static strings */
    uint64_t bytes;
    const void *comm;
    int rank, size;         /* in that communicator */
};

/* What a request carries for the trace (struct nbcx_request_s). */
struct nbcxi_trace_req {
    int64_t t0, done;       /* start, completion (ns) */
    int64_t exposed, cpu;   /* ns in the application's waits; progress */
    uintptr_t site;         /* return address into the caller */
    void *owner;            /* the starting thread's lanes */
    int lane;
};

extern NBCXI_TRACE_HIDDEN bool nbcxi_trace_on;

/* The clock, when tracing; 0 (and no clock read) when off. */
NBCXI_TRACE_HIDDEN int64_t nbcxi_trace_clock(void);
static inline int64_t nbcxi_trace_now(void)
{
    return NBCXI_UNLIKELY(nbcxi_trace_on) ? nbcxi_trace_clock() : 0;
}

/* The progress thread spent the time since t0 on an operation. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_cpu(struct nbcxi_trace_req *tr,
                                        int64_t t0);
/* The current application call (a test) leaves tr's operation pending:
 * its time so far was exposed. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_pending(struct nbcxi_trace_req *tr);
/* A public start function was called from ra (its return address): the
 * call site of the operation it starts, unless ra is nbcx's own code (a
 * public function calling another, the shim), when the start looks for
 * it on the stack (backtrace). NBCXI_TRACE_CALLER() in each. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_site(void *ra);
#define NBCXI_TRACE_CALLER()                                                  \
    NBCXI_TRACE(nbcxi_trace_site(__builtin_return_address(0)))
/* An application call into nbcx begins (test, wait, start). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_enter(void);
/* ... and ends: its slice, named `what` (static). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_leave(const char *what);
/* A start begins (before the operation is visible to other threads):
 * fills tr, from nbcxi_trace_enter's time (or the end of the previous
 * start of the same call). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_starting(struct nbcxi_trace_req *tr,
                                             const struct nbcxi_trace_op *op);
/* ... and has returned: its slice. Touches only what the owner does. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_started(struct nbcxi_trace_req *tr,
                                            const struct nbcxi_trace_op *op);
/* A completed operation is reported to the application: its slice. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_retired(struct nbcxi_trace_req *tr,
                                            const struct nbcxi_trace_op *op);
/* A node of kind k (NBCXI_TRACE_*) run by this thread. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_node(int k);
/* The progress thread: a pass from t0 that finished `advanced` nodes
 * (none: no slice), a sleep from t0 (woken by a transport event or not). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_pass(int64_t t0, long advanced);
NBCXI_TRACE_HIDDEN void nbcxi_trace_sleep(int64_t t0, bool event);
/* This thread is the progress thread (names its track). */
/* The calling thread is the progress thread; shares_core: it has no core
 * of its own (placement), so its work delays the application's
 * computation (the trailer's progress_shares_core: nbcx-trace's net
 * hidden share). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_progress_thread(bool shares_core);
/* The process's rank (MPI_COMM_WORLD) and the end of a barrier over the
 * first communicator made from MPI, ns: the clock-sync record. */
NBCXI_TRACE_HIDDEN void nbcxi_trace_sync(int rank, int size, int64_t t);
/* Writes every buffer out (MPI_Finalize; also at exit). */
NBCXI_TRACE_HIDDEN void nbcxi_trace_flush(void);

/* One-line hooks: nothing but the branch when tracing is off. */
#define NBCXI_TRACE(call)                                                     \
    do {                                                                      \
        if (NBCXI_UNLIKELY(nbcxi_trace_on))                                   \
            call;                                                             \
    } while (0)

#endif /* NBCX_TRACE_H */
