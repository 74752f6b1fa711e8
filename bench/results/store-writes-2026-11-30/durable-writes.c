#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  size_t nb=atoi(argv[1]); int scattered=atoi(argv[2]); int rounds=atoi(argv[3]);
  size_t bs=12288, fsz=(size_t)1<<30; int fd=open(argv[4],O_RDWR|O_CREAT,0600);
  char*buf=aligned_alloc(4096,bs); memset(buf,7,bs);
  if (ftruncate(fd,fsz)) return 1;
  /* warm: write the whole file once */
  char *big=malloc(1<<20); memset(big,1,1<<20); for(size_t o=0;o<fsz;o+=1<<20) pwrite(fd,big,1<<20,o); fdatasync(fd);
  double tot=0;
  for(int r=0;r<rounds;r++){ size_t base=(size_t)(rand()%(fsz/bs - nb))*bs;
    double t0=now();
    for(size_t i=0;i<nb;i++){ size_t off = scattered ? (size_t)(rand()%(fsz/bs))*bs : base+i*bs; pwrite(fd,buf,bs,off);} 
    fdatasync(fd); tot+=now()-t0; }
  printf("nb %zu scattered %d: %.1f us per block (%.1f ms per batch, %.0f MB/s)\n",nb,scattered,tot*1e6/(rounds*nb),tot*1e3/rounds, rounds*nb*bs/tot/1e6);
  unlink(argv[4]); return 0;}
