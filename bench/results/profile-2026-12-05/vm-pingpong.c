#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t mu=PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t cv=PTHREAD_COND_INITIALIZER; static int turn=0; static int N=20000;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static void*th(void*a){(void)a;for(int i=0;i<N;i++){pthread_mutex_lock(&mu);while(turn!=1)pthread_cond_wait(&cv,&mu);turn=0;pthread_cond_signal(&cv);pthread_mutex_unlock(&mu);}return 0;}
int main(void){pthread_t t;pthread_create(&t,0,th,0);double t0=now();for(int i=0;i<N;i++){pthread_mutex_lock(&mu);turn=1;pthread_cond_signal(&cv);while(turn!=0)pthread_cond_wait(&cv,&mu);pthread_mutex_unlock(&mu);}double d=now()-t0;pthread_join(t,0);printf("round trip %.1f us\n",d/N*1e6);return 0;}
