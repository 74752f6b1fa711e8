#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rowmap.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t big=strtoul(argv[1],0,10); struct rowmap s={0},o={0};
  /* one big statement staged and merged */
  rowmap_reserve(&o, big+100000);
  for(size_t i=0;i<big;i++) rowmap_get(&s, i*7+1)->loc=i;
  rowmap_reserve(&o, s.n); rowmap_merge(&o,&s);
  double t=now(); int R=2000;
  for(int r=0;r<R;r++){ for(int k=0;k<20;k++) rowmap_get(&s,(uint64_t)(r*20+k)*13+5)->loc=1; rowmap_reserve(&o,s.n); rowmap_merge(&o,&s);} 
  printf("staged cap %zu after a statement of %zu: %.1f us per small statement's merge\n", s.cap, big, (now()-t)/R*1e6);
}
