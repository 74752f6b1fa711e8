/*
 * rng.c - the servers' random numbers: a generator per thread, with fast
 * key erasure, installed into libsodium by cry_init_server().
 *
 * Each thread keeps a 32-byte ChaCha20 key and a buffer of its keystream.
 * A refill runs ChaCha20-IETF (libsodium's crypto_stream_chacha20_ietf,
 * nonce zero: a key is used for one refill only) over the buffer, takes the
 * first 32 bytes as the next key and hands out the rest, wiping each byte
 * as it goes, so that what is in memory now says nothing about what was
 * drawn before (Bernstein's "fast-key-erasure" generator).  A draw longer
 * than a quarter of the buffer takes a key of its own from the buffer and
 * runs the stream straight into the caller's memory.  Keys come from the
 * kernel through libsodium's sysrandom implementation: once per thread,
 * and again in a child after fork() (the child's copy of the state would
 * otherwise repeat the parent's draws).
 *
 * Why not libsodium's own "internal" generator, which the servers used
 * before (26 November 2026): in libsodium 1.0.18 it checks getpid() on
 * every call to catch a fork, a system call each, and a statement of the
 * proxy makes two draws a block (the refill's key, the seal's nonce).  On
 * this project's VMs, whose system calls are slow, a scattered 10k SELECT
 * made 33,968 getpid() calls, about 3 % of all the machine's samples
 * (docs/benchmarks.md, "3 December 2026, late").  Here a fork is caught by
 * a counter that pthread_atfork() raises in the child, read with one
 * relaxed load a draw.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "cry.h"

#define RNG_BUF    1024u               /* keystream bytes a refill makes   */
#define RNG_DIRECT (RNG_BUF / 4)       /* longer draws get their own key   */
#define RNG_CHUNK  ((size_t)1 << 30)   /* a direct draw's bytes per key    */

struct rng_state {
	uint8_t key[crypto_stream_chacha20_ietf_KEYBYTES];
	uint8_t buf[RNG_BUF];
	size_t pos;            /* buf[pos..RNG_BUF) not handed out yet */
	unsigned epoch;        /* rng_epoch when this state was keyed  */
	int keyed;
};

static _Thread_local struct rng_state rng;
static atomic_uint rng_epoch;
static pthread_key_t rng_exit_key;
static pthread_once_t rng_once = PTHREAD_ONCE_INIT;
static int rng_once_ok;

static void rng_after_fork(void)
{
	atomic_fetch_add_explicit(&rng_epoch, 1, memory_order_relaxed);
}

/* at a thread's exit: its key and unused keystream do not outlive it */
static void rng_exit(void *p)
{
	sodium_memzero(p, sizeof(struct rng_state));
}

static void rng_setup(void)
{
	rng_once_ok = pthread_atfork(NULL, NULL, rng_after_fork) == 0 &&
		      pthread_key_create(&rng_exit_key, rng_exit) == 0;
}

static void rng_refill(struct rng_state *s)
{
	static const uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES];

	crypto_stream_chacha20_ietf(s->buf, RNG_BUF, nonce, s->key);
	memcpy(s->key, s->buf, sizeof(s->key));
	sodium_memzero(s->buf, sizeof(s->key));
	s->pos = sizeof(s->key);
}

static struct rng_state *rng_get(void)
{
	struct rng_state *s = &rng;
	unsigned epoch = atomic_load_explicit(&rng_epoch, memory_order_relaxed);

	if (s->keyed && s->epoch == epoch)
		return s;
	if (!s->keyed)
		(void)pthread_setspecific(rng_exit_key, s);   /* wiped at exit */
	randombytes_sysrandom_implementation.buf(s->key, sizeof(s->key));
	s->epoch = epoch;
	s->keyed = 1;
	s->pos = RNG_BUF;            /* the keystream of any older key is not used */
	return s;
}

static void rng_take(struct rng_state *s, uint8_t *out, size_t n)
{
	while (n > 0) {
		size_t k;

		if (s->pos == RNG_BUF)
			rng_refill(s);
		k = RNG_BUF - s->pos;
		if (k > n)
			k = n;
		memcpy(out, s->buf + s->pos, k);
		sodium_memzero(s->buf + s->pos, k);
		s->pos += k;
		out += k;
		n -= k;
	}
}

static void rng_buf(void *const out, const size_t size)
{
	static const uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES];
	struct rng_state *s = rng_get();
	uint8_t *p = out, k1[crypto_stream_chacha20_ietf_KEYBYTES];
	size_t n = size;

	if (n <= RNG_DIRECT) {
		rng_take(s, p, n);
		return;
	}
	while (n > 0) {
		size_t c = n < RNG_CHUNK ? n : RNG_CHUNK;

		rng_take(s, k1, sizeof(k1));
		crypto_stream_chacha20_ietf(p, c, nonce, k1);
		p += c;
		n -= c;
	}
	sodium_memzero(k1, sizeof(k1));
}

static uint32_t rng_random(void)
{
	uint32_t v;

	rng_take(rng_get(), (uint8_t *)&v, sizeof(v));
	return v;
}

/* randombytes_stir(): this thread's key from the kernel again */
static void rng_stir(void)
{
	struct rng_state *s = rng_get();

	randombytes_sysrandom_implementation.buf(s->key, sizeof(s->key));
	sodium_memzero(s->buf, sizeof(s->buf));
	s->pos = RNG_BUF;
}

static int rng_close(void)
{
	sodium_memzero(&rng, sizeof(rng));
	return 0;
}

static const char *rng_name(void)
{
	return "lwc-fke";
}

static randombytes_implementation rng_implementation = {
	.implementation_name = rng_name,
	.random = rng_random,
	.stir = rng_stir,
	.uniform = NULL,              /* libsodium's rejection over random() */
	.buf = rng_buf,
	.close = rng_close,
};

int cry_rng_install(void)
{
	if (pthread_once(&rng_once, rng_setup) != 0 || !rng_once_ok)
		return LWC_ERR_CRYPTO;
	if (randombytes_set_implementation(&rng_implementation) != 0)
		return LWC_ERR_CRYPTO;
	return LWC_OK;
}
