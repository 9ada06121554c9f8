/* N rounds of ibcast or iscatter, 2 thread ranks, thread progress, direct: the per-op syscalls */
#include <nbcx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
static int N, SZ, SCAT;
static pthread_barrier_t bar;
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank, p; nbcx_comm_rank(c, &rank); nbcx_comm_size(c, &p);
    char *s = malloc((size_t)SZ * p), *r = malloc(SZ);
    memset(s, 1, (size_t)SZ * p);
    for (int k = 0; k < N; k++) {
        if (getenv("BAR")) pthread_barrier_wait(&bar);
        nbcx_request q;
        if (SCAT) nbcx_iscatter(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q);
        else nbcx_ibcast(r, SZ, NBCX_BYTE, 0, c, &q);
        nbcx_wait(&q);
    }
    free(s); free(r); return 0;
}
int main(int argc, char **argv) {
    N = atoi(argv[1]); SZ = atoi(argv[2]); SCAT = argv[3][0] == 's';
    nbcx_progress_set(NBCX_PROGRESS_THREAD);
    pthread_barrier_init(&bar, NULL, 2);
    int rc = nbcx_inproc_run(2, body, NULL);
    printf("rc %d\n", rc); return rc;
}
