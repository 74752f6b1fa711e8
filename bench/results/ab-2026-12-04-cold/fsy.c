#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
 const char*path=argv[1]; int mode=atoi(argv[2]); /* 0 fallocate, 1 zeros written */ int gap_us=atoi(argv[3]); size_t bs=atoi(argv[4]); int N=200;
 int fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0600); size_t cap=(size_t)N*bs+4096;
 posix_fallocate(fd,0,cap);
 char*b=calloc(1,bs); if(mode==1){ for(size_t o=0;o<cap;o+=bs) pwrite(fd,b,bs,o);} fsync(fd);
 memset(b,7,bs); double w[N],s[N];
 for(int i=0;i<N;i++){ if(gap_us>0) usleep(gap_us); else if(gap_us<0){double e=now()-gap_us/1e6; while(now()<e);} double t0=now(); pwrite(fd,b,bs,(size_t)i*bs); double t1=now(); fdatasync(fd); double t2=now(); w[i]=(t1-t0)*1e6; s[i]=(t2-t1)*1e6;}
 qsort(s,N,sizeof(double),cmp); qsort(w,N,sizeof(double),cmp);
 printf("mode %d gap %d bs %zu: write med %.0f  fdatasync med %.0f p10 %.0f p90 %.0f us\n",mode,gap_us,bs,w[N/2],s[N/2],s[N/10],s[N*9/10]);
 close(fd); unlink(path);}
