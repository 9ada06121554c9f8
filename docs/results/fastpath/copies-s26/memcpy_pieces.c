/* memcpy_pieces.c - one copy of N bytes, dst GAP bytes past src modulo 4 KiB
 * (src at 16 mod 4096), best of 5x20 copies in cache: memcpy as a whole
 * and in pieces of 4096, 2048, 1024 and 512 bytes (the last three below
 * glibc 2.36's rep movsb threshold, 2,112 bytes on this machine).
 *   gcc -O2 memcpy_pieces.c -o /tmp/mp && /tmp/mp 65536   (session 26) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
static void chunked(char *d, const char *s, size_t n, size_t c){ for (size_t o=0;o<n;o+=c){size_t k=n-o<c?n-o:c; memcpy(d+o,s+o,k);} }
int main(int argc,char**argv){ size_t n=strtoul(argv[1],0,0);
  char *src=aligned_alloc(4096,n+8192),*dst=aligned_alloc(4096,n+8192); memset(src,1,n+8192); memset(dst,0,n+8192);
  int gaps[]={0,8,16,24,32,48,64,128,2048,4088};
  for (int g=0; g<10; g++){ printf("n=%zu gap %4d:", n, gaps[g]);
    size_t cs[]={0,4096,2048,1024,512};
    for (int ci=0; ci<5; ci++){ double best=1e9; for(int r=0;r<5;r++){double t0=now(); for(int k=0;k<20;k++){ if(cs[ci]) chunked(dst+16+gaps[g],src+16,n,cs[ci]); else memcpy(dst+16+gaps[g],src+16,n); __asm__ volatile(""::: "memory");} double t=(now()-t0)/20; if(t<best)best=t;}
      printf("  %s%zu %.2f", cs[ci]?"c":"memcpy", cs[ci], best*1e6); }
    printf(" us\n"); }
  return 0; }
