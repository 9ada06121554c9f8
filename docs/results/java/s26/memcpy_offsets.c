/* memcpy_offsets.c: one memcpy of N bytes (default 64 KiB) from src (at SRC mod 4096, default 16)
 * to dst at every offset mod 4096 (steps of 8), best of 3x20 copies in cache; prints the offsets
 * more than 5x slower than 1.6 us per 64 KiB.  gcc -O2 memcpy_offsets.c -o /tmp/mo; /tmp/mo 65536 16
 * GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1073741824 /tmp/mo   (no rep movsb: none slow) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc, char **argv){ size_t n = argc > 1 ? strtoul(argv[1],0,0) : 65536; int so = argc > 2 ? atoi(argv[2]) : 16;
  char *src = aligned_alloc(4096, n + 8192), *dst = aligned_alloc(4096, n + 8192); memset(src, 1, n + 8192); memset(dst, 0, n + 8192);
  int slow = 0;
  for (int d = 0; d < 4096; d += 8) {
    double best = 1e9; for (int r = 0; r < 3; r++) { double t0 = now(); for (int k = 0; k < 20; k++) { memcpy(dst + d, src + so, n); __asm__ volatile("" ::: "memory"); } double t = (now() - t0) / 20; if (t < best) best = t; }
    if (best * 1e6 > 5 * (n / 65536.0 * 1.6)) { printf("  dst%%4096=%4d (dst-src)%%4096=%4d: %.2f us\n", d, (d - so + 4096) % 4096, best * 1e6); slow++; } }
  printf("n=%zu src%%4096=%d: %d of 512 offsets slow (> 5x)\n", n, so, slow); return 0; }
