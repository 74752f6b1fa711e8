#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int argc,char**argv){
  const char*path=argv[1]; int mode=atoi(argv[2]); size_t chunk=(size_t)atol(argv[3]); int n=atoi(argv[4]);
  size_t cap=(size_t)n*chunk;
  unlink(path);
  int fd=open(path,O_RDWR|O_CREAT,0600);
  posix_fallocate(fd,0,cap);
  char*buf=malloc(chunk); memset(buf,0x5a,chunk);
  if(mode==1){ /* read ahead whole */ int rfd=open(path,O_RDONLY); posix_fadvise(rfd,0,0,POSIX_FADV_RANDOM); char*b=malloc(1<<17); for(size_t o=0;o<cap;o+=1<<17) pread(rfd,b,1<<17,o); close(rfd);}
  if(mode==4){ int rfd=open(path,O_RDONLY); char*b=malloc(1<<20); for(size_t o=0;o<cap;o+=1<<20) pread(rfd,b,1<<20,o); close(rfd);}
  if(mode==2){ /* write zeros and sync */ char*z=calloc(1,1<<20); for(size_t o=0;o<cap;o+=1<<20) pwrite(fd,z,1<<20,o); fdatasync(fd);}
  if(mode==3){ /* write zeros, sync, drop cache */ char*z=calloc(1,1<<20); for(size_t o=0;o<cap;o+=1<<20) pwrite(fd,z,1<<20,o); fdatasync(fd); posix_fadvise(fd,0,0,POSIX_FADV_DONTNEED);}
  double tw=0,ts=0; double ws[10000],ss[10000];
  for(int i=0;i<n;i++){ double a=now(); pwrite(fd,buf,chunk,(off_t)i*chunk); double b=now(); fdatasync(fd); double c=now(); ws[i]=b-a; ss[i]=c-b; tw+=b-a; ts+=c-b;}
  int cmp(const void*x,const void*y){double d=*(double*)x-*(double*)y;return d<0?-1:d>0;}
  qsort(ws,n,sizeof(double),cmp); qsort(ss,n,sizeof(double),cmp);
  printf("mode %d chunk %zu: write med %.3f ms (tot %.1f), sync med %.3f p90 %.3f ms (tot %.1f)\n",mode,chunk,ws[n/2],tw,ss[n/2],ss[n*9/10],ts);
  unlink(path); return 0;}
