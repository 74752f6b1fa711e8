/* wake.c - what one thread waking another costs on this machine, after an idle gap:
 * a pipe ping-pong between two threads (as a socket hand-off does), gap G us between rounds. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int p1[2], p2[2];
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static void *echo(void *a){char c;(void)a;for(;;){if(read(p1[0],&c,1)!=1)break;write(p2[1],&c,1);}return NULL;}
static int cmp(const void*x,const void*y){double d=*(double*)x-*(double*)y;return d<0?-1:d>0;}
int main(int argc,char**argv){
  int gap=atoi(argv[1]), n=atoi(argv[2]); double *rt=malloc(n*sizeof(double)); pthread_t th; char c='x';
  pipe(p1);pipe(p2);pthread_create(&th,NULL,echo,NULL);
  for(int i=0;i<n;i++){ if(gap) usleep(gap); double a=now(); write(p1[1],&c,1); read(p2[0],&c,1); rt[i]=now()-a; }
  qsort(rt,n,sizeof(double),cmp);
  printf("gap %6d us: round trip (two wakes) median %.1f us, p90 %.1f us\n",gap,rt[n/2],rt[n*9/10]);
  return 0;}
