#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static size_t per, bs=12288, fsz=(size_t)128<<20; static char *buf;
struct p { int fd; unsigned seed; };
static void *run(void *a){ struct p *q=a; for(size_t i=0;i<per;i++){ size_t off=(size_t)(rand_r(&q->seed)%(fsz/bs))*bs; if(pwrite(q->fd,buf,bs,off)<0) return NULL;} fdatasync(q->fd); return NULL;}
int main(int argc,char**argv){ int n=atoi(argv[1]); per=1024/n; buf=aligned_alloc(4096,1<<20); memset(buf,3,1<<20);
  struct p ps[16]; for(int j=0;j<n;j++){ char path[64]; snprintf(path,64,"/tmp/dwn%d",j); ps[j].fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0600); ps[j].seed=j+1;
    for(size_t o=0;o<fsz;o+=1<<20) if(pwrite(ps[j].fd,buf,1<<20,o)<0) return 1; fdatasync(ps[j].fd);}
  double ts[9]; for(int r=0;r<9;r++){ pthread_t th[16]; double t0=now(); for(int j=0;j<n;j++) pthread_create(&th[j],NULL,run,&ps[j]); for(int j=0;j<n;j++) pthread_join(th[j],NULL); ts[r]=(now()-t0)*1e6/1024; }
  for(int i=0;i<9;i++) for(int k=i+1;k<9;k++) if(ts[k]<ts[i]){double x=ts[i];ts[i]=ts[k];ts[k]=x;}
  printf("%d files in parallel, 1024 blocks: median %.1f us a block (min %.1f max %.1f)\n",n,ts[4],ts[0],ts[8]);
  for(int j=0;j<n;j++){ char path[64]; snprintf(path,64,"/tmp/dwn%d",j); unlink(path);} return 0;}
