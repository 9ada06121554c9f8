/*
 * test_errors.c - bad input is rejected cleanly.
 *
 * Every class of bad argument documented in nbcx.h must make the call
 *   - return the documented error code (where nbcx.h names one; where it
 *     does not, any error),
 *   - with a non-empty message from nbcx_error_string(),
 *   - set *req to NBCX_REQUEST_NULL,
 *   - and post nothing.
 * "Posts nothing" is checked by making the bad calls on some ranks only
 * (all but the last): a bad call that had posted a message, or taken a
 * sequence number of the communicator, would make the correct collectives
 * that follow mismatch or hang (the watchdog reports a hang with the step
 * it happened in). "Leaks nothing" is checked by LeakSanitizer when the
 * tests run in a sanitizer build, so everything here is freed.
 *
 * nbcx_progress_set/get are checked too (test_progress_modes): invalid
 * modes, a change while an operation is outstanding, every mode in turn.
 *
 * Only what MPI and nbcx.h specify is asserted: e.g. NBCX_IN_PLACE is
 * tested only where MPI forbids MPI_IN_PLACE, and arguments MPI declares
 * insignificant on a rank (the receive buffer of reduce on a non-root...)
 * are never used to provoke errors.
 */
#include <stdbool.h>

#include "mpitest.h"

#define ANY_ERROR (-1)                     /* no specific code promised */
#define POISON ((nbcx_request)(uintptr_t)0x10) /* "not yet written"     */

/* Checks a rejected call. If a collective was accepted after all, it may
 * have posted messages the other ranks will never match: stop the job. */
static void check_rejected(int line, const char *text, int expect, int rc,
                           const nbcx_request *req, bool fatal_if_accepted)
{
    const char *msg = nbcx_error_string(rc);
    if (rc == NBCX_SUCCESS) {
        mt_fail("line %d: %s was accepted, expected %s", line, text,
                expect == ANY_ERROR ? "an error" : nbcx_error_string(expect));
        if (fatal_if_accepted) {
            fprintf(stderr, "[rank %d] cannot continue after an accepted "
                            "bad collective\n", mt_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        return;
    }
    if (expect != ANY_ERROR && rc != expect)
        mt_fail("line %d: %s returned %d (%s), expected %d (%s)", line, text,
                rc, msg ? msg : "(null)", expect, nbcx_error_string(expect));
    if (!msg || !*msg)
        mt_fail("line %d: %s: no message for error %d", line, text, rc);
    if (req && *req != NBCX_REQUEST_NULL)
        mt_fail("line %d: %s: *req not set to NBCX_REQUEST_NULL", line, text);
}

/* A collective that must be rejected; req must come back NULL. */
#define REJECT(expect, call)                                               \
    do {                                                                   \
        req = POISON;                                                      \
        int rc_ = (call);                                                  \
        check_rejected(__LINE__, #call, (expect), rc_, &req, true);        \
    } while (0)

/* The same for a collective called without a request pointer. */
#define REJECT_NOREQ(expect, call)                                         \
    check_rejected(__LINE__, #call, (expect), (call), NULL, true)

/* A local call (no communication) that must be rejected. */
#define REJECT_LOCAL(expect, call)                                         \
    check_rejected(__LINE__, #call, (expect), (call), NULL, false)

#define BUFN 256
static int a[BUFN], b[BUFN];
static double d[4], e[4];
static char ch[4], ch2[4];

/* ------------------------------------------------------------------ */

static void test_error_strings(void)
{
    for (int err = 0; err < NBCX_ERR_LASTCODE; err++) {
        const char *s = nbcx_error_string(err);
        if (!s || !*s) {
            mt_fail("nbcx_error_string(%d) is empty", err);
            continue;
        }
        for (int other = 0; other < err; other++)
            if (strcmp(s, nbcx_error_string(other)) == 0)
                mt_fail("errors %d and %d share the message \"%s\"", other,
                        err, s);
        if ((nbcx_error_to_mpi(err) == MPI_SUCCESS) != (err == NBCX_SUCCESS))
            mt_fail("nbcx_error_to_mpi(%d) = %d", err, nbcx_error_to_mpi(err));
    }
    const int bogus[] = {-1, NBCX_ERR_LASTCODE, 12345};
    for (int i = 0; i < 3; i++) {
        const char *s = nbcx_error_string(bogus[i]);
        if (!s || !*s)
            mt_fail("nbcx_error_string(%d) is empty", bogus[i]);
    }
}

/* The MPI face maps predefined types and operations to nbcx's own. */
static void test_mpi_face(nbcx_comm comm)
{
    nbcx_datatype t = NBCX_DATATYPE_NULL;
    nbcx_op o = NBCX_OP_NULL;
    const char *name = NULL;

    MT_OK(nbcx_datatype_from_mpi(MPI_INT, &t));
    if (t != NBCX_INT32)
        mt_fail("MPI_INT does not map to NBCX_INT32");
    MT_OK(nbcx_datatype_from_mpi(MPI_DOUBLE_INT, &t));
    if (t != NBCX_DOUBLE_INT)
        mt_fail("MPI_DOUBLE_INT does not map to NBCX_DOUBLE_INT");
    MT_OK(nbcx_datatype_free(&t));
    if (t != NBCX_DATATYPE_NULL)
        mt_fail("nbcx_datatype_free did not reset a built-in handle");
    MT_OK(nbcx_op_from_mpi(MPI_SUM, &o));
    if (o != NBCX_SUM)
        mt_fail("MPI_SUM does not map to NBCX_SUM");
    MT_OK(nbcx_op_free(&o));
    MT_OK(nbcx_comm_transport(comm, &name));
    if (!name || strcmp(name, "mpi") != 0)
        mt_fail("transport of an MPI communicator is \"%s\"",
                name ? name : "(null)");
}

static int dummy_fn(void *arg)
{
    *(int *)arg += 1;
    return NBCX_SUCCESS;
}

static void dummy_op(const void *in, void *inout, int count,
                     nbcx_datatype type, void *ctx)
{
    (void)in, (void)inout, (void)count, (void)type, (void)ctx;
}

/* ------------------------------------------------------------------ */
/* Progress modes (on every rank)                                      */
/* ------------------------------------------------------------------ */

static void expect_mode(nbcx_progress_mode want, const char *when)
{
    nbcx_progress_mode m = (nbcx_progress_mode)0;
    MT_OK(nbcx_progress_get(&m));
    if (m != want)
        mt_fail("%s: nbcx_progress_get gives %s (%d), expected %s", when,
                mt_mode_name(m), (int)m, mt_mode_name(want));
}

/* nbcx_info names the mode as the word "progress=MODE". */
static void expect_info(nbcx_progress_mode m)
{
    char info[2048] = "", word[32];
    const char *at;
    size_t n = (size_t)snprintf(word, sizeof word, "progress=%s",
                                mt_mode_name(m));
    MT_OK(nbcx_info(info, sizeof info));
    at = strstr(info, word);
    if (!at || (at > info && at[-1] != ' ') ||
        (at[n] != '\0' && at[n] != ' '))
        mt_fail("nbcx_info in %s mode does not say \"%s\": \"%s\"",
                mt_mode_name(m), word, info);
}

/* A small collective in the current mode, checked against MPI. */
static void mode_works(nbcx_comm comm, nbcx_progress_mode m)
{
    int in[3] = {mt_rank, 2 * mt_rank + 1, -mt_rank}, out[3], ref[3];
    nbcx_request req = NBCX_REQUEST_NULL;
    MT_OK(nbcx_iallreduce(in, out, 3, NBCX_INT32, NBCX_SUM, comm, &req));
    MT_OK(nbcx_wait(&req));
    MPI_Allreduce(in, ref, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (memcmp(out, ref, sizeof out) != 0)
        mt_fail("iallreduce after switching to %s mode: %d %d %d, MPI says "
                "%d %d %d", mt_mode_name(m), out[0], out[1], out[2], ref[0],
                ref[1], ref[2]);
}

/* Tries every mode while an operation is outstanding: all refused with
 * NBCX_ERR_REQUEST, and the mode stays. */
static void refuse_while_outstanding(nbcx_progress_mode mode,
                                     const char *when)
{
    for (int m = NBCX_PROGRESS_CALLER; m <= NBCX_PROGRESS_AUTO; m++) {
        int rc = nbcx_progress_set((nbcx_progress_mode)m);
        if (rc != NBCX_ERR_REQUEST)
            mt_fail("%s: nbcx_progress_set(%s) returned %d (%s), expected "
                    "NBCX_ERR_REQUEST", when, mt_mode_name(m), rc,
                    nbcx_error_string(rc));
        expect_mode(mode, when);
    }
}

/*
 * nbcx_progress_set/get: invalid modes are NBCX_ERR_ARG; a change with an
 * operation outstanding is NBCX_ERR_REQUEST and changes nothing; every
 * mode can be set (thread and split only under MPI_THREAD_MULTIPLE, else
 * NBCX_ERR_TRANSPORT), is reported by nbcx_info and works; the mode of
 * the environment is restored at the end for the tests that follow.
 *
 * "Outstanding" must hold for sure, whatever the progress thread does, so
 * the operations used cannot complete at the time of the check: an
 * ibarrier completes nowhere before every rank has started it. Ranks
 * 1..p-1 start barrier B1 and check while rank 0 has not started it (it
 * waits in MPI_Barrier for them); then rank 0 starts B1 and B2 and checks
 * while the others have not started B2 (they wait in a second
 * MPI_Barrier for it). On one rank a barrier may complete at once, so
 * only the other checks are made there.
 */
static void test_progress_modes(nbcx_comm comm)
{
    const nbcx_progress_mode env_mode = mt_mode;
    const bool multiple = mt_thread_level == MPI_THREAD_MULTIPLE;
    const int bogus[] = {0, -1, NBCX_PROGRESS_AUTO + 1, 1000};
    nbcx_progress_mode m;
    nbcx_request reqs[2] = {NBCX_REQUEST_NULL, NBCX_REQUEST_NULL};
    int rc;

    mt_watch("progress modes: invalid arguments");
    expect_mode(env_mode, "start");
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_progress_get(NULL));
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        rc = nbcx_progress_set((nbcx_progress_mode)bogus[i]);
        if (rc != NBCX_ERR_ARG)
            mt_fail("nbcx_progress_set(%d) returned %d (%s), expected "
                    "NBCX_ERR_ARG", bogus[i], rc, nbcx_error_string(rc));
        expect_mode(env_mode, "after an invalid nbcx_progress_set");
    }
    expect_info(env_mode);

    mt_watch("progress modes: change refused while an operation is "
             "outstanding");
    if (mt_size > 1) {
        if (mt_rank != 0) {
            MT_OK(nbcx_ibarrier(comm, &reqs[0]));
            refuse_while_outstanding(env_mode, "barrier not yet started "
                                               "by rank 0");
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            MT_OK(nbcx_ibarrier(comm, &reqs[1]));
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            MT_OK(nbcx_ibarrier(comm, &reqs[0]));
            MT_OK(nbcx_ibarrier(comm, &reqs[1]));
            refuse_while_outstanding(env_mode, "barrier not yet started "
                                               "by the other ranks");
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MT_OK(nbcx_waitall(2, reqs));
    }

    /* Every mode in turn, from every mode (caller -> thread -> split ->
     * caller -> split -> thread -> auto -> caller -> auto -> split -> auto
     * -> thread), then back to the initial one. */
    static const nbcx_progress_mode order[] = {
        NBCX_PROGRESS_CALLER, NBCX_PROGRESS_THREAD, NBCX_PROGRESS_SPLIT,
        NBCX_PROGRESS_CALLER, NBCX_PROGRESS_SPLIT, NBCX_PROGRESS_THREAD,
        NBCX_PROGRESS_AUTO, NBCX_PROGRESS_CALLER, NBCX_PROGRESS_AUTO,
        NBCX_PROGRESS_SPLIT, NBCX_PROGRESS_AUTO, NBCX_PROGRESS_THREAD};
    m = NBCX_PROGRESS_CALLER;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        mt_watch("progress modes: switching to %s", mt_mode_name(order[i]));
        rc = nbcx_progress_set(order[i]);
        if (order[i] != NBCX_PROGRESS_CALLER && !multiple) {
            if (rc != NBCX_ERR_TRANSPORT)
                mt_fail("nbcx_progress_set(%s) without "
                        "MPI_THREAD_MULTIPLE returned %d (%s), expected "
                        "NBCX_ERR_TRANSPORT", mt_mode_name(order[i]), rc,
                        nbcx_error_string(rc));
            continue;
        }
        if (rc != NBCX_SUCCESS) {
            mt_fail("nbcx_progress_set(%s) returned %d (%s)",
                    mt_mode_name(order[i]), rc, nbcx_error_string(rc));
            continue;
        }
        m = order[i];
        expect_mode(m, "after nbcx_progress_set");
        expect_info(m);
        mode_works(comm, m);
    }
    mt_watch("progress modes: back to %s", mt_mode_name(env_mode));
    MT_OK(nbcx_progress_set(env_mode));
    expect_mode(env_mode, "back to the initial mode");
    mt_unwatch();
}

/* ------------------------------------------------------------------ */
/* The bad calls (made on some ranks only)                             */
/* ------------------------------------------------------------------ */

static void test_bad_collectives(nbcx_comm comm, nbcx_comm freed,
                                 nbcx_datatype freed_type, nbcx_op freed_op)
{
    const int p = mt_size, me = mt_rank;
    const int other = (me + 1) % p; /* a root that is not me (if p > 1) */
    const nbcx_datatype I = NBCX_INT32, DT0 = NBCX_DATATYPE_NULL;
    nbcx_request req = NBCX_REQUEST_NULL;

    mt_watch("bad collectives");

    /* null and freed communicators */
    REJECT(NBCX_ERR_COMM, nbcx_ibarrier(NBCX_COMM_NULL, &req));
    REJECT(NBCX_ERR_COMM, nbcx_iallreduce(a, b, 1, I, NBCX_SUM,
                                          NBCX_COMM_NULL, &req));
    REJECT(NBCX_ERR_COMM, nbcx_ibcast(a, 1, I, 0, freed, &req));
    REJECT(NBCX_ERR_COMM, nbcx_ialltoall(a, 1, I, b, 1, I, freed, &req));

    /* negative counts */
    REJECT(NBCX_ERR_COUNT, nbcx_ibcast(a, -1, I, 0, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ireduce(a, b, -1, I, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iallreduce(a, b, -1, I, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igather(a, -1, I, b, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_igather(a, 1, I, b, -1, I, me, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscatter(a, -1, I, b, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iscatter(a, 1, I, b, -1, I, me, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iallgather(a, -1, I, b, 1, I, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_iallgather(a, 1, I, b, -1, I, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoall(a, -1, I, b, 1, I, comm, &req));
    REJECT(NBCX_ERR_COUNT, nbcx_ialltoall(a, 1, I, b, -1, I, comm, &req));

    /* invalid roots */
    const int bad_roots[2] = {-1, p};
    for (int k = 0; k < 2; k++) {
        int root = bad_roots[k];
        REJECT(NBCX_ERR_ROOT, nbcx_ibcast(a, 1, I, root, comm, &req));
        REJECT(NBCX_ERR_ROOT,
               nbcx_ireduce(a, b, 1, I, NBCX_SUM, root, comm, &req));
        REJECT(NBCX_ERR_ROOT,
               nbcx_igather(a, 1, I, b, 1, I, root, comm, &req));
        REJECT(NBCX_ERR_ROOT,
               nbcx_iscatter(a, 1, I, b, 1, I, root, comm, &req));
    }

    /* null buffers with nonzero counts (significant buffers only) */
    REJECT(NBCX_ERR_BUFFER, nbcx_ibcast(NULL, 2, I, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ibcast(NULL, 2, I, other, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_ireduce(NULL, b, 2, I, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_ireduce(a, NULL, 2, I, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_iallreduce(NULL, b, 2, I, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_iallreduce(a, NULL, 2, I, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_igather(NULL, 2, I, b, 2, I, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_igather(a, 2, I, NULL, 2, I, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_iscatter(NULL, 2, I, b, 2, I, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER,
           nbcx_iscatter(a, 2, I, NULL, 2, I, me, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iallgather(NULL, 2, I, b, 2, I, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_iallgather(a, 2, I, NULL, 2, I, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ialltoall(NULL, 2, I, b, 2, I, comm, &req));
    REJECT(NBCX_ERR_BUFFER, nbcx_ialltoall(a, 2, I, NULL, 2, I, comm, &req));
    if (p > 1) {
        /* on a non-root, the send buffer of reduce and gather matters */
        REJECT(NBCX_ERR_BUFFER,
               nbcx_ireduce(NULL, b, 2, I, NBCX_SUM, other, comm, &req));
        REJECT(NBCX_ERR_BUFFER,
               nbcx_igather(NULL, 2, I, b, 2, I, other, comm, &req));
        REJECT(NBCX_ERR_BUFFER,
               nbcx_iscatter(a, 2, I, NULL, 2, I, other, comm, &req));
    }

    /* null and freed datatypes */
    REJECT(NBCX_ERR_TYPE, nbcx_ibcast(a, 1, DT0, 0, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ibcast(a, 1, freed_type, 0, comm, &req));
    REJECT(NBCX_ERR_TYPE,
           nbcx_ireduce(a, b, 1, DT0, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_TYPE,
           nbcx_iallreduce(a, b, 1, DT0, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_igather(a, 1, DT0, b, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_igather(a, 1, I, b, 1, DT0, me, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iscatter(a, 1, DT0, b, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iscatter(a, 1, I, b, 1, DT0, me, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iallgather(a, 1, DT0, b, 1, I, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_iallgather(a, 1, I, b, 1, DT0, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ialltoall(a, 1, DT0, b, 1, I, comm, &req));
    REJECT(NBCX_ERR_TYPE, nbcx_ialltoall(a, 1, I, b, 1, DT0, comm, &req));

    /* null, freed, and type-incompatible operations */
    REJECT(NBCX_ERR_OP,
           nbcx_ireduce(a, b, 1, I, NBCX_OP_NULL, me, comm, &req));
    REJECT(NBCX_ERR_OP,
           nbcx_iallreduce(a, b, 1, I, NBCX_OP_NULL, comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(a, b, 1, I, freed_op, comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(d, e, 1, NBCX_DOUBLE, NBCX_BAND,
                                        comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_ireduce(d, e, 1, NBCX_DOUBLE, NBCX_BXOR, me,
                                     comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(ch, ch2, 1, NBCX_CHAR, NBCX_SUM,
                                        comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(a, b, 1, I, NBCX_MINLOC, comm, &req));
    REJECT(NBCX_ERR_OP, nbcx_iallreduce(ch, ch2, 1, NBCX_BYTE, NBCX_SUM,
                                        comm, &req));

    /* NBCX_IN_PLACE where MPI does not allow MPI_IN_PLACE */
    void *const IP = NBCX_IN_PLACE;
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ibcast(IP, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ibcast(IP, 1, I, other, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE,
           nbcx_ireduce(a, IP, 1, I, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE,
           nbcx_ireduce(IP, IP, 1, I, NBCX_SUM, me, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE,
           nbcx_iallreduce(a, IP, 1, I, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE,
           nbcx_iallreduce(IP, IP, 1, I, NBCX_SUM, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_igather(a, 1, I, IP, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE,
           nbcx_iscatter(IP, 1, I, b, 1, I, me, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_iallgather(a, 1, I, IP, 1, I, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ialltoall(a, 1, I, IP, 1, I, comm, &req));
    REJECT(NBCX_ERR_IN_PLACE, nbcx_ialltoall(IP, 1, I, IP, 1, I, comm, &req));
    if (p > 1) {
        /* "in place" is a root-only option for the rooted collectives */
        REJECT(NBCX_ERR_IN_PLACE,
               nbcx_ireduce(IP, b, 1, I, NBCX_SUM, other, comm, &req));
        REJECT(NBCX_ERR_IN_PLACE,
               nbcx_igather(IP, 1, I, b, 1, I, other, comm, &req));
        REJECT(NBCX_ERR_IN_PLACE,
               nbcx_iscatter(a, 1, I, IP, 1, I, other, comm, &req));
    }

    /* null request pointers */
    REJECT_NOREQ(NBCX_ERR_REQUEST, nbcx_ibarrier(comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST, nbcx_ibcast(a, 1, I, 0, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_ireduce(a, b, 1, I, NBCX_SUM, 0, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_iallreduce(a, b, 1, I, NBCX_SUM, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_igather(a, 1, I, b, 1, I, 0, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_iscatter(a, 1, I, b, 1, I, 0, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_iallgather(a, 1, I, b, 1, I, comm, NULL));
    REJECT_NOREQ(NBCX_ERR_REQUEST,
                 nbcx_ialltoall(a, 1, I, b, 1, I, comm, NULL));
    mt_unwatch();
}

static void test_bad_completion(void)
{
    nbcx_request reqs[3] = {NBCX_REQUEST_NULL, NBCX_REQUEST_NULL,
                            NBCX_REQUEST_NULL};
    nbcx_request req = NBCX_REQUEST_NULL;
    int flag = 0, index = 7;

    mt_watch("bad completion calls");
    REJECT_LOCAL(NBCX_ERR_REQUEST, nbcx_wait(NULL));
    REJECT_LOCAL(NBCX_ERR_REQUEST, nbcx_test(NULL, &flag));
    REJECT_LOCAL(ANY_ERROR, nbcx_test(&req, NULL));
    REJECT_LOCAL(ANY_ERROR, nbcx_waitall(3, NULL));
    REJECT_LOCAL(ANY_ERROR, nbcx_testall(3, NULL, &flag));
    REJECT_LOCAL(ANY_ERROR, nbcx_testall(3, reqs, NULL));
    REJECT_LOCAL(ANY_ERROR, nbcx_waitany(3, NULL, &index));
    REJECT_LOCAL(ANY_ERROR, nbcx_waitany(3, reqs, NULL));
    REJECT_LOCAL(ANY_ERROR, nbcx_waitall(-1, reqs));

    /* NBCX_REQUEST_NULL counts as complete */
    MT_OK(nbcx_wait(&req));
    flag = 0;
    MT_OK(nbcx_test(&req, &flag));
    if (!flag)
        mt_fail("nbcx_test(NBCX_REQUEST_NULL) did not set the flag");
    MT_OK(nbcx_waitall(3, reqs));
    flag = 0;
    MT_OK(nbcx_testall(3, reqs, &flag));
    if (!flag)
        mt_fail("nbcx_testall over null requests did not set the flag");
    MT_OK(nbcx_waitany(3, reqs, &index));
    if (index != -1)
        mt_fail("nbcx_waitany over null requests gave index %d", index);
    mt_unwatch();
}

static void test_bad_objects(nbcx_comm freed)
{
    nbcx_datatype t = NBCX_DATATYPE_NULL;
    nbcx_op op = NBCX_OP_NULL;
    nbcx_comm c = NBCX_COMM_NULL;
    const char *names = NULL;
    size_t size;
    ptrdiff_t extent;
    int rank, commutative;

    mt_watch("bad object calls");
    REJECT_LOCAL(NBCX_ERR_COMM, nbcx_comm_rank(NBCX_COMM_NULL, &rank));
    REJECT_LOCAL(NBCX_ERR_COMM, nbcx_comm_size(freed, &rank));
    REJECT_LOCAL(NBCX_ERR_COMM, nbcx_comm_free(&freed));
    REJECT_LOCAL(NBCX_ERR_COMM, nbcx_comm_from_mpi(MPI_COMM_NULL, &c));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_comm_from_mpi(MPI_COMM_WORLD, NULL));
    REJECT_LOCAL(NBCX_ERR_TYPE, nbcx_datatype_size(NBCX_DATATYPE_NULL, &size));
    REJECT_LOCAL(NBCX_ERR_TYPE,
                 nbcx_datatype_extent(NBCX_DATATYPE_NULL, &extent));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_datatype_size(NBCX_INT32, NULL));
    REJECT_LOCAL(NBCX_ERR_TYPE, nbcx_datatype_free(&t));
    REJECT_LOCAL(NBCX_ERR_TYPE,
                 nbcx_datatype_from_mpi(MPI_DATATYPE_NULL, &t));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_op_create(NULL, 1, NULL, &op));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_op_create(dummy_op, 1, NULL, NULL));
    REJECT_LOCAL(NBCX_ERR_OP, nbcx_op_commutative(NBCX_OP_NULL,
                                                  &commutative));
    REJECT_LOCAL(NBCX_ERR_OP, nbcx_op_free(&op));
    REJECT_LOCAL(NBCX_ERR_OP, nbcx_op_from_mpi(MPI_OP_NULL, &op));
    REJECT_LOCAL(NBCX_ERR_OP,
                 nbcx_reduce_local(d, e, 1, NBCX_DOUBLE, NBCX_BAND));
    REJECT_LOCAL(NBCX_ERR_COUNT,
                 nbcx_reduce_local(a, b, -1, NBCX_INT32, NBCX_SUM));
    REJECT_LOCAL(NBCX_ERR_BUFFER,
                 nbcx_reduce_local(NULL, b, 1, NBCX_INT32, NBCX_SUM));
    REJECT_LOCAL(ANY_ERROR, nbcx_algorithm_set("bcast", "no-such-alg"));
    REJECT_LOCAL(ANY_ERROR, nbcx_algorithm_set("no-such-coll", "auto"));
    REJECT_LOCAL(ANY_ERROR, nbcx_algorithm_names("no-such-coll", &names));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_algorithm_names("bcast", NULL));
    mt_unwatch();
}

static void test_bad_builder(nbcx_comm comm)
{
    const int p = mt_size;
    const nbcx_datatype I = NBCX_INT32;
    nbcx_sched s = NULL;
    nbcx_node n0 = -1, n = -1;
    nbcx_request req = NBCX_REQUEST_NULL;
    void *tmp = NULL;

    mt_watch("bad builder calls");
    REJECT_LOCAL(NBCX_ERR_COMM, nbcx_sched_create(NBCX_COMM_NULL, &s));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_create(comm, NULL));

    /* a schedule that is built, misused, and discarded without a start
     * (on some ranks only: it must not disturb what follows) */
    MT_OK(nbcx_sched_create(comm, &s));
    MT_OK(nbcx_sched_copy(s, a, 1, I, b, 1, I, &n0));

    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_send(NULL, a, 1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_RANK, nbcx_sched_send(s, a, 1, I, -1, 0, &n));
    REJECT_LOCAL(NBCX_ERR_RANK, nbcx_sched_send(s, a, 1, I, p, 0, &n));
    REJECT_LOCAL(NBCX_ERR_TAG, nbcx_sched_send(s, a, 1, I, 0, -1, &n));
    REJECT_LOCAL(NBCX_ERR_TAG,
                 nbcx_sched_send(s, a, 1, I, 0, NBCX_SCHED_TAG_MAX + 1, &n));
    REJECT_LOCAL(NBCX_ERR_COUNT, nbcx_sched_send(s, a, -1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_BUFFER, nbcx_sched_send(s, NULL, 1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_TYPE,
                 nbcx_sched_send(s, a, 1, NBCX_DATATYPE_NULL, 0, 0, &n));

    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_recv(NULL, b, 1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_RANK, nbcx_sched_recv(s, b, 1, I, -1, 0, &n));
    REJECT_LOCAL(NBCX_ERR_RANK, nbcx_sched_recv(s, b, 1, I, p, 0, &n));
    REJECT_LOCAL(NBCX_ERR_TAG, nbcx_sched_recv(s, b, 1, I, 0, -1, &n));
    REJECT_LOCAL(NBCX_ERR_TAG,
                 nbcx_sched_recv(s, b, 1, I, 0, NBCX_SCHED_TAG_MAX + 1, &n));
    REJECT_LOCAL(NBCX_ERR_COUNT, nbcx_sched_recv(s, b, -1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_BUFFER, nbcx_sched_recv(s, NULL, 1, I, 0, 0, &n));
    REJECT_LOCAL(NBCX_ERR_TYPE,
                 nbcx_sched_recv(s, b, 1, NBCX_DATATYPE_NULL, 0, 0, &n));

    REJECT_LOCAL(NBCX_ERR_OP,
                 nbcx_sched_reduce(s, d, e, 1, NBCX_DOUBLE, NBCX_BAND, &n));
    REJECT_LOCAL(NBCX_ERR_OP,
                 nbcx_sched_reduce(s, a, b, 1, I, NBCX_OP_NULL, &n));
    REJECT_LOCAL(NBCX_ERR_COUNT,
                 nbcx_sched_reduce(s, a, b, -1, I, NBCX_SUM, &n));
    REJECT_LOCAL(NBCX_ERR_BUFFER,
                 nbcx_sched_reduce(s, NULL, b, 1, I, NBCX_SUM, &n));
    REJECT_LOCAL(NBCX_ERR_TYPE, nbcx_sched_reduce(s, a, b, 1,
                                                  NBCX_DATATYPE_NULL,
                                                  NBCX_SUM, &n));

    REJECT_LOCAL(NBCX_ERR_COUNT, nbcx_sched_copy(s, a, -1, I, b, 1, I, &n));
    REJECT_LOCAL(NBCX_ERR_BUFFER, nbcx_sched_copy(s, NULL, 1, I, b, 1, I, &n));
    REJECT_LOCAL(NBCX_ERR_TYPE,
                 nbcx_sched_copy(s, a, 1, NBCX_DATATYPE_NULL, b, 1, I, &n));
    /* the two sides must hold the same number of bytes */
    REJECT_LOCAL(ANY_ERROR,
                 nbcx_sched_copy(s, a, 1, I, d, 1, NBCX_DOUBLE, &n));

    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_call(s, NULL, a, &n));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_tmp(s, 16, NULL));
    REJECT_LOCAL(NBCX_ERR_ARG, nbcx_sched_tmp(NULL, 16, &tmp));

    REJECT_LOCAL(NBCX_ERR_NODE, nbcx_sched_depend(s, n0, n0 + 1000));
    REJECT_LOCAL(NBCX_ERR_NODE, nbcx_sched_depend(s, -1, n0));
    REJECT_LOCAL(NBCX_ERR_NODE, nbcx_sched_depend(s, n0, -5));

    REJECT(NBCX_ERR_ARG, nbcx_sched_start(NULL, &req));
    REJECT_LOCAL(NBCX_ERR_REQUEST, nbcx_sched_start(&s, NULL));
    if (s) /* (nbcx.h does not say who owns it after a failed start) */
        MT_OK(nbcx_sched_free(&s));
    if (s != NULL)
        mt_fail("nbcx_sched_free did not reset the handle");

    /* A cycle can never complete: it is refused, when the edge closing
     * it is added or when the schedule starts, and nothing is posted. */
    MT_OK(nbcx_sched_create(comm, &s));
    MT_OK(nbcx_sched_recv(s, b, 1, I, (mt_rank + p - 1) % p, 7, &n0));
    MT_OK(nbcx_sched_send(s, a, 1, I, (mt_rank + 1) % p, 7, &n));
    MT_OK(nbcx_sched_depend(s, n0, n));
    if (nbcx_sched_depend(s, n, n0) == NBCX_SUCCESS)
        REJECT(ANY_ERROR, nbcx_sched_start(&s, &req));
    if (s)
        MT_OK(nbcx_sched_free(&s));
    MT_OK(nbcx_sched_create(comm, &s));
    MT_OK(nbcx_sched_copy(s, a, 1, I, b, 1, I, &n0));
    if (nbcx_sched_depend(s, n0, n0) == NBCX_SUCCESS)
        REJECT(ANY_ERROR, nbcx_sched_start(&s, &req));
    if (s)
        MT_OK(nbcx_sched_free(&s));
    mt_unwatch();
}

/* ------------------------------------------------------------------ */
/* Correct operations after the bad ones (on every rank)               */
/* ------------------------------------------------------------------ */

static void check_ints(const char *what, const int *got, const int *want,
                       int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            mt_fail("%s after the rejected calls: int %d is %d, MPI says %d",
                    what, i, got[i], want[i]);
            return;
        }
}

/* A hand-built ring schedule: receive from the left, add my value, call a
 * function, copy out. */
static void good_schedule(nbcx_comm comm)
{
    const int p = mt_size, me = mt_rank;
    int mine = 100 + me, from_left = -1, acc = me, out = -1, called = 0;
    nbcx_sched s = NULL;
    nbcx_request req = NBCX_REQUEST_NULL;
    nbcx_node snd, rcv, red, call, cpy;

    MT_OK(nbcx_sched_create(comm, &s));
    MT_OK(nbcx_sched_recv(s, &from_left, 1, NBCX_INT32, (me + p - 1) % p,
                          NBCX_SCHED_TAG_MAX, &rcv));
    MT_OK(nbcx_sched_send(s, &mine, 1, NBCX_INT32, (me + 1) % p,
                          NBCX_SCHED_TAG_MAX, &snd));
    MT_OK(nbcx_sched_reduce(s, &from_left, &acc, 1, NBCX_INT32, NBCX_SUM,
                            &red));
    MT_OK(nbcx_sched_call(s, dummy_fn, &called, &call));
    MT_OK(nbcx_sched_copy(s, &acc, 1, NBCX_INT32, &out, 4, NBCX_UINT8,
                          &cpy));
    MT_OK(nbcx_sched_depend(s, rcv, red));
    MT_OK(nbcx_sched_depend(s, red, call));
    MT_OK(nbcx_sched_depend(s, call, cpy));
    MT_OK(nbcx_sched_start(&s, &req));
    MT_OK(nbcx_wait(&req));
    if (out != me + 100 + (me + p - 1) % p || called != 1)
        mt_fail("hand-built schedule: out=%d (expected %d), called=%d", out,
                me + 100 + (me + p - 1) % p, called);
    (void)snd;
}

static void good_collectives(nbcx_comm comm)
{
    /* x: [0,3) bcast, [3,7) allreduce input, [8,8+2p) alltoall input */
    const int p = mt_size, me = mt_rank, n = 8 + 2 * p;
    int *x = calloc((size_t)n, sizeof(int)), *rx = calloc((size_t)n, sizeof(int));
    int y[4], ry[4];
    int *z = calloc((size_t)(2 * p), sizeof(int));
    int *rz = calloc((size_t)(2 * p), sizeof(int));
    nbcx_request reqs[3];

    mt_watch("correct collectives after the rejected calls");
    for (int i = 0; i < n; i++)
        x[i] = rx[i] = 1000 * me + i;

    /* three at once, then the same with MPI */
    MT_OK(nbcx_ibcast(x, 3, NBCX_INT32, p - 1, comm, &reqs[0]));
    MT_OK(nbcx_iallreduce(x + 3, y, 4, NBCX_INT32, NBCX_SUM, comm,
                          &reqs[1]));
    MT_OK(nbcx_ialltoall(x + 8, 2, NBCX_INT32, z, 2, NBCX_INT32, comm,
                         &reqs[2]));
    MT_OK(nbcx_waitall(3, reqs));
    MPI_Bcast(rx, 3, MPI_INT, p - 1, MPI_COMM_WORLD);
    MPI_Allreduce(rx + 3, ry, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Alltoall(rx + 8, 2, MPI_INT, rz, 2, MPI_INT, MPI_COMM_WORLD);
    check_ints("ibcast", x, rx, 3);
    check_ints("iallreduce", y, ry, 4);
    check_ints("ialltoall", z, rz, 2 * p);
    free(x);
    free(rx);
    free(z);
    free(rz);

    good_schedule(comm);
    mt_unwatch();
}

int main(int argc, char **argv)
{
    nbcx_comm comm = NBCX_COMM_NULL, freed = NBCX_COMM_NULL;
    nbcx_datatype freed_type = NBCX_DATATYPE_NULL;
    nbcx_op freed_op = NBCX_OP_NULL;
    MPI_Datatype pair;
    double t0;

    t0 = mt_begin(&argc, &argv);
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &comm));

    /* A communicator, a derived datatype and an operation, freed: their
     * handles are reset to the null handles, which every call rejects. */
    MT_OK(nbcx_comm_from_mpi(MPI_COMM_WORLD, &freed));
    MT_OK(nbcx_comm_free(&freed));
    if (freed != NBCX_COMM_NULL)
        mt_fail("nbcx_comm_free did not reset the handle");
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MT_OK(nbcx_datatype_from_mpi(pair, &freed_type));
    MT_OK(nbcx_datatype_free(&freed_type));
    MPI_Type_free(&pair);
    if (freed_type != NBCX_DATATYPE_NULL)
        mt_fail("nbcx_datatype_free did not reset the handle");
    MT_OK(nbcx_op_create(dummy_op, 1, NULL, &freed_op));
    MT_OK(nbcx_op_free(&freed_op));
    if (freed_op != NBCX_OP_NULL)
        mt_fail("nbcx_op_free did not reset the handle");

    test_error_strings();
    test_mpi_face(comm);
    test_progress_modes(comm);

    /* The bad calls, on every rank but the last. */
    if (mt_size == 1 || mt_rank != mt_size - 1) {
        test_bad_collectives(comm, freed, freed_type, freed_op);
        test_bad_completion();
        test_bad_objects(freed);
        test_bad_builder(comm);
    }

    /* Everything still works, and nothing is left over. */
    good_collectives(comm);
    mt_watch("teardown");
    MT_OK(nbcx_comm_free(&comm));
    return mt_finish("test_errors", t0);
}
