#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#define BS 10800
#define SZ (256u<<20)
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(void){
  int fd=open("/var/tmp/mm.dat",O_RDWR|O_CREAT,0600); ftruncate(fd,SZ);
  char *buf=malloc(1<<20); memset(buf,7,1<<20);
  for(unsigned o=0;o<SZ;o+=1<<20) pwrite(fd,buf,1<<20,o);
  fsync(fd);
  size_t nb=SZ/BS; int N=16000; size_t *off=malloc(N*sizeof *off);
  srand(1); for(int i=0;i<N;i++) off[i]=(size_t)(rand()%nb)*BS;
  char *dst=malloc((size_t)N*BS); volatile char sink=0;
  for(int round=0;round<3;round++){
    double t0=now();
    for(int i=0;i<N;i++){struct iovec v={dst+(size_t)i*BS,BS}; preadv2(fd,&v,1,off[i],RWF_NOWAIT);} 
    double t1=now();
    char *m=mmap(NULL,SZ,PROT_READ,MAP_SHARED,fd,0);
    double t2=now();
    for(int i=0;i<N;i++) memcpy(dst+(size_t)i*BS,m+off[i],BS);
    double t3=now();
    for(int i=0;i<N;i++) memcpy(dst+(size_t)i*BS,m+off[i],BS);
    double t4=now();
    munmap(m,SZ);
    char *p=mmap(NULL,SZ,PROT_READ,MAP_SHARED|MAP_POPULATE,fd,0);
    double t5=now();
    for(int i=0;i<N;i++) memcpy(dst+(size_t)i*BS,p+off[i],BS);
    double t6=now(); munmap(p,SZ);
    sink+=dst[5];
    printf("pread %.2f us/blk; mmap first %.2f; mmap again %.2f; populate %.0f ms then %.2f\n",(t1-t0)/N,(t3-t2)/N,(t4-t3)/N,(t5-t4)/1e3,(t6-t5)/N);
  }
  unlink("/var/tmp/mm.dat"); return sink==99;
}
