#include <pthread.h>
#include <stdlib.h>
static int R; static pthread_barrier_t bar;
static void *run(void *a){ (void)a; for(int k=0;k<R;k++) pthread_barrier_wait(&bar); return 0; }
int main(int c,char**v){ int n=atoi(v[1]); R=atoi(v[2]); pthread_barrier_init(&bar,0,n); pthread_t th[64];
 for(int i=0;i<n;i++) pthread_create(&th[i],0,run,0); for(int i=0;i<n;i++) pthread_join(th[i],0); return 0; }
