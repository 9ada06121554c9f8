#define _GNU_SOURCE
#include <mpi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec*1e-3;}
#define N 200000
static struct { double t; const char *w; int a; } ev[N]; static int ne;
static void rec(const char *w, int a){ if (ne < N) { ev[ne].t = now(); ev[ne].w = w; ev[ne].a = a; ne++; } }
int PMPI_Isend(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm cm, MPI_Request *r) {
    static int (*f)(const void*,int,MPI_Datatype,int,int,MPI_Comm,MPI_Request*); if(!f) f=dlsym(RTLD_NEXT,"PMPI_Isend");
    rec("isend>", c); int rc = f(b,c,d,p,t,cm,r); rec("isend<", c); return rc; }
int PMPI_Irecv(void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm cm, MPI_Request *r) {
    static int (*f)(void*,int,MPI_Datatype,int,int,MPI_Comm,MPI_Request*); if(!f) f=dlsym(RTLD_NEXT,"PMPI_Irecv");
    rec("irecv>", c); int rc = f(b,c,d,p,t,cm,r); rec("irecv<", c); return rc; }
int PMPI_Testsome(int n, MPI_Request *q, int *o, int *ix, MPI_Status *st) {
    static int (*f)(int,MPI_Request*,int*,int*,MPI_Status*); if(!f) f=dlsym(RTLD_NEXT,"PMPI_Testsome");
    rec("testsome>", n); int rc = f(n,q,o,ix,st); if (*o > 0 && *o != MPI_UNDEFINED) rec("testsome-done", *o); else rec("testsome-none", n); return rc; }
void *memcpy(void *d, const void *s, size_t n) {
    static void *(*f)(void*,const void*,size_t); if(!f) f=dlsym(RTLD_NEXT,"memcpy");
    if (n >= 4096) rec("memcpy>", (int)n); void *r = f(d,s,n); if (n >= 4096) rec("memcpy<", (int)n); return r; }
int sched_yield(void) { static int (*f)(void); if(!f) f=dlsym(RTLD_NEXT,"sched_yield"); rec("yield", 0); return f(); }
int MPI_Finalize(void) {
    int rk; PMPI_Comm_rank(MPI_COMM_WORLD, &rk);
    char fn[64]; snprintf(fn, sizeof fn, "/tmp/agx/tl.%d.txt", rk); FILE *F = fopen(fn, "w");
    for (int i = 0; i < ne; i++) fprintf(F, "%.3f %s %d\n", ev[i].t, ev[i].w, ev[i].a);
    fclose(F); return PMPI_Finalize(); }
int PMPI_Waitall(int n, MPI_Request *q, MPI_Status *st) {
    static int (*f)(int,MPI_Request*,MPI_Status*); if(!f) f=dlsym(RTLD_NEXT,"PMPI_Waitall");
    rec("waitall>", n); int rc = f(n,q,st); rec("waitall<", n); return rc; }
typedef void *nbcx_comm_t;
int nbcx_iallgather(const void *a, int b, void *c, void *d, int e, void *f, void *g, void *h) {
    static int (*F)(const void*,int,void*,void*,int,void*,void*,void*); if(!F) F=dlsym(RTLD_NEXT,"nbcx_iallgather");
    rec("nbcx_iallgather>", 0); int rc = F(a,b,c,d,e,f,g,h); rec("nbcx_iallgather<", 0); return rc; }
int nbcx_wait(void *q) { static int (*F)(void*); if(!F) F=dlsym(RTLD_NEXT,"nbcx_wait");
    rec("nbcx_wait>", 0); int rc = F(q); rec("nbcx_wait<", 0); return rc; }
int PMPI_Barrier(MPI_Comm c) { static int (*F)(MPI_Comm); if(!F) F=dlsym(RTLD_NEXT,"PMPI_Barrier"); rec("barrier>",0); int rc=F(c); rec("barrier<",0); return rc; }
