#include <sodium.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
	enum{N=10800,R=20000};
	static unsigned char m[N],c[N+64],k[32],n[24];
	unsigned long long cl; double t;
	if(sodium_init()<0)return 1;
	randombytes_buf(m,N);randombytes_buf(k,32);
	t=now();for(int i=0;i<R;i++)crypto_aead_xchacha20poly1305_ietf_encrypt(c,&cl,m,N,NULL,0,NULL,n,k);
	t=now()-t;printf("xchacha20poly1305 seal of %d B: %.2f us, %.0f MB/s\n",N,t/R*1e6,(double)N*R/t/1e6);
	crypto_secretstream_xchacha20poly1305_state st;unsigned char h[24];
	crypto_secretstream_xchacha20poly1305_init_push(&st,h,k);
	t=now();for(int i=0;i<R;i++)crypto_secretstream_xchacha20poly1305_push(&st,c,&cl,m,N,NULL,0,0);
	t=now()-t;printf("secretstream push of %d B: %.2f us, %.0f MB/s\n",N,t/R*1e6,(double)N*R/t/1e6);
	t=now();for(int i=0;i<R;i++)crypto_stream_chacha20_ietf(c,N,n,k);
	t=now()-t;printf("chacha20 keystream %d B: %.2f us\n",N,t/R*1e6);
	t=now();for(int i=0;i<R;i++)crypto_onetimeauth_poly1305(c,m,N,k);
	t=now()-t;printf("poly1305 %d B: %.2f us\n",N,t/R*1e6);
	return 0;}
