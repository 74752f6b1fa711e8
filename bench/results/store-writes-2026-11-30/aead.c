#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
  sodium_init(); size_t L=10800-40, nb=atoi(argv[1]); int reps=atoi(argv[2]);
  unsigned char *buf=malloc(nb*(L+16)); unsigned char k[32],n[24],tag[16]; randombytes_buf(k,32); randombytes_buf(n,24);
  randombytes_buf(buf,nb*(L+16));
  double t0=now(); unsigned long long ml;
  for(int r=0;r<reps;r++) for(size_t i=0;i<nb;i++){unsigned char*p=buf+i*(L+16);
    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(p,tag,&ml,p,L,NULL,0,NULL,n,k);}
  double t=now()-t0; printf("nb %zu: %.2f us per 10.8KB seal\n",nb,t*1e6/(reps*nb));
  t0=now(); for(int r=0;r<reps;r++) for(size_t i=0;i<nb;i++){unsigned char*p=buf+i*(L+16); crypto_stream_chacha20_ietf_xor(p,p,L,n,k);}
  t=now()-t0; printf("   chacha20 only %.2f us\n",t*1e6/(reps*nb));
  t0=now(); for(int r=0;r<reps;r++) for(size_t i=0;i<nb;i++){unsigned char*p=buf+i*(L+16); crypto_onetimeauth_poly1305(tag,p,L,k);}
  t=now()-t0; printf("   poly1305 only %.2f us\n",t*1e6/(reps*nb));
  return 0;}
