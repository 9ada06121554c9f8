#define _GNU_SOURCE
#include <nbcx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
enum { REPS = 2400 };
static int R, size, sw; static pthread_barrier_t bar; static double t[8][REPS][3];
static double now(void){struct timespec s; clock_gettime(CLOCK_MONOTONIC,&s); return s.tv_sec*1e6+s.tv_nsec*1e-3;}
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank; nbcx_comm_rank(c, &rank);
    char *b = aligned_alloc(64, (size_t)size);
    nbcx_request q;
    for (int w = 0; w < 20000; w++) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); }
    for (int k = 0; k < REPS; k++) {
        if (sw) {
            pthread_barrier_wait(&bar);
            if (rank == 0) while (nbcx_progress_set(NBCX_PROGRESS_CALLER) == NBCX_ERR_REQUEST) ;
            pthread_barrier_wait(&bar);
            nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q);
            pthread_barrier_wait(&bar);
            if (rank == 0) while (nbcx_progress_set(NBCX_PROGRESS_AUTO) == NBCX_ERR_REQUEST) ;
            pthread_barrier_wait(&bar);
            for (int d = 0; d < sw; d++) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); }
        }
        pthread_barrier_wait(&bar);
        double t0 = now();
        nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q);
        double t1 = now();
        nbcx_wait(&q);
        double t2 = now();
        t[rank][k][0]=t0; t[rank][k][1]=t1; t[rank][k][2]=t2;
    }
    free(b); return 0;
}
int main(int argc, char **argv) {
    R = atoi(argv[1]); size = atoi(argv[2]); sw = argc > 4 ? atoi(argv[4]) : 0; pthread_barrier_init(&bar, NULL, R);
    nbcx_inproc_run(R, body, NULL);
    FILE *f = fopen(argv[3], "w");
    for (int k = 0; k < REPS; k++) for (int r = 0; r < R; r++) fprintf(f, "%d %d %.3f %.3f %.3f\n", k, r, t[r][k][0], t[r][k][1], t[r][k][2]);
    fclose(f); return 0;
}
