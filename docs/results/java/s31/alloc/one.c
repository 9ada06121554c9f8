/* C twin of One.java: ibcast + wait of SIZE bytes on RANKS thread ranks, 200,000 warm-up operations, then 5 rounds of N (ns per operation).
 *   gcc -O2 -Iinclude -Ibuild/nompi/include one.c -o one -Lbuild/nompi -lnbcx -lpthread -Wl,-rpath,$PWD/build/nompi
 *   ./one SIZE N [RANKS] */
#include <nbcx.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int size, n;
static double now(void){struct timespec s; clock_gettime(CLOCK_MONOTONIC,&s); return s.tv_sec*1e9+s.tv_nsec;}
static int body(nbcx_comm c, void *arg) {
    (void)arg; int rank; nbcx_comm_rank(c, &rank);
    char *b = aligned_alloc(64, (size_t)size); nbcx_request q;
    for (int w = 0; w < 200000; w++) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); }
    for (int rd = 0; rd < 5; rd++) { double t0 = now();
        for (int k = 0; k < n; k++) { nbcx_ibcast(b, size, NBCX_BYTE, 0, c, &q); nbcx_wait(&q); }
        if (rank == 0) printf("c %d B: %.1f ns/op\n", size, (now() - t0) / n); }
    free(b); return 0;
}
int main(int argc, char **argv) { size = atoi(argv[1]); n = atoi(argv[2]); nbcx_inproc_run(argc > 3 ? atoi(argv[3]) : 1, body, NULL); return 0; }
