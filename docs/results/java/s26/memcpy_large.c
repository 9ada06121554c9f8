/* memcpy_large.c: one memcpy of N bytes from 16 bytes past a page to distances 0, 16, 64, 512, 2912, 4000
 * (destination past source, modulo 4096); best of 5x10.  gcc -O2 memcpy_large.c -o /tmp/ml; /tmp/ml 1048576 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc, char **argv){ size_t n = strtoul(argv[1],0,0); int so = 16;
  char *src = aligned_alloc(4096, n + 8192), *dst = aligned_alloc(4096, n + 8192); memset(src, 1, n + 8192); memset(dst, 0, n + 8192);
  int ds[] = {0, 16, 64, 512, 2912, 4000};
  for (int i = 0; i < 6; i++) { int d = (so + ds[i]) % 4096; double best = 1e9;
    for (int r = 0; r < 5; r++) { double t0 = now(); for (int k = 0; k < 10; k++) { memcpy(dst + d, src + so, n); __asm__ volatile("" ::: "memory"); } double t = (now() - t0) / 10; if (t < best) best = t; }
    printf("n=%zu distance %4d: %.1f us\n", n, ds[i], best * 1e6); }
  return 0; }
