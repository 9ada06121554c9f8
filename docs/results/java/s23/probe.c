/* probe: N reps of [barrier; t0; i<op>; wait; t1] on R thread ranks, mode M.
 * Prints medians over reps of: max_r(t1-t0) (what the bench reports),
 * start skew max_r t0 - min_r t0, and max_r t1 - max_r t0 (from the last start). */
#include <nbcx.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int N, SZ, SCAT, R; static pthread_barrier_t bar; static long *T0, *T1;
static long now(void){struct timespec ts; clock_gettime(CLOCK_MONOTONIC,&ts); return ts.tv_sec*1000000000L+ts.tv_nsec;}
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank, p; nbcx_comm_rank(c, &rank); nbcx_comm_size(c, &p);
    char *s = malloc((size_t)SZ * p), *r = malloc(SZ); memset(s, 1, (size_t)SZ * p); memset(r, 0, SZ);
    for (int k = -200; k < N; k++) {
        pthread_barrier_wait(&bar);
        long t0 = now();
        nbcx_request q;
        if (SCAT) nbcx_iscatter(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q);
        else nbcx_ibcast(r, SZ, NBCX_BYTE, 0, c, &q);
        nbcx_wait(&q);
        long t1 = now();
        if (k >= 0) { T0[rank * N + k] = t0; T1[rank * N + k] = t1; }
    }
    free(s); free(r); return 0;
}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double med(double *v){ qsort(v,N,sizeof *v,cmp); return v[N/2]; }
int main(int argc, char **argv) {
    R = atoi(argv[1]); N = atoi(argv[2]); SZ = atoi(argv[3]); SCAT = argv[4][0] == 's';
    const char *m = argv[5];
    nbcx_progress_set(m[0]=='c'?NBCX_PROGRESS_CALLER:m[0]=='t'?NBCX_PROGRESS_THREAD:NBCX_PROGRESS_AUTO);
    T0 = malloc(sizeof(long)*R*N); T1 = malloc(sizeof(long)*R*N);
    pthread_barrier_init(&bar, NULL, R);
    int rc = nbcx_inproc_run(R, body, NULL);
    double *a = malloc(sizeof(double)*N), *b = malloc(sizeof(double)*N), *c = malloc(sizeof(double)*N);
    for (int k = 0; k < N; k++) { long mx=0, mn0=T0[k], mx0=T0[k], mx1=T1[k];
        for (int r = 0; r < R; r++) { long d=T1[r*N+k]-T0[r*N+k]; if(d>mx)mx=d; if(T0[r*N+k]<mn0)mn0=T0[r*N+k]; if(T0[r*N+k]>mx0)mx0=T0[r*N+k]; if(T1[r*N+k]>mx1)mx1=T1[r*N+k]; }
        a[k]=mx/1e3; b[k]=(mx0-mn0)/1e3; c[k]=(mx1-mx0)/1e3; }
    printf("C    %-6s R=%d %s %6d: maxrank %6.1f us  startskew %6.1f us  fromlast %6.1f us  rc %d\n", m, R, SCAT?"scat ":"bcast", SZ, med(a), med(b), med(c), rc);
    return rc;
}
