/* one.c: CPU time of one ibcast or iscatter (start + wait) on 1 thread rank, no peer to wait for:
 * the cost of the call path alone (One.java is the Java twin).
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude docs/results/java/s26/one.c -o /tmp/one build/nompi/libnbcx.a -lhwloc -lpthread -lm
 *   /tmp/one 200000 8192 b */
#include <nbcx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int N, SZ, SCAT;
static double cpu(void){struct timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&ts); return ts.tv_sec+1e-9*ts.tv_nsec;}
static int body(nbcx_comm c, void *arg) { (void)arg; int p; nbcx_comm_size(c,&p);
    char *s = calloc((size_t)SZ * p, 1), *r = calloc(SZ, 1); nbcx_request q;
    for (int round = 0; round < 3; round++) {
    double t0 = cpu();
    for (int k = 0; k < N; k++) { if (SCAT) nbcx_iscatter(s, SZ, NBCX_BYTE, r, SZ, NBCX_BYTE, 0, c, &q); else nbcx_ibcast(r, SZ, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); }
    double t = cpu() - t0;
    printf("C    1 rank %s %d: %.3f us CPU per op\n", SCAT?"iscatter":"ibcast", SZ, t / N * 1e6); }
    return 0; }
int main(int argc, char **argv){ N=atoi(argv[1]); SZ=atoi(argv[2]); SCAT=argv[3][0]=='s'; if(argc>4) nbcx_progress_set(argv[4][0]=='c'?NBCX_PROGRESS_CALLER:NBCX_PROGRESS_AUTO); return nbcx_inproc_run(1, body, NULL); }
