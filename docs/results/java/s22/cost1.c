/* 1 rank, caller progress: ns per start+wait (min of 7 batches) */
#include <nbcx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int N, SZ; static char OP;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int body(nbcx_comm c, void *arg) {
    (void)arg; char *s = malloc(SZ), *r = malloc(SZ); memset(s,1,SZ);
    double best = 1e30;
    for (int b = 0; b < 7; b++) {
        double t0 = now();
        for (int k = 0; k < N; k++) {
            nbcx_request q;
            if (OP=='s') nbcx_iscatter(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q);
            else if (OP=='g') nbcx_igather(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q);
            else nbcx_ibcast(r, SZ, NBCX_BYTE, 0, c, &q);
            nbcx_wait(&q);
        }
        double t = (now()-t0)/N; if (t < best) best = t;
    }
    printf("C %c %d: %.0f ns/op\n", OP, SZ, best); return 0;
}
int main(int argc, char **argv) {
    N = atoi(argv[1]); SZ = atoi(argv[2]); OP = argv[3][0];
    nbcx_progress_set(NBCX_PROGRESS_CALLER);
    return nbcx_inproc_run(1, body, NULL);
}
