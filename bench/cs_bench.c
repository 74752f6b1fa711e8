/*
 * cs_bench.c - lwc-cs-bench: block-store benchmark of lwc-cloudstore.
 *
 *   lwc-cs-bench --addr HOST:PORT --key-file FILE [--blocks N] [--k LIST]
 *                [--reps R] [--seconds S] [--load] [--json FILE] [--label NAME]
 *
 * It plays the proxy's oblivious access (DESIGN section 5, step 3) without
 * the proxy's crypto: one statement touching k real blocks is ONE READ of
 * gamma = 2k block ids at their committed versions, then ONE WRITE of the
 * same gamma ids at version + 1.  The gamma blocks are drawn uniformly at
 * random without repetition from the n blocks of the store; the committed
 * version of every block is tracked in memory, as the proxy does in LMDB.
 *
 * Blocks have the default geometry: R = 128-byte records, slots of
 * S = R + 40 = 168 bytes, m = 64 slots, so m * S = 10752 bytes and a sealed
 * block is 10752 + 48 = 10800 bytes.  Written blocks look like sealed ones:
 * version (8 B big-endian) || fresh nonce (24 B) || random bytes (never
 * compressible, as real ciphertext).  Every READ checks that each block
 * comes back with the asked length and version header.
 *
 * --load first writes blocks 0..n-1 (random bytes, batches of --batch
 * blocks; version 1, or the next version of a block the store already
 * holds).  Without --load the store must already hold the n blocks; their
 * versions are learned with STAT.
 *
 * For each k: one untimed warm-up statement, then statements until at least
 * --reps were timed and --seconds elapsed (at most --max-reps).  Reported
 * per k: median and p95 statement latency (READ start to WRITE ack), median
 * READ and WRITE, blocks/s = gamma / median and MB/s = 2 * gamma * block
 * bytes / median (every block travels twice; MB = 10^6 bytes).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cry.h"
#include "cs_client.h"
#include "keyfile.h"

#define DEFAULT_BLOCKS    16384u
#define DEFAULT_RECORD    128u
#define DEFAULT_SLOTS     64u
#define DEFAULT_BATCH     512u
#define STAT_CHUNK        65536u
#define HDR_BYTES         (8u + CRY_NONCE_BYTES)    /* version || nonce */
#define MAX_KS            64

struct opts {
	const char *addr, *key_file, *json, *label;
	uint64_t blocks;
	uint32_t record, slots, batch;
	size_t ks[MAX_KS];
	size_t nks;
	unsigned reps, max_reps, warmup;
	double seconds;
	int load;
	int timeout_ms;
	uint64_t seed;
	int seed_set;
};

struct summary {
	double med, p95, mean, min, max;
};

struct kresult {
	size_t k, gamma;
	unsigned reps;
	struct summary total, read, write;
	double blocks_per_s, mb_per_s, statements_per_s;
	int skipped;
};

struct load_result {
	int done;
	uint64_t blocks;
	double seconds;         /* time inside WRITE calls                 */
	double wall;            /* including data generation and STAT      */
};

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nlwc-cs-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Progress on stderr: rewritten in place on a terminal, otherwise one line
 * at most every 5 s (final = 1 always prints, and ends the line). */
static int progress_tty = -1;
static double progress_last;
static int progress_open;

static void progress(int final, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(int final, const char *fmt, ...)
{
	va_list ap;
	double t = now_s();

	if (progress_tty < 0)
		progress_tty = isatty(2);
	if (!final && t - progress_last < (progress_tty ? 0.2 : 5.0))
		return;
	progress_last = t;
	if (progress_tty)
		fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (!progress_tty || final)
		fputc('\n', stderr);
	progress_open = progress_tty && !final;
	fflush(stderr);
}

static void progress_clear(void)
{
	if (progress_open) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		progress_open = 0;
	}
}

/* xoshiro256** seeded with splitmix64: the choice of blocks. */
static uint64_t rng_s[4];

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng_s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(void)
{
	uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;

	rng_s[2] ^= rng_s[0];
	rng_s[3] ^= rng_s[1];
	rng_s[1] ^= rng_s[2];
	rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t;
	rng_s[3] = rotl(rng_s[3], 45);
	return r;
}

/* Uniform in [0, bound), bound > 0, without modulo bias. */
static uint64_t rng_below(uint64_t bound)
{
	uint64_t lim = -bound % bound, r;

	do
		r = rng_next();
	while (r < lim);
	return r % bound;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median (mean of the two middle values when even), p95 by nearest rank. */
static struct summary summarize(const double *v, size_t n, double *scratch)
{
	struct summary s = { 0 };
	double sum = 0;
	size_t r;

	if (n == 0)
		return s;
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), cmp_dbl);
	for (size_t i = 0; i < n; i++)
		sum += scratch[i];
	s.mean = sum / (double)n;
	s.min = scratch[0];
	s.max = scratch[n - 1];
	s.med = n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
	r = (size_t)ceil(0.95 * (double)n);
	s.p95 = scratch[(r ? r : 1) - 1];
	return s;
}

/* ---- arguments ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-cs-bench --addr HOST:PORT --key-file FILE [options]\n"
		"\n"
		"Block-store benchmark of lwc-cloudstore: for each k, statements made of ONE\n"
		"READ of gamma = 2k random distinct blocks and ONE WRITE of the same blocks at\n"
		"version + 1 (the proxy's oblivious access).  Blocks of the default geometry:\n"
		"m = 64 slots of S = R + 40 bytes (R = 128), sealed: m*S + 48 = 10800 bytes.\n"
		"\n"
		"options:\n"
		"  --addr HOST:PORT    lwc-cloudstore to measure\n"
		"  --key-file FILE     K_CS (from 'lwc-cloudstore keygen')\n"
		"  --blocks N          blocks in the store, n (default %u)\n"
		"  --k LIST            comma-separated k values (default 1,2,4,...,4096);\n"
		"                      k with 2k > n are skipped\n"
		"  --reps R            at least R timed statements per k (default 3)\n"
		"  --max-reps R        at most R timed statements per k (default 2000)\n"
		"  --seconds S         keep going until S seconds elapsed per k (default 2)\n"
		"  --warmup W          untimed statements before each k (default 1)\n"
		"  --load              first write blocks 0..n-1 (random bytes)\n"
		"  --batch B           blocks per WRITE while loading (default %u)\n"
		"  --record-bytes R    record size R (default %u; slot S = R + 40)\n"
		"  --slots M           slots per block m (default %u)\n"
		"  --json FILE         write the results as JSON\n"
		"  --label NAME        name of this run in the output (default: the backend)\n"
		"  --seed N            seed of the block choice (default: random)\n"
		"  --timeout SEC       bound on every wait for the server (default 600)\n"
		"  -h, --help          this help\n",
		DEFAULT_BLOCKS, DEFAULT_BATCH, DEFAULT_RECORD, DEFAULT_SLOTS);
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void parse_ks(const char *arg, struct opts *o)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	uint64_t v;

	if (copy == NULL)
		die("out of memory");
	o->nks = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nks == MAX_KS)
			die("--k: at most %d values", MAX_KS);
		if (parse_u64(tok, 1, 1u << 24, &v) != 0)
			die("--k: '%s' is not a k in 1..%u", tok, 1u << 24);
		o->ks[o->nks++] = (size_t)v;
	}
	free(copy);
	if (o->nks == 0)
		die("--k: empty list");
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "key-file", required_argument, NULL, 'K' },
		{ "blocks", required_argument, NULL, 'n' },
		{ "k", required_argument, NULL, 'k' },
		{ "reps", required_argument, NULL, 'r' },
		{ "max-reps", required_argument, NULL, 'R' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "load", no_argument, NULL, 'L' },
		{ "batch", required_argument, NULL, 'b' },
		{ "record-bytes", required_argument, NULL, 'c' },
		{ "slots", required_argument, NULL, 'm' },
		{ "json", required_argument, NULL, 'j' },
		{ "label", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->blocks = DEFAULT_BLOCKS;
	o->record = DEFAULT_RECORD;
	o->slots = DEFAULT_SLOTS;
	o->batch = DEFAULT_BATCH;
	o->reps = 3;
	o->max_reps = 2000;
	o->warmup = 1;
	o->seconds = 2.0;
	o->timeout_ms = 600 * 1000;
	for (size_t k = 1; k <= 4096; k *= 2)
		o->ks[o->nks++] = k;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'a': o->addr = optarg; break;
		case 'K': o->key_file = optarg; break;
		case 'n':
			if (parse_u64(optarg, 2, 1ull << 32, &o->blocks) != 0)
				die("--blocks wants 2..%llu", 1ull << 32);
			break;
		case 'k': parse_ks(optarg, o); break;
		case 'r':
			if (parse_u64(optarg, 1, 1000000, &v) != 0)
				die("--reps wants 1..1000000");
			o->reps = (unsigned)v;
			break;
		case 'R':
			if (parse_u64(optarg, 1, 1000000, &v) != 0)
				die("--max-reps wants 1..1000000");
			o->max_reps = (unsigned)v;
			break;
		case 's':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || end == optarg || !(o->seconds >= 0) ||
			    o->seconds > 86400)
				die("--seconds wants a number of seconds in 0..86400");
			break;
		case 'w':
			if (parse_u64(optarg, 0, 1000, &v) != 0)
				die("--warmup wants 0..1000");
			o->warmup = (unsigned)v;
			break;
		case 'L': o->load = 1; break;
		case 'b':
			if (parse_u64(optarg, 1, 65536, &v) != 0)
				die("--batch wants 1..65536");
			o->batch = (uint32_t)v;
			break;
		case 'c':
			if (parse_u64(optarg, 1, 65536, &v) != 0)
				die("--record-bytes wants 1..65536");
			o->record = (uint32_t)v;
			break;
		case 'm':
			if (parse_u64(optarg, 1, 65536, &v) != 0)
				die("--slots wants 1..65536");
			o->slots = (uint32_t)v;
			break;
		case 'j': o->json = optarg; break;
		case 'l': o->label = optarg; break;
		case 'S':
			if (parse_u64(optarg, 0, UINT64_MAX, &o->seed) != 0)
				die("--seed wants a non-negative integer");
			o->seed_set = 1;
			break;
		case 't':
			if (parse_u64(optarg, 1, 86400, &v) != 0)
				die("--timeout wants 1..86400 seconds");
			o->timeout_ms = (int)v * 1000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lwc-cs-bench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if (o->addr == NULL || o->key_file == NULL) {
		fprintf(stderr, "lwc-cs-bench: --addr and --key-file are required\n");
		usage(stderr);
		exit(2);
	}
	if (o->max_reps < o->reps)
		o->max_reps = o->reps;
}

/* ---- the benchmark -------------------------------------------------------- */

struct bench {
	const struct opts *o;
	struct cs_client *cl;
	size_t bsize;            /* sealed block bytes        */
	uint64_t n;
	uint64_t *ver;           /* committed version per id  */
	uint64_t *perm;          /* ids, partially shuffled    */
	char backend[64];
	/* per statement */
	uint64_t *ids, *vers;
	struct cs_wblock *wb;
};

/* STAT of ids first..first+count-1; newest versions into b->ver (0 = absent). */
static void stat_versions(struct bench *b, uint64_t count, int record_backend)
{
	uint64_t *ids = malloc(STAT_CHUNK * sizeof(*ids));
	char err[512] = "";

	if (ids == NULL)
		die("out of memory");
	for (uint64_t off = 0; off < count; off += STAT_CHUNK) {
		size_t c = count - off < STAT_CHUNK ? (size_t)(count - off) : STAT_CHUNK;
		Lwc__CsResponse *resp = NULL;
		Lwc__CsStatResp *st;
		int rc;

		for (size_t i = 0; i < c; i++)
			ids[i] = off + i;
		rc = cs_client_stat(b->cl, ids, c, &resp, err, sizeof(err));
		if (rc != LWC_OK)
			die("STAT failed: %s", err[0] ? err : lwc_strerror(rc));
		st = resp->stat;
		if (st->n_held != c)
			die("STAT answered %zu entries for %zu ids", st->n_held, c);
		if (off == 0) {
			if (st->block_size != 0 && st->block_size != b->bsize)
				die("the store holds %u-byte blocks, this run uses %zu-byte blocks "
				    "(--record-bytes / --slots)", st->block_size, b->bsize);
			if (record_backend)
				snprintf(b->backend, sizeof(b->backend), "%s",
					 st->backend && st->backend[0] ? st->backend : "unknown");
		}
		for (size_t i = 0; i < c; i++) {
			Lwc__CsHeld *h = st->held[i];
			if (h->id != off + i)
				die("STAT answered for block %llu instead of %llu",
				    (unsigned long long)h->id, (unsigned long long)(off + i));
			b->ver[off + i] = h->n_versions ? h->versions[h->n_versions - 1] : 0;
		}
		cs_client_free_resp(resp);
	}
	free(ids);
}

static void fill_block(uint8_t *p, size_t len, uint64_t version, int fresh)
{
	cry_put_be64(p, version);
	if (fresh)
		randombytes_buf(p + 8, len - 8);
	else
		randombytes_buf(p + 8, CRY_NONCE_BYTES);
}

static void do_load(struct bench *b, struct load_result *lr)
{
	const struct opts *o = b->o;
	size_t batch = o->batch;
	uint8_t *data = malloc(batch * b->bsize);
	struct cs_wblock *wb = calloc(batch, sizeof(*wb));
	double t0 = now_s(), inside = 0;
	char err[512] = "";

	if (data == NULL || wb == NULL)
		die("out of memory");
	for (uint64_t off = 0; off < b->n; off += batch) {
		size_t c = b->n - off < batch ? (size_t)(b->n - off) : batch;
		double t;
		int rc;

		for (size_t i = 0; i < c; i++) {
			uint64_t id = off + i;
			wb[i].id = id;
			wb[i].version = b->ver[id] + 1;
			wb[i].data = data + i * b->bsize;
			wb[i].len = b->bsize;
			fill_block(data + i * b->bsize, b->bsize, wb[i].version, 1);
		}
		t = now_s();
		rc = cs_client_write(b->cl, wb, c, err, sizeof(err));
		inside += now_s() - t;
		if (rc != LWC_OK)
			die("load: WRITE of blocks %llu..%llu failed: %s",
			    (unsigned long long)off, (unsigned long long)(off + c - 1),
			    err[0] ? err : lwc_strerror(rc));
		for (size_t i = 0; i < c; i++)
			b->ver[off + i]++;
		progress(0, "load: %llu/%llu blocks (%.0f%%), %.1f MB/s",
			 (unsigned long long)(off + c), (unsigned long long)b->n,
			 100.0 * (double)(off + c) / (double)b->n,
			 (double)(off + c) * (double)b->bsize / 1e6 / inside);
	}
	lr->done = 1;
	lr->blocks = b->n;
	lr->seconds = inside;
	lr->wall = now_s() - t0;
	progress(1, "load: %llu blocks of %zu bytes in %.2f s (%.0f blocks/s, %.1f MB/s)",
		 (unsigned long long)b->n, b->bsize, lr->seconds,
		 (double)b->n / lr->seconds, (double)b->n * (double)b->bsize / 1e6 / lr->seconds);
	free(data);
	free(wb);
}

/* One statement over gamma random distinct blocks; latencies in seconds. */
static void statement(struct bench *b, size_t gamma, double *t_read, double *t_write,
		      double *t_total)
{
	Lwc__CsResponse *resp = NULL;
	Lwc__CsReadResp *rr;
	char err[512] = "";
	double t0, t1, t2, t3;
	int rc;

	/* partial Fisher-Yates: perm[0..gamma) is a uniform random gamma-subset */
	for (size_t i = 0; i < gamma; i++) {
		uint64_t j = i + rng_below(b->n - i), tmp = b->perm[i];
		b->perm[i] = b->perm[j];
		b->perm[j] = tmp;
	}
	/* the proxy sends the set in a canonical order (it leaks nothing more) */
	memcpy(b->ids, b->perm, gamma * sizeof(*b->ids));
	qsort(b->ids, gamma, sizeof(*b->ids), cmp_u64);
	for (size_t i = 0; i < gamma; i++)
		b->vers[i] = b->ver[b->ids[i]];

	t0 = now_s();
	rc = cs_client_read(b->cl, b->ids, b->vers, gamma, &resp, err, sizeof(err));
	t1 = now_s();
	if (rc != LWC_OK)
		die("READ of %zu blocks failed: %s", gamma, err[0] ? err : lwc_strerror(rc));
	rr = resp->read;
	for (size_t i = 0; i < gamma; i++) {
		Lwc__CsBlock *blk = rr->blocks[i];

		if (blk->id != b->ids[i] || blk->version != b->vers[i] ||
		    blk->data.len != b->bsize || cry_get_be64(blk->data.data) != b->vers[i])
			die("READ returned a wrong block at position %zu (id %llu version %llu, "
			    "%zu bytes; asked id %llu version %llu)", i,
			    (unsigned long long)blk->id, (unsigned long long)blk->version,
			    blk->data.len, (unsigned long long)b->ids[i],
			    (unsigned long long)b->vers[i]);
		/* re-seal stand-in: new version header and nonce, same random body */
		fill_block(blk->data.data, b->bsize, b->vers[i] + 1, 0);
		b->wb[i].id = b->ids[i];
		b->wb[i].version = b->vers[i] + 1;
		b->wb[i].data = blk->data.data;
		b->wb[i].len = b->bsize;
	}
	t2 = now_s();
	rc = cs_client_write(b->cl, b->wb, gamma, err, sizeof(err));
	t3 = now_s();
	if (rc != LWC_OK)
		die("WRITE of %zu blocks failed: %s", gamma, err[0] ? err : lwc_strerror(rc));
	/* total also holds the (small) client work between READ and WRITE */
	*t_read = t1 - t0;
	*t_write = t3 - t2;
	*t_total = t3 - t0;
	for (size_t i = 0; i < gamma; i++)
		b->ver[b->ids[i]]++;
	cs_client_free_resp(resp);
}

static void run_k(struct bench *b, size_t k, struct kresult *res)
{
	const struct opts *o = b->o;
	size_t gamma = 2 * k, cap = o->max_reps;
	double *tr = malloc(cap * sizeof(double)), *tw = malloc(cap * sizeof(double));
	double *tt = malloc(cap * sizeof(double)), *scratch = malloc(cap * sizeof(double));
	double start, r, w, t;
	unsigned reps = 0;

	if (!tr || !tw || !tt || !scratch)
		die("out of memory");
	memset(res, 0, sizeof(*res));
	res->k = k;
	res->gamma = gamma;
	for (unsigned i = 0; i < o->warmup; i++) {
		progress(0, "k=%zu (gamma=%zu): warm-up", k, gamma);
		statement(b, gamma, &r, &w, &t);
	}
	start = now_s();
	while (reps < o->reps || (reps < cap && now_s() - start < o->seconds)) {
		statement(b, gamma, &tr[reps], &tw[reps], &tt[reps]);
		reps++;
		progress(0, "k=%zu (gamma=%zu): %u statements, last %.1f ms",
			 k, gamma, reps, tt[reps - 1] * 1e3);
	}
	progress_clear();
	res->reps = reps;
	res->total = summarize(tt, reps, scratch);
	res->read = summarize(tr, reps, scratch);
	res->write = summarize(tw, reps, scratch);
	res->statements_per_s = 1.0 / res->total.med;
	res->blocks_per_s = (double)gamma / res->total.med;
	res->mb_per_s = 2.0 * (double)gamma * (double)b->bsize / 1e6 / res->total.med;
	free(tr);
	free(tw);
	free(tt);
	free(scratch);
}

/* ---- output ---------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_summary(FILE *f, const char *name, const struct summary *s)
{
	fprintf(f, "\"%s\": {\"median\": %.3f, \"p95\": %.3f, \"mean\": %.3f, "
		"\"min\": %.3f, \"max\": %.3f}", name, s->med * 1e3, s->p95 * 1e3,
		s->mean * 1e3, s->min * 1e3, s->max * 1e3);
}

static void write_json(const struct bench *b, const char *label, const struct load_result *lr,
		       const struct kresult *res, size_t nres, uint64_t seed)
{
	const struct opts *o = b->o;
	FILE *f = fopen(o->json, "w");
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int first = 1;

	if (f == NULL)
		die("cannot write %s: %s", o->json, strerror(errno));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, "{\n  \"tool\": \"lwc-cs-bench\",\n  \"label\": ");
	json_str(f, label);
	fprintf(f, ",\n  \"backend\": ");
	json_str(f, b->backend);
	fprintf(f, ",\n  \"date\": \"%s\",\n", when);
	fprintf(f, "  \"geometry\": {\"record_bytes\": %u, \"slot_bytes\": %u, "
		"\"slots_per_block\": %u, \"block_bytes\": %zu},\n",
		o->record, o->record + CRY_RECORD_OVERHEAD, o->slots, b->bsize);
	fprintf(f, "  \"blocks\": %llu,\n  \"seed\": %llu,\n",
		(unsigned long long)b->n, (unsigned long long)seed);
	fprintf(f, "  \"settings\": {\"min_reps\": %u, \"max_reps\": %u, \"seconds\": %g, "
		"\"warmup\": %u},\n", o->reps, o->max_reps, o->seconds, o->warmup);
	if (lr->done)
		fprintf(f, "  \"load\": {\"blocks\": %llu, \"batch\": %u, \"seconds\": %.3f, "
			"\"wall_seconds\": %.3f, \"blocks_per_s\": %.1f, \"mb_per_s\": %.2f},\n",
			(unsigned long long)lr->blocks, o->batch, lr->seconds, lr->wall,
			(double)lr->blocks / lr->seconds,
			(double)lr->blocks * (double)b->bsize / 1e6 / lr->seconds);
	else
		fprintf(f, "  \"load\": null,\n");
	fprintf(f, "  \"units\": {\"latency\": \"ms\", \"mb\": \"10^6 bytes\", "
		"\"mb_per_s\": \"2 * gamma * block_bytes / median total\", "
		"\"blocks_per_s\": \"gamma / median total\"},\n");
	fprintf(f, "  \"results\": [");
	for (size_t i = 0; i < nres; i++) {
		const struct kresult *r = &res[i];
		if (r->skipped)
			continue;
		fprintf(f, "%s\n    {\"k\": %zu, \"gamma\": %zu, \"reps\": %u,\n     ",
			first ? "" : ",", r->k, r->gamma, r->reps);
		json_summary(f, "total_ms", &r->total);
		fprintf(f, ",\n     ");
		json_summary(f, "read_ms", &r->read);
		fprintf(f, ",\n     ");
		json_summary(f, "write_ms", &r->write);
		fprintf(f, ",\n     \"statements_per_s\": %.3f, \"blocks_per_s\": %.1f, "
			"\"mb_per_s\": %.2f}", r->statements_per_s, r->blocks_per_s, r->mb_per_s);
		first = 0;
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) != 0)
		die("cannot write %s: %s", o->json, strerror(errno));
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bench b;
	struct load_result lr = { 0 };
	struct kresult *res;
	uint8_t key[32];
	char err[512] = "";
	size_t gmax = 0;
	uint64_t seed;
	const char *label;
	int rc;

	parse_args(argc, argv, &o);
	if (sodium_init() < 0)
		die("libsodium failed to initialise");
	memset(&b, 0, sizeof(b));
	b.o = &o;
	b.n = o.blocks;
	b.bsize = (size_t)o.slots * (o.record + CRY_RECORD_OVERHEAD) + CRY_SEAL_OVERHEAD;
	if (b.bsize < HDR_BYTES)
		die("block too small");
	if (o.seed_set)
		seed = o.seed;
	else
		randombytes_buf(&seed, sizeof(seed));
	rng_seed(seed);

	rc = keyfile_read(o.key_file, "LWC-CS-KEY", key, sizeof(key), err, sizeof(err));
	if (rc != LWC_OK)
		die("%s", err[0] ? err : lwc_strerror(rc));
	rc = cs_client_connect(&b.cl, o.addr, key, o.timeout_ms, err, sizeof(err));
	sodium_memzero(key, sizeof(key));
	if (rc != LWC_OK)
		die("cannot connect to %s: %s", o.addr, err[0] ? err : lwc_strerror(rc));

	b.ver = calloc(b.n, sizeof(*b.ver));
	b.perm = malloc(b.n * sizeof(*b.perm));
	res = calloc(o.nks, sizeof(*res));
	if (b.ver == NULL || b.perm == NULL || res == NULL)
		die("out of memory");
	for (uint64_t i = 0; i < b.n; i++)
		b.perm[i] = i;
	for (size_t i = 0; i < o.nks; i++)
		if (2 * o.ks[i] <= b.n && 2 * o.ks[i] > gmax)
			gmax = 2 * o.ks[i];
	b.ids = malloc((gmax ? gmax : 1) * sizeof(*b.ids));
	b.vers = malloc((gmax ? gmax : 1) * sizeof(*b.vers));
	b.wb = calloc(gmax ? gmax : 1, sizeof(*b.wb));
	if (b.ids == NULL || b.vers == NULL || b.wb == NULL)
		die("out of memory");

	stat_versions(&b, b.n, 1);
	label = o.label ? o.label : b.backend;
	printf("lwc-cs-bench: %s (backend %s) at %s\n", label, b.backend, o.addr);
	printf("store: n = %llu blocks of %zu bytes (R = %u, S = %u, m = %u), %.1f MB\n",
	       (unsigned long long)b.n, b.bsize, o.record, o.record + CRY_RECORD_OVERHEAD,
	       o.slots, (double)b.n * (double)b.bsize / 1e6);
	fflush(stdout);
	if (o.load) {
		do_load(&b, &lr);
		printf("load: %llu blocks in %.2f s, %.0f blocks/s, %.1f MB/s (WRITEs of %u blocks)\n",
		       (unsigned long long)lr.blocks, lr.seconds, (double)lr.blocks / lr.seconds,
		       (double)lr.blocks * (double)b.bsize / 1e6 / lr.seconds, o.batch);
	} else {
		for (uint64_t i = 0; i < b.n; i++)
			if (b.ver[i] == 0)
				die("the store holds no block %llu (of n = %llu): run with --load",
				    (unsigned long long)i, (unsigned long long)b.n);
	}
	printf("statement = READ of gamma = 2k random distinct blocks + WRITE of them at "
	       "version + 1; latencies in ms\n\n");
	printf("%6s %6s %6s %10s %10s %10s %10s %11s %9s\n", "k", "gamma", "reps",
	       "median", "p95", "READ med", "WRITE med", "blocks/s", "MB/s");
	fflush(stdout);
	for (size_t i = 0; i < o.nks; i++) {
		struct kresult *r = &res[i];

		if (2 * o.ks[i] > b.n) {
			r->skipped = 1;
			r->k = o.ks[i];
			fprintf(stderr, "lwc-cs-bench: k = %zu skipped: gamma = %zu exceeds n = %llu\n",
				o.ks[i], 2 * o.ks[i], (unsigned long long)b.n);
			continue;
		}
		run_k(&b, o.ks[i], r);
		printf("%6zu %6zu %6u %10.2f %10.2f %10.2f %10.2f %11.0f %9.1f\n", r->k, r->gamma,
		       r->reps, r->total.med * 1e3, r->total.p95 * 1e3, r->read.med * 1e3,
		       r->write.med * 1e3, r->blocks_per_s, r->mb_per_s);
		fflush(stdout);
	}
	if (o.json)
		write_json(&b, label, &lr, res, o.nks, seed);
	cs_client_close(b.cl);
	free(b.ver);
	free(b.perm);
	free(b.ids);
	free(b.vers);
	free(b.wb);
	free(res);
	return 0;
}
