/*
 * nbcxjni.c - the JNI half of nbcx for Java (package io.nbcx, class
 * io.nbcx.Native). Built only on the public API (nbcx.h, nbcx_mpi.h).
 *
 * Everything that can be checked is checked in Java before these
 * functions run; here the arguments are trusted to be in range. Errors
 * of nbcx are returned as codes, and io.nbcx.NbcxException is built on
 * the Java side (with nbcx_error_detail, read on the same thread).
 *
 * Native threads that call into Java:
 *   - the rank threads of nbcx_inproc_run attach for the body and detach
 *     before they return;
 *   - any other nbcx thread that runs a user operation (the progress
 *     thread) attaches once, as a daemon, and is detached by a pthread
 *     key destructor when it exits.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE /* dladdr */
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbcx.h"
#ifdef NBCXJNI_WITH_MPI
#include <dlfcn.h>
#include "nbcx_mpi.h"
#endif

static JavaVM *g_vm;
static pthread_key_t g_detach_key;
static jclass g_native_class;      /* io.nbcx.Native (global ref) */
static jmethodID g_run_rank;       /* static int runRank(Object, long) */
static jmethodID g_apply_op;       /* static void applyOp(Object, ByteBuffer, ByteBuffer, int, int) */
static jmethodID g_completed;      /* static void completed(long, int) */
static jmethodID g_run_call;       /* static int runCall(long) */
static jfieldID g_req_handle;      /* long Request.handle */

static void detach_at_exit(void *unused)
{
    (void)unused;
    if (g_vm) (*g_vm)->DetachCurrentThread(g_vm);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    (void)reserved;
    JNIEnv *env;
    g_vm = vm;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_10) != JNI_OK)
        return JNI_ERR;
    if (pthread_key_create(&g_detach_key, detach_at_exit) != 0)
        return JNI_ERR;
    jclass c = (*env)->FindClass(env, "io/nbcx/Native");
    if (!c) return JNI_ERR;
    g_native_class = (*env)->NewGlobalRef(env, c);
    g_run_rank = (*env)->GetStaticMethodID(env, c, "runRank",
                                           "(Ljava/lang/Object;J)I");
    g_apply_op = (*env)->GetStaticMethodID(
        env, c, "applyOp",
        "(Ljava/lang/Object;Ljava/nio/ByteBuffer;Ljava/nio/ByteBuffer;II)V");
    g_completed = (*env)->GetStaticMethodID(env, c, "completed", "(JI)V");
    g_run_call = (*env)->GetStaticMethodID(env, c, "runCall", "(J)I");
    jclass rc = (*env)->FindClass(env, "io/nbcx/Request");
    g_req_handle = rc ? (*env)->GetFieldID(env, rc, "handle", "J") : NULL;
    if (!g_native_class || !g_run_rank || !g_apply_op || !g_completed ||
        !g_run_call || !g_req_handle)
        return JNI_ERR;
    return JNI_VERSION_10;
}

/* The JNIEnv of this thread, attaching it (as a daemon, detached when the
 * thread exits) if it is not attached yet. NULL if that fails. */
static JNIEnv *env_of_this_thread(void)
{
    JNIEnv *env = NULL;
    jint rc = (*g_vm)->GetEnv(g_vm, (void **)&env, JNI_VERSION_10);
    if (rc == JNI_OK) return env;
    if (rc != JNI_EDETACHED) return NULL;
    JavaVMAttachArgs args = {JNI_VERSION_10, (char *)"nbcx-progress", NULL};
    if ((*g_vm)->AttachCurrentThreadAsDaemon(g_vm, (void **)&env, &args) !=
        JNI_OK)
        return NULL;
    pthread_setspecific(g_detach_key, (void *)1);
    return env;
}

#define DT(code) ((nbcx_datatype)(uintptr_t)(code))
#define OP(h) ((nbcx_op)(uintptr_t)(h))
#define PTR(a) ((void *)(intptr_t)(a))
#define COMM(h) ((nbcx_comm)(intptr_t)(h))
#define REQ(h) ((nbcx_request)(intptr_t)(h))

/* ---------------------------------------------------------------- */
/* Requests: Request.handle is the handle, updated as nbcx updates it */
/* (a field, not a long[1]: 24 bytes fewer per operation)             */
/* ---------------------------------------------------------------- */

static nbcx_request get_req(JNIEnv *env, jobject r)
{
    return REQ((*env)->GetLongField(env, r, g_req_handle));
}

static void set_req(JNIEnv *env, jobject r, nbcx_request req)
{
    (*env)->SetLongField(env, r, g_req_handle, (jlong)(intptr_t)req);
}


/* ---------------------------------------------------------------- */
/* Errors, information, progress                                     */
/* ---------------------------------------------------------------- */

JNIEXPORT jstring JNICALL Java_io_nbcx_Native_errorString(JNIEnv *env,
                                                          jclass cls,
                                                          jint code)
{
    (void)cls;
    return (*env)->NewStringUTF(env, nbcx_error_string(code));
}

JNIEXPORT jstring JNICALL Java_io_nbcx_Native_errorDetail(JNIEnv *env,
                                                          jclass cls,
                                                          jint code)
{
    (void)cls;
    return (*env)->NewStringUTF(env, nbcx_error_detail(code));
}

JNIEXPORT jstring JNICALL Java_io_nbcx_Native_info(JNIEnv *env, jclass cls)
{
    (void)cls;
    char buf[4096];
    if (nbcx_info(buf, sizeof buf) != NBCX_SUCCESS) buf[0] = '\0';
    buf[sizeof buf - 1] = '\0';
    return (*env)->NewStringUTF(env, buf);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_progressSet(JNIEnv *env,
                                                       jclass cls, jint m)
{
    (void)env, (void)cls;
    return nbcx_progress_set((nbcx_progress_mode)m);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_progressGet(JNIEnv *env,
                                                       jclass cls)
{
    (void)env, (void)cls;
    nbcx_progress_mode m;
    return nbcx_progress_get(&m) == NBCX_SUCCESS ? (jint)m : -1;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_algorithmSet(JNIEnv *env,
                                                        jclass cls,
                                                        jstring coll,
                                                        jstring alg)
{
    (void)cls;
    const char *c = (*env)->GetStringUTFChars(env, coll, NULL);
    const char *a = alg ? (*env)->GetStringUTFChars(env, alg, NULL) : NULL;
    int rc = (c && (a || !alg)) ? nbcx_algorithm_set(c, a) : NBCX_ERR_NOMEM;
    if (c) (*env)->ReleaseStringUTFChars(env, coll, c);
    if (a) (*env)->ReleaseStringUTFChars(env, alg, a);
    return rc;
}

/* ---------------------------------------------------------------- */
/* Native memory: staging buffers for Java arrays                    */
/* ---------------------------------------------------------------- */

JNIEXPORT jlong JNICALL Java_io_nbcx_Native_malloc(JNIEnv *env, jclass cls,
                                                   jlong bytes)
{
    (void)env, (void)cls;
    /* 64-byte aligned, never NULL for 0 bytes (nbcx takes NULL with a
     * zero count too, but a real pointer keeps one path). */
    void *p = NULL;
    size_t n = bytes > 0 ? (size_t)bytes : 1;
    if (posix_memalign(&p, 64, n) != 0) return 0;
    return (jlong)(intptr_t)p;
}

JNIEXPORT void JNICALL Java_io_nbcx_Native_free(JNIEnv *env, jclass cls,
                                                jlong p)
{
    (void)env, (void)cls;
    free(PTR(p));
}

/* array[byteOff .. byteOff+bytes) -> dst. The array is pinned (critical)
 * only for the memcpy. */
JNIEXPORT void JNICALL Java_io_nbcx_Native_copyIn(JNIEnv *env, jclass cls,
                                                  jobject array,
                                                  jlong byteOff, jlong bytes,
                                                  jlong dst)
{
    (void)cls;
    if (bytes <= 0) return;
    char *a = (*env)->GetPrimitiveArrayCritical(env, array, NULL);
    if (!a) return; /* OutOfMemoryError pending */
    memcpy(PTR(dst), a + byteOff, (size_t)bytes);
    (*env)->ReleasePrimitiveArrayCritical(env, array, a, JNI_ABORT);
}

JNIEXPORT void JNICALL Java_io_nbcx_Native_copyOut(JNIEnv *env, jclass cls,
                                                   jlong src, jobject array,
                                                   jlong byteOff, jlong bytes)
{
    (void)cls;
    if (bytes <= 0) return;
    char *a = (*env)->GetPrimitiveArrayCritical(env, array, NULL);
    if (!a) return;
    memcpy(a + byteOff, PTR(src), (size_t)bytes);
    (*env)->ReleasePrimitiveArrayCritical(env, array, a, 0);
}

/* The same copies with Get/Set<Type>ArrayRegion (the JVM copies; no
 * pinning, no GC locker): elements, not bytes; type is the nbcx code of
 * the array's element type (io.nbcx.Datatype). in: array -> ptr. */
JNIEXPORT void JNICALL Java_io_nbcx_Native_copyRegion(JNIEnv *env, jclass cls,
                                                      jobject array, jint type,
                                                      jint off, jint n,
                                                      jlong ptr, jboolean in)
{
    (void)cls;
    if (n <= 0) return;
    void *p = PTR(ptr);
#define REGION(T, JT)                                                      \
    do {                                                                   \
        if (in)                                                            \
            (*env)->Get##T##ArrayRegion(env, (JT##Array)array, off, n, p); \
        else                                                               \
            (*env)->Set##T##ArrayRegion(env, (JT##Array)array, off, n, p); \
    } while (0)
    switch (type) {
    case 1: REGION(Byte, jbyte); break;
    case 2: REGION(Boolean, jboolean); break;
    case 3: REGION(Short, jshort); break;
    case 4: REGION(Char, jchar); break;
    case 5: REGION(Int, jint); break;
    case 7: REGION(Long, jlong); break;
    case 9: REGION(Float, jfloat); break;
    case 10: REGION(Double, jdouble); break;
    default: break;
    }
#undef REGION
}

/* A derived layout (io.nbcx.Layout): n elements from byte `origin` of the
 * array (pinned, critical, for the loop) or direct buffer, element e's
 * block i at origin + e*extent + disp[i], len[i] bytes, packed back to
 * back into ptr (in) or unpacked from it. Java checked the bounds. */
JNIEXPORT void JNICALL Java_io_nbcx_Native_layoutCopy(
    JNIEnv *env, jclass cls, jobject array, jobject direct, jlong origin,
    jint n, jlong extent, jlongArray jdisp, jlongArray jlen, jlong ptr,
    jboolean in)
{
    (void)cls;
    if (n <= 0) return;
    jsize nb = (*env)->GetArrayLength(env, jdisp);
    jlong *disp = (*env)->GetLongArrayElements(env, jdisp, NULL);
    jlong *len = disp ? (*env)->GetLongArrayElements(env, jlen, NULL) : NULL;
    if (!len) {
        if (disp) (*env)->ReleaseLongArrayElements(env, jdisp, disp, JNI_ABORT);
        return; /* OutOfMemoryError pending */
    }
    char *base = array ? (*env)->GetPrimitiveArrayCritical(env, array, NULL)
                       : (*env)->GetDirectBufferAddress(env, direct);
    if (base) {
        char *packed = PTR(ptr);
        for (jint e = 0; e < n; e++) {
            char *elem = base + origin + (ptrdiff_t)e * extent;
            for (jsize i = 0; i < nb; i++) {
                size_t l = (size_t)len[i];
                if (in)
                    memcpy(packed, elem + disp[i], l);
                else
                    memcpy(elem + disp[i], packed, l);
                packed += l;
            }
        }
        if (array)
            (*env)->ReleasePrimitiveArrayCritical(env, array, base,
                                                  in ? JNI_ABORT : 0);
    }
    (*env)->ReleaseLongArrayElements(env, jlen, len, JNI_ABORT);
    (*env)->ReleaseLongArrayElements(env, jdisp, disp, JNI_ABORT);
}

JNIEXPORT jlong JNICALL Java_io_nbcx_Native_address(JNIEnv *env, jclass cls,
                                                    jobject buffer)
{
    (void)cls;
    return (jlong)(intptr_t)(*env)->GetDirectBufferAddress(env, buffer);
}

/* ---------------------------------------------------------------- */
/* Ranks as threads                                                  */
/* ---------------------------------------------------------------- */

struct run_arg {
    jobject runner; /* global ref */
};

static int rank_body(nbcx_comm comm, void *arg)
{
    struct run_arg *ra = arg;
    JNIEnv *env;
    JavaVMAttachArgs args = {JNI_VERSION_10, (char *)"nbcx-rank", NULL};
    if ((*g_vm)->AttachCurrentThread(g_vm, (void **)&env, &args) != JNI_OK)
        return NBCX_ERR_NOMEM;
    jint rc = (*env)->CallStaticIntMethod(env, g_native_class, g_run_rank,
                                          ra->runner,
                                          (jlong)(intptr_t)comm);
    if ((*env)->ExceptionCheck(env)) { /* runRank catches everything */
        (*env)->ExceptionClear(env);
        rc = NBCX_ERR_INTERN;
    }
    (*g_vm)->DetachCurrentThread(g_vm);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_inprocRun(JNIEnv *env,
                                                     jclass cls, jint n,
                                                     jobject runner)
{
    (void)cls;
    struct run_arg ra = {(*env)->NewGlobalRef(env, runner)};
    if (!ra.runner) return NBCX_ERR_NOMEM;
    int rc = nbcx_inproc_run(n, rank_body, &ra);
    (*env)->DeleteGlobalRef(env, ra.runner);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_commRank(JNIEnv *env, jclass cls,
                                                    jlong comm)
{
    (void)env, (void)cls;
    int r = -1;
    return nbcx_comm_rank(COMM(comm), &r) == NBCX_SUCCESS ? r : -1;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_commSize(JNIEnv *env, jclass cls,
                                                    jlong comm)
{
    (void)env, (void)cls;
    int s = -1;
    return nbcx_comm_size(COMM(comm), &s) == NBCX_SUCCESS ? s : -1;
}

JNIEXPORT jstring JNICALL Java_io_nbcx_Native_commTransport(JNIEnv *env,
                                                            jclass cls,
                                                            jlong comm)
{
    (void)cls;
    const char *name = NULL;
    if (nbcx_comm_transport(COMM(comm), &name) != NBCX_SUCCESS || !name)
        name = "?";
    return (*env)->NewStringUTF(env, name);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_commFree(JNIEnv *env, jclass cls,
                                                    jlong comm)
{
    (void)env, (void)cls;
    nbcx_comm c = COMM(comm);
    return nbcx_comm_free(&c);
}

/* nbcx_comm_split / nbcx_comm_dup (dup when dup is set): the new
 * communicator in out[0] (0 for NBCX_UNDEFINED). */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_commSplit(JNIEnv *env, jclass cls,
                                                     jlong comm, jboolean dup,
                                                     jint color, jint key,
                                                     jlongArray out)
{
    (void)cls;
    nbcx_comm n = NBCX_COMM_NULL;
    int rc = dup ? nbcx_comm_dup(COMM(comm), &n)
                 : nbcx_comm_split(COMM(comm), color, key, &n);
    jlong h = (jlong)(intptr_t)n;
    (*env)->SetLongArrayRegion(env, out, 0, 1, &h);
    return rc;
}

/* ---------------------------------------------------------------- */
/* User operations                                                   */
/* ---------------------------------------------------------------- */

static void user_fn(const void *in, void *inout, int count,
                    nbcx_datatype type, void *ctx)
{
    JNIEnv *env = env_of_this_thread();
    if (!env) return; /* cannot reach the JVM: leave inout as it is */
    size_t size = 0;
    nbcx_datatype_size(type, &size);
    jlong bytes = (jlong)size * count;
    jobject bin = (*env)->NewDirectByteBuffer(env, (void *)in, bytes);
    jobject bout = bin ? (*env)->NewDirectByteBuffer(env, inout, bytes) : NULL;
    if (bout)
        (*env)->CallStaticVoidMethod(env, g_native_class, g_apply_op,
                                     (jobject)ctx, bin, bout, (jint)count,
                                     (jint)(uintptr_t)type);
    if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
    if (bin) (*env)->DeleteLocalRef(env, bin);
    if (bout) (*env)->DeleteLocalRef(env, bout);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_opCreate(JNIEnv *env, jclass cls,
                                                    jobject fn,
                                                    jboolean commute,
                                                    jlongArray out)
{
    (void)cls;
    jobject ref = (*env)->NewGlobalRef(env, fn);
    if (!ref) return NBCX_ERR_NOMEM;
    nbcx_op op = NBCX_OP_NULL;
    int rc = nbcx_op_create(user_fn, commute ? 1 : 0, ref, &op);
    if (rc != NBCX_SUCCESS) {
        (*env)->DeleteGlobalRef(env, ref);
        return rc;
    }
    jlong v[2] = {(jlong)(intptr_t)op, (jlong)(intptr_t)ref};
    (*env)->SetLongArrayRegion(env, out, 0, 2, v);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_opFree(JNIEnv *env, jclass cls,
                                                  jlong op, jlong ref)
{
    (void)cls;
    nbcx_op o = OP(op);
    int rc = nbcx_op_free(&o);
    (*env)->DeleteGlobalRef(env, (jobject)(intptr_t)ref);
    return rc;
}

/* ---------------------------------------------------------------- */
/* Collectives                                                       */
/* ---------------------------------------------------------------- */

/* The kinds, as in io.nbcx.Native.K_*. */
enum {
    K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_GATHERV,
    K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV, K_ALLTOALL,
    K_ALLTOALLV, K_SCAN, K_EXSCAN, K_REDUCE_SCATTER_BLOCK, K_REDUCE_SCATTER,
    K_NEIGHBOR_ALLGATHER, K_NEIGHBOR_ALLGATHERV, K_NEIGHBOR_ALLTOALL,
    K_NEIGHBOR_ALLTOALLV
};

/* Pins the int arrays for the call (copies: they are small). */
static int *ints(JNIEnv *env, jintArray a)
{
    if (!a) return NULL;
    return (*env)->GetIntArrayElements(env, a, NULL);
}

static void release_ints(JNIEnv *env, jintArray a, int *p)
{
    if (a && p) (*env)->ReleaseIntArrayElements(env, a, p, JNI_ABORT);
}

/* One entry point for every collective and its persistent form: the
 * arguments follow MPI's order; those a collective does not take are
 * ignored. Returns the nbcx code; the request goes to out[0]. */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_coll(
    JNIEnv *env, jclass cls, jint kind, jboolean persistent, jlong comm,
    jlong sbuf, jint scount, jintArray scounts, jintArray sdispls,
    jint stype, jlong rbuf, jint rcount, jintArray rcounts,
    jintArray rdispls, jint rtype, jlong op, jint root, jobject out)
{
    (void)cls;
    nbcx_comm c = COMM(comm);
    const void *sb = PTR(sbuf);
    void *rb = PTR(rbuf);
    nbcx_datatype st = DT(stype), rt = DT(rtype);
    nbcx_op o = OP(op);
    nbcx_request req = NBCX_REQUEST_NULL;
    int *sc = ints(env, scounts), *sd = ints(env, sdispls);
    int *rc_ = ints(env, rcounts), *rd = ints(env, rdispls);
    int rc;
    if ((scounts && !sc) || (sdispls && !sd) || (rcounts && !rc_) ||
        (rdispls && !rd)) {
        rc = NBCX_ERR_NOMEM;
        goto out;
    }
    if (!persistent) {
        switch (kind) {
        case K_BARRIER: rc = nbcx_ibarrier(c, &req); break;
        case K_BCAST: rc = nbcx_ibcast(rb, rcount, rt, root, c, &req); break;
        case K_REDUCE:
            rc = nbcx_ireduce(sb, rb, scount, st, o, root, c, &req);
            break;
        case K_ALLREDUCE:
            rc = nbcx_iallreduce(sb, rb, scount, st, o, c, &req);
            break;
        case K_GATHER:
            rc = nbcx_igather(sb, scount, st, rb, rcount, rt, root, c, &req);
            break;
        case K_GATHERV:
            rc = nbcx_igatherv(sb, scount, st, rb, rc_, rd, rt, root, c, &req);
            break;
        case K_SCATTER:
            rc = nbcx_iscatter(sb, scount, st, rb, rcount, rt, root, c, &req);
            break;
        case K_SCATTERV:
            rc = nbcx_iscatterv(sb, sc, sd, st, rb, rcount, rt, root, c, &req);
            break;
        case K_ALLGATHER:
            rc = nbcx_iallgather(sb, scount, st, rb, rcount, rt, c, &req);
            break;
        case K_ALLGATHERV:
            rc = nbcx_iallgatherv(sb, scount, st, rb, rc_, rd, rt, c, &req);
            break;
        case K_ALLTOALL:
            rc = nbcx_ialltoall(sb, scount, st, rb, rcount, rt, c, &req);
            break;
        case K_ALLTOALLV:
            rc = nbcx_ialltoallv(sb, sc, sd, st, rb, rc_, rd, rt, c, &req);
            break;
        case K_SCAN: rc = nbcx_iscan(sb, rb, scount, st, o, c, &req); break;
        case K_EXSCAN: rc = nbcx_iexscan(sb, rb, scount, st, o, c, &req); break;
        case K_REDUCE_SCATTER_BLOCK:
            rc = nbcx_ireduce_scatter_block(sb, rb, rcount, rt, o, c, &req);
            break;
        case K_REDUCE_SCATTER:
            rc = nbcx_ireduce_scatter(sb, rb, rc_, rt, o, c, &req);
            break;
        case K_NEIGHBOR_ALLGATHER:
            rc = nbcx_ineighbor_allgather(sb, scount, st, rb, rcount, rt, c,
                                          &req);
            break;
        case K_NEIGHBOR_ALLGATHERV:
            rc = nbcx_ineighbor_allgatherv(sb, scount, st, rb, rc_, rd, rt, c,
                                           &req);
            break;
        case K_NEIGHBOR_ALLTOALL:
            rc = nbcx_ineighbor_alltoall(sb, scount, st, rb, rcount, rt, c,
                                         &req);
            break;
        case K_NEIGHBOR_ALLTOALLV:
            rc = nbcx_ineighbor_alltoallv(sb, sc, sd, st, rb, rc_, rd, rt, c,
                                          &req);
            break;
        default: rc = NBCX_ERR_ARG;
        }
    } else {
        switch (kind) {
        case K_BARRIER: rc = nbcx_barrier_init(c, &req); break;
        case K_BCAST: rc = nbcx_bcast_init(rb, rcount, rt, root, c, &req); break;
        case K_REDUCE:
            rc = nbcx_reduce_init(sb, rb, scount, st, o, root, c, &req);
            break;
        case K_ALLREDUCE:
            rc = nbcx_allreduce_init(sb, rb, scount, st, o, c, &req);
            break;
        case K_GATHER:
            rc = nbcx_gather_init(sb, scount, st, rb, rcount, rt, root, c, &req);
            break;
        case K_GATHERV:
            rc = nbcx_gatherv_init(sb, scount, st, rb, rc_, rd, rt, root, c,
                                   &req);
            break;
        case K_SCATTER:
            rc = nbcx_scatter_init(sb, scount, st, rb, rcount, rt, root, c,
                                   &req);
            break;
        case K_SCATTERV:
            rc = nbcx_scatterv_init(sb, sc, sd, st, rb, rcount, rt, root, c,
                                    &req);
            break;
        case K_ALLGATHER:
            rc = nbcx_allgather_init(sb, scount, st, rb, rcount, rt, c, &req);
            break;
        case K_ALLGATHERV:
            rc = nbcx_allgatherv_init(sb, scount, st, rb, rc_, rd, rt, c, &req);
            break;
        case K_ALLTOALL:
            rc = nbcx_alltoall_init(sb, scount, st, rb, rcount, rt, c, &req);
            break;
        case K_ALLTOALLV:
            rc = nbcx_alltoallv_init(sb, sc, sd, st, rb, rc_, rd, rt, c, &req);
            break;
        case K_SCAN: rc = nbcx_scan_init(sb, rb, scount, st, o, c, &req); break;
        case K_EXSCAN:
            rc = nbcx_exscan_init(sb, rb, scount, st, o, c, &req);
            break;
        case K_REDUCE_SCATTER_BLOCK:
            rc = nbcx_reduce_scatter_block_init(sb, rb, rcount, rt, o, c, &req);
            break;
        case K_REDUCE_SCATTER:
            rc = nbcx_reduce_scatter_init(sb, rb, rc_, rt, o, c, &req);
            break;
        case K_NEIGHBOR_ALLGATHER:
            rc = nbcx_neighbor_allgather_init(sb, scount, st, rb, rcount, rt,
                                              c, &req);
            break;
        case K_NEIGHBOR_ALLGATHERV:
            rc = nbcx_neighbor_allgatherv_init(sb, scount, st, rb, rc_, rd, rt,
                                               c, &req);
            break;
        case K_NEIGHBOR_ALLTOALL:
            rc = nbcx_neighbor_alltoall_init(sb, scount, st, rb, rcount, rt, c,
                                             &req);
            break;
        case K_NEIGHBOR_ALLTOALLV:
            rc = nbcx_neighbor_alltoallv_init(sb, sc, sd, st, rb, rc_, rd, rt,
                                              c, &req);
            break;
        default: rc = NBCX_ERR_ARG;
        }
    }
out:
    release_ints(env, scounts, sc);
    release_ints(env, sdispls, sd);
    release_ints(env, rcounts, rc_);
    release_ints(env, rdispls, rd);
    set_req(env, out, req);
    return rc;
}

/* alltoallw: per-rank counts, byte displacements and datatype codes. */
static nbcx_datatype *types_of(JNIEnv *env, jintArray a, int n)
{
    nbcx_datatype *t = calloc(n > 0 ? (size_t)n : 1, sizeof *t);
    int *codes = ints(env, a);
    if (t && codes)
        for (int i = 0; i < n; i++) t[i] = DT(codes[i]);
    release_ints(env, a, codes);
    return t;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_alltoallw(
    JNIEnv *env, jclass cls, jboolean persistent, jlong comm, jlong sbuf,
    jintArray scounts, jintArray sdispls, jintArray stypes, jlong rbuf,
    jintArray rcounts, jintArray rdispls, jintArray rtypes, jobject out)
{
    (void)cls;
    int n = rcounts ? (*env)->GetArrayLength(env, rcounts) : 0;
    nbcx_datatype *st = types_of(env, stypes, n), *rt = types_of(env, rtypes, n);
    int *sc = ints(env, scounts), *sd = ints(env, sdispls);
    int *rc_ = ints(env, rcounts), *rd = ints(env, rdispls);
    nbcx_request req = NBCX_REQUEST_NULL;
    int rc = NBCX_ERR_NOMEM;
    if (st && rt && sc && sd && rc_ && rd)
        rc = persistent
                 ? nbcx_alltoallw_init(PTR(sbuf), sc, sd, st, PTR(rbuf), rc_,
                                       rd, rt, COMM(comm), &req)
                 : nbcx_ialltoallw(PTR(sbuf), sc, sd, st, PTR(rbuf), rc_, rd,
                                   rt, COMM(comm), &req);
    release_ints(env, scounts, sc);
    release_ints(env, sdispls, sd);
    release_ints(env, rcounts, rc_);
    release_ints(env, rdispls, rd);
    free(st);
    free(rt);
    set_req(env, out, req);
    return rc;
}

/* neighbor_alltoallw: one entry per destination (send side) or source
 * (receive side); byte displacements as ptrdiff_t (MPI_Aint). */
static ptrdiff_t *aints_of(JNIEnv *env, jintArray a, int n)
{
    ptrdiff_t *d = calloc(n > 0 ? (size_t)n : 1, sizeof *d);
    int *v = ints(env, a);
    if (d && v)
        for (int i = 0; i < n; i++) d[i] = v[i];
    if (n > 0 && !v) {
        free(d);
        d = NULL;
    }
    release_ints(env, a, v);
    return d;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_neighborAlltoallw(
    JNIEnv *env, jclass cls, jboolean persistent, jlong comm, jlong sbuf,
    jintArray scounts, jintArray sdispls, jintArray stypes, jlong rbuf,
    jintArray rcounts, jintArray rdispls, jintArray rtypes, jobject out)
{
    (void)cls;
    int nout = (*env)->GetArrayLength(env, scounts);
    int nin = (*env)->GetArrayLength(env, rcounts);
    nbcx_datatype *st = types_of(env, stypes, nout);
    nbcx_datatype *rt = types_of(env, rtypes, nin);
    ptrdiff_t *sd = aints_of(env, sdispls, nout), *rd = aints_of(env, rdispls, nin);
    int *sc = ints(env, scounts), *rc_ = ints(env, rcounts);
    nbcx_request req = NBCX_REQUEST_NULL;
    int rc = NBCX_ERR_NOMEM;
    if (st && rt && sd && rd && (sc || nout == 0) && (rc_ || nin == 0))
        rc = persistent
                 ? nbcx_neighbor_alltoallw_init(PTR(sbuf), sc, sd, st,
                                                PTR(rbuf), rc_, rd, rt,
                                                COMM(comm), &req)
                 : nbcx_ineighbor_alltoallw(PTR(sbuf), sc, sd, st, PTR(rbuf),
                                            rc_, rd, rt, COMM(comm), &req);
    release_ints(env, scounts, sc);
    release_ints(env, rcounts, rc_);
    free(st);
    free(rt);
    free(sd);
    free(rd);
    set_req(env, out, req);
    return rc;
}

/* ---------------------------------------------------------------- */
/* The schedule builder (nbcx_sched_*): the node in out[0]            */
/* ---------------------------------------------------------------- */

#define SCHED(h) ((nbcx_sched)(intptr_t)(h))

static jint node_out(JNIEnv *env, jintArray out, int rc, nbcx_node n)
{
    jint v = rc == NBCX_SUCCESS ? n : -1;
    (*env)->SetIntArrayRegion(env, out, 0, 1, &v);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedCreate(JNIEnv *env,
                                                       jclass cls, jlong comm,
                                                       jlongArray out)
{
    (void)cls;
    nbcx_sched s = NULL;
    int rc = nbcx_sched_create(COMM(comm), &s);
    jlong h = (jlong)(intptr_t)s;
    (*env)->SetLongArrayRegion(env, out, 0, 1, &h);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedSendRecv(
    JNIEnv *env, jclass cls, jlong sched, jboolean send, jlong buf,
    jint count, jint type, jint peer, jint tag, jintArray out)
{
    (void)cls;
    nbcx_node n = -1;
    int rc = send ? nbcx_sched_send(SCHED(sched), PTR(buf), count, DT(type),
                                    peer, tag, &n)
                  : nbcx_sched_recv(SCHED(sched), PTR(buf), count, DT(type),
                                    peer, tag, &n);
    return node_out(env, out, rc, n);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedReduce(
    JNIEnv *env, jclass cls, jlong sched, jlong in, jlong inout, jint count,
    jint type, jlong op, jintArray out)
{
    (void)cls;
    nbcx_node n = -1;
    int rc = nbcx_sched_reduce(SCHED(sched), PTR(in), PTR(inout), count,
                               DT(type), OP(op), &n);
    return node_out(env, out, rc, n);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedCopy(
    JNIEnv *env, jclass cls, jlong sched, jlong src, jint scount, jint stype,
    jlong dst, jint dcount, jint dtype, jintArray out)
{
    (void)cls;
    nbcx_node n = -1;
    int rc = nbcx_sched_copy(SCHED(sched), PTR(src), scount, DT(stype),
                             PTR(dst), dcount, DT(dtype), &n);
    return node_out(env, out, rc, n);
}

/* A callback node: the Java function of id `arg` (io.nbcx.Schedule's
 * table), on the thread that runs the node (nbcx's progress thread,
 * attached once as a daemon, or the application's in test/wait). */
static int call_node(void *arg)
{
    JNIEnv *env = env_of_this_thread();
    if (!env) return NBCX_ERR_NOMEM;
    jint rc = (*env)->CallStaticIntMethod(env, g_native_class, g_run_call,
                                          (jlong)(intptr_t)arg);
    if ((*env)->ExceptionCheck(env)) { /* runCall catches everything */
        (*env)->ExceptionClear(env);
        rc = NBCX_ERR_INTERN;
    }
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedCall(JNIEnv *env,
                                                     jclass cls, jlong sched,
                                                     jlong id, jintArray out)
{
    (void)cls;
    nbcx_node n = -1;
    int rc = nbcx_sched_call(SCHED(sched), call_node, PTR(id), &n);
    return node_out(env, out, rc, n);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedDepend(JNIEnv *env,
                                                       jclass cls, jlong sched,
                                                       jint before, jint after)
{
    (void)env, (void)cls;
    return nbcx_sched_depend(SCHED(sched), before, after);
}

/* Starts (the schedule then belongs to the request, or is freed on
 * error): the request in out[0]. */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedStart(JNIEnv *env,
                                                      jclass cls, jlong sched,
                                                      jobject out)
{
    (void)cls;
    nbcx_sched s = SCHED(sched);
    nbcx_request req = NBCX_REQUEST_NULL;
    int rc = nbcx_sched_start(&s, &req);
    set_req(env, out, req);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_schedFree(JNIEnv *env, jclass cls,
                                                     jlong sched)
{
    (void)env, (void)cls;
    nbcx_sched s = SCHED(sched);
    return nbcx_sched_free(&s);
}

/* ---------------------------------------------------------------- */
/* Topologies                                                        */
/* ---------------------------------------------------------------- */

JNIEXPORT jint JNICALL Java_io_nbcx_Native_setCart(JNIEnv *env, jclass cls,
                                                   jlong comm, jintArray dims,
                                                   jintArray periods)
{
    (void)cls;
    int n = (*env)->GetArrayLength(env, dims);
    int *d = ints(env, dims), *p = ints(env, periods);
    int rc = (d || n == 0) && (p || n == 0)
                 ? nbcx_comm_set_cart(COMM(comm), n, d, p)
                 : NBCX_ERR_NOMEM;
    release_ints(env, dims, d);
    release_ints(env, periods, p);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_setNeighbors(JNIEnv *env,
                                                        jclass cls, jlong comm,
                                                        jintArray sources,
                                                        jintArray dests)
{
    (void)cls;
    int nin = (*env)->GetArrayLength(env, sources);
    int nout = (*env)->GetArrayLength(env, dests);
    int *s = ints(env, sources), *d = ints(env, dests);
    int rc = (s || nin == 0) && (d || nout == 0)
                 ? nbcx_comm_set_neighbors(COMM(comm), nin, s, nout, d)
                 : NBCX_ERR_NOMEM;
    release_ints(env, sources, s);
    release_ints(env, dests, d);
    return rc;
}

/* out[0] = sources, out[1] = destinations (new arrays), or an error. */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_neighbors(JNIEnv *env, jclass cls,
                                                     jlong comm,
                                                     jobjectArray out)
{
    (void)cls;
    int nin = 0, nout = 0;
    int rc = nbcx_comm_neighbors_count(COMM(comm), &nin, &nout);
    if (rc != NBCX_SUCCESS) return rc;
    int *s = calloc((size_t)nin + 1, sizeof *s);
    int *d = calloc((size_t)nout + 1, sizeof *d);
    /* (no topology: 0 and 0, and empty lists) */
    rc = !s || !d ? NBCX_ERR_NOMEM
         : nin + nout > 0 ? nbcx_comm_neighbors(COMM(comm), nin, s, nout, d)
                          : NBCX_SUCCESS;
    if (rc == NBCX_SUCCESS) {
        jintArray js = (*env)->NewIntArray(env, nin);
        jintArray jd = js ? (*env)->NewIntArray(env, nout) : NULL;
        if (!js || !jd) {
            rc = NBCX_ERR_NOMEM;
        } else {
            (*env)->SetIntArrayRegion(env, js, 0, nin, s);
            (*env)->SetIntArrayRegion(env, jd, 0, nout, d);
            (*env)->SetObjectArrayElement(env, out, 0, js);
            (*env)->SetObjectArrayElement(env, out, 1, jd);
        }
    }
    free(s);
    free(d);
    return rc;
}

/* -1 while in flight, else the operation's result. */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_test(JNIEnv *env, jclass cls,
                                                jobject h)
{
    (void)cls;
    nbcx_request r = get_req(env, h);
    int flag = 0;
    int rc = nbcx_test(&r, &flag);
    set_req(env, h, r);
    if (rc == NBCX_SUCCESS && !flag) return -1;
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_await(JNIEnv *env, jclass cls,
                                                 jobject h)
{
    (void)cls;
    nbcx_request r = get_req(env, h);
    int rc = nbcx_wait(&r);
    set_req(env, h, r);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_start(JNIEnv *env, jclass cls,
                                                 jobject h)
{
    (void)cls;
    nbcx_request r = get_req(env, h);
    int rc = nbcx_start(&r);
    set_req(env, h, r);
    return rc;
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_requestFree(JNIEnv *env,
                                                       jclass cls,
                                                       jobject h)
{
    (void)cls;
    nbcx_request r = get_req(env, h);
    int rc = nbcx_request_free(&r);
    set_req(env, h, r);
    return rc;
}

/* Completion callbacks (nbcx_request_on_complete): the argument is the
 * request's id in Request.CALLBACKS, not a reference, so that a callback
 * that comes late (after a persistent request was closed) finds nothing
 * and no native memory outlives its request. The completing thread (the
 * progress thread, a rank thread in a test or wait, any Java thread) is
 * attached to the JVM if it is not (as a daemon, detached at its exit). */
static void on_complete(void *arg, int err)
{
    JNIEnv *env = env_of_this_thread();
    if (!env) return;
    (*env)->CallStaticVoidMethod(env, g_native_class, g_completed,
                                 (jlong)(intptr_t)arg, (jint)err);
    if ((*env)->ExceptionCheck(env)) /* completed() catches everything */
        (*env)->ExceptionClear(env);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_onComplete(JNIEnv *env,
                                                      jclass cls,
                                                      jobject h,
                                                      jlong id)
{
    (void)cls;
    return nbcx_request_on_complete(get_req(env, h), on_complete,
                                    (void *)(intptr_t)id);
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_progress(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return nbcx_progress();
}

/* ---------------------------------------------------------------- */
/* ThreadBarrier: a pthread barrier for threads of this process       */
/* ---------------------------------------------------------------- */

/* glibc's pthread_barrier_wait, as nbcx-bench's inproc driver uses: the
 * last thread to arrive wakes every waiter with one FUTEX_WAKE, and a
 * woken waiter returns without taking a lock. Java's own blocking (park
 * and unpark: a mutex and a condition variable per thread) makes the last
 * arrival wake the waiters one system call each, and every woken waiter
 * make one more on the way out (glibc marks the mutex it retakes after a
 * condition wait as contended, so unlocking it enters the kernel):
 * docs/results/java/s26. Returns 0 when out of memory or n < 1. */
JNIEXPORT jlong JNICALL Java_io_nbcx_Native_barrierCreate(JNIEnv *env,
                                                          jclass cls, jint n)
{
    (void)env, (void)cls;
    if (n < 1) return 0;
    pthread_barrier_t *b = malloc(sizeof *b);
    if (!b) return 0;
    if (pthread_barrier_init(b, NULL, (unsigned)n) != 0) {
        free(b);
        return 0;
    }
    return (jlong)(intptr_t)b;
}

/* Blocks in native code: the JVM does not wait for this thread at a
 * safepoint meanwhile. */
JNIEXPORT void JNICALL Java_io_nbcx_Native_barrierWait(JNIEnv *env,
                                                       jclass cls, jlong h)
{
    (void)env, (void)cls;
    pthread_barrier_wait(PTR(h));
}

JNIEXPORT void JNICALL Java_io_nbcx_Native_barrierFree(JNIEnv *env,
                                                       jclass cls, jlong h)
{
    (void)env, (void)cls;
    pthread_barrier_destroy(PTR(h));
    free(PTR(h));
}

/* ---------------------------------------------------------------- */
/* MPI: the JVM as one rank of an MPI job                            */
/* ---------------------------------------------------------------- */

JNIEXPORT jboolean JNICALL Java_io_nbcx_Native_hasMpi(JNIEnv *env,
                                                      jclass cls)
{
    (void)env, (void)cls;
#ifdef NBCXJNI_WITH_MPI
    return JNI_TRUE;
#else
    return JNI_FALSE;
#endif
}

#ifdef NBCXJNI_WITH_MPI
static int g_mpi_inited_here;

static int finalize_mpi_at_exit_registered;
static void finalize_mpi(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && g_mpi_inited_here) MPI_Finalize();
}
#endif

/* Initialises MPI (MPI_THREAD_MULTIPLE) if needed and returns, in out[0],
 * an nbcx communicator over MPI_COMM_WORLD. */
JNIEXPORT jint JNICALL Java_io_nbcx_Native_fromMpi(JNIEnv *env, jclass cls,
                                                   jlongArray out)
{
    (void)cls;
#ifdef NBCXJNI_WITH_MPI
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        /* Open MPI loads its components with dlopen and needs libmpi's
         * symbols global, which System.load does not make them. */
        Dl_info info;
        if (dladdr((void *)MPI_Init_thread, &info) && info.dli_fname)
            dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) !=
            MPI_SUCCESS)
            return NBCX_ERR_TRANSPORT;
        g_mpi_inited_here = 1;
        if (!finalize_mpi_at_exit_registered) {
            finalize_mpi_at_exit_registered = 1;
            atexit(finalize_mpi);
        }
    }
    nbcx_comm c = NBCX_COMM_NULL;
    int rc = nbcx_comm_from_mpi(MPI_COMM_WORLD, &c);
    jlong h = (jlong)(intptr_t)c;
    (*env)->SetLongArrayRegion(env, out, 0, 1, &h);
    return rc;
#else
    (void)env, (void)out;
    return NBCX_ERR_TRANSPORT;
#endif
}

JNIEXPORT jint JNICALL Java_io_nbcx_Native_mpiFinalize(JNIEnv *env,
                                                       jclass cls)
{
    (void)env, (void)cls;
#ifdef NBCXJNI_WITH_MPI
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && g_mpi_inited_here) MPI_Finalize();
#endif
    return NBCX_SUCCESS;
}

JNIEXPORT void JNICALL Java_io_nbcx_Native_mpiAbort(JNIEnv *env, jclass cls,
                                                    jint code)
{
    (void)env, (void)cls;
#ifdef NBCXJNI_WITH_MPI
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (inited && !fin) MPI_Abort(MPI_COMM_WORLD, code);
#else
    (void)code;
#endif
}
