/* probe.c: nbcx-bench's repetition, N times on R thread ranks: [mode caller; barrier;
 * block op; mode auto; discarded op; barrier; t0; nbc op; t1] (the mode switches
 * with the last argument 1, the default; 0: auto throughout). Prints medians over
 * repetitions of max_r(t1-t0), the start skew and the time from the last start;
 * DUMP=file writes every rank's t0 and t1 (CLOCK_MONOTONIC ns) for window.py.
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude docs/results/java/s26/probe.c -o /tmp/probe \
 *       build/nompi/libnbcx.a -lhwloc -lpthread -lm
 *   /tmp/probe 4 1000 65536 s          # R N bytes b|s [switch] */
#include <nbcx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int N, SZ, SCAT, R, SWITCH; static nbcx_progress_mode M; static pthread_barrier_t bar; static long *T0, *T1;
static long now(void){struct timespec ts; clock_gettime(CLOCK_MONOTONIC,&ts); return ts.tv_sec*1000000000L+ts.tv_nsec;}
static void setmode(int rank, nbcx_progress_mode m){ pthread_barrier_wait(&bar); if(rank==0){ while(nbcx_progress_set(m)==NBCX_ERR_REQUEST){ struct timespec t={0,100000}; nanosleep(&t,NULL);} } pthread_barrier_wait(&bar); }
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank, p; nbcx_comm_rank(c, &rank); nbcx_comm_size(c, &p);
    char *s = malloc((size_t)SZ * p), *r = malloc(SZ); memset(s, 1, (size_t)SZ * p); memset(r, 0, SZ);
    nbcx_request q;
#define OP() do { if (SCAT) nbcx_iscatter(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q); else nbcx_ibcast(r, SZ, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); } while (0)
    for (int k = -50; k < N; k++) {
        if (SWITCH) setmode(rank, NBCX_PROGRESS_CALLER);
        pthread_barrier_wait(&bar); OP();
        if (SWITCH) { setmode(rank, M); OP(); }
        pthread_barrier_wait(&bar);
        long t0 = now(); OP(); long t1 = now();
        if (k >= 0) { T0[rank * N + k] = t0; T1[rank * N + k] = t1; }
    }
    free(s); free(r); return 0;
}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double med(double *v){ qsort(v,N,sizeof *v,cmp); return v[N/2]; }
int main(int argc, char **argv) {
    R = atoi(argv[1]); N = atoi(argv[2]); SZ = atoi(argv[3]); SCAT = argv[4][0] == 's'; SWITCH = argc > 5 ? atoi(argv[5]) : 1;
    M = NBCX_PROGRESS_AUTO;
    T0 = malloc(sizeof(long)*R*N); T1 = malloc(sizeof(long)*R*N);
    pthread_barrier_init(&bar, NULL, R);
    int rc = nbcx_inproc_run(R, body, NULL);
    double *a = malloc(sizeof(double)*N), *b = malloc(sizeof(double)*N), *c = malloc(sizeof(double)*N);
    for (int k = 0; k < N; k++) { long mx=0, mn0=T0[k], mx0=T0[k], mx1=T1[k];
        for (int r = 0; r < R; r++) { long d=T1[r*N+k]-T0[r*N+k]; if(d>mx)mx=d; if(T0[r*N+k]<mn0)mn0=T0[r*N+k]; if(T0[r*N+k]>mx0)mx0=T0[r*N+k]; if(T1[r*N+k]>mx1)mx1=T1[r*N+k]; }
        a[k]=mx/1e3; b[k]=(mx0-mn0)/1e3; c[k]=(mx1-mx0)/1e3; }
    printf("C    R=%d %s %6d sw%d: maxrank %6.1f us  startskew %6.1f us  fromlast %6.1f us  rc %d\n", R, SCAT?"scat ":"bcast", SZ, SWITCH, med(a), med(b), med(c), rc);
    const char *d = getenv("DUMP"); if (d) { FILE *f = fopen(d, "w"); for (int k = 0; k < N; k++) for (int r = 0; r < R; r++) fprintf(f, "%d %d %ld %ld\n", k, r, T0[r*N+k], T1[r*N+k]); fclose(f); }
    return rc;
}
