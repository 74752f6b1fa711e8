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
 const char*path=argv[1]; int warm=atoi(argv[2]); int lead_us=atoi(argv[3]); size_t bs=65536; int N=150;
 int fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0600); size_t cap=(size_t)N*bs+4096;
 posix_fallocate(fd,0,cap); fsync(fd);
 int dfd=open(path,O_RDONLY|O_DIRECT); void*al; posix_memalign(&al,4096,4096);
 char*b=calloc(1,bs); memset(b,7,bs); double s[N],wv[N];
 for(int i=0;i<N;i++){ usleep(26000); double tw0=now();
   if(warm==1) pread(dfd,al,4096,(off_t)((i*7919)%N)*bs);
   if(warm==2) fdatasync(fd);
   wv[i]=(now()-tw0)*1e6;
   if(lead_us) usleep(lead_us);
   pwrite(fd,b,bs,(size_t)i*bs); double t1=now(); fdatasync(fd); double t2=now(); s[i]=(t2-t1)*1e6;}
 qsort(s,N,sizeof(double),cmp);qsort(wv,N,sizeof(double),cmp);
 printf("warm %d lead %d: warm-op med %.0f; fdatasync med %.0f p10 %.0f p90 %.0f us\n",warm,lead_us,wv[N/2],s[N/2],s[N/10],s[N*9/10]);
 close(fd); unlink(path);}
