/* C twin of PersVsNb.java: 4 thread ranks, ibcast SIZE bytes, nonblocking
 * and persistent alternated in blocks; median over reps of the slowest rank */
#define _GNU_SOURCE
#include <nbcx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
enum { R = 4, REPS = 400, ROUNDS = 6, N = REPS * ROUNDS };
static int size; static pthread_barrier_t bar; static double t[2][R][N];
static double now(void){struct timespec s; clock_gettime(CLOCK_MONOTONIC,&s); return s.tv_sec*1e6+s.tv_nsec*1e-3;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank; nbcx_comm_rank(c, &rank);
    char *b = aligned_alloc(64, (size_t)size);
    nbcx_request p, q;
    nbcx_bcast_init(b, size, NBCX_BYTE, 0, c, &p);
    for (int w = 0; w < 20000; w++) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); nbcx_start(&p); nbcx_wait(&p); }
    for (int rd = 0; rd < ROUNDS; rd++) for (int v = 0; v < 2; v++) for (int k = 0; k < REPS; k++) {
        pthread_barrier_wait(&bar);
        double t0 = now();
        if (v == 0) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); } else { nbcx_start(&p); nbcx_wait(&p); }
        t[v][rank][rd * REPS + k] = now() - t0;
    }
    nbcx_request_free(&p); free(b); return 0;
}
int main(int argc, char **argv) {
    size = atoi(argv[1]); pthread_barrier_init(&bar, NULL, R);
    nbcx_inproc_run(R, body, NULL);
    for (int v = 0; v < 2; v++) { double mx[N];
        for (int k = 0; k < N; k++) { mx[k] = 0; for (int q = 0; q < R; q++) if (t[v][q][k] > mx[k]) mx[k] = t[v][q][k]; }
        qsort(mx, N, sizeof *mx, cmp); printf("%s %d %.2f\n", v ? "persistent" : "nonblocking", size, mx[N/2]); }
    return 0;
}
