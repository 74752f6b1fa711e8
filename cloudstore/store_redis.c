/*
 * store_redis.c - the Redis Cluster block-store backend
 * ("redis-cluster:HOST:PORT[,HOST:PORT...][,wait=N][,timeout=MS][,prefix=P]").
 *
 * Keys (P = prefix, default "lwc"; the {...} part is the hash tag, so the
 * versions of one block live in one hash in one slot):
 *   P:b{ID}     hash: decimal version -> the block's bytes
 *   P:n{TAG}    hash: b -> blocks, v -> versions held, for the blocks of the
 *               slot TAG hashes to (one TAG per slot, found at open), so a
 *               block and its slot's counters change in one script
 *   P:meta      hash: bs -> the store's block size
 * The cloud sees block ids, versions and sealed bytes: nothing else.
 *
 * A WRITE: (1) the versions held of every block, pipelined by node, and
 * the version rule (store.h) for each: any failure stops the WRITE before
 * anything changes; (2) one Lua script per block, pipelined by node, that
 * checks the block still holds what (1) saw, stores the new version, drops
 * those older than the new one - 1 and moves the slot's counters - atomic
 * per block.  With wait=N every node's share is followed by WAIT N and sent
 * again until N replicas have it (the script repeated is a no-op that still
 * writes, so WAIT covers it).
 *
 * Atomicity is per block, not per WRITE: a WRITE cut short (a node lost
 * for longer than the timeout, the cloud store killed) may leave some of
 * its blocks at the new version.  The proxy never references a version it
 * did not commit, the previous version stays until the next WRITE of the
 * block, and writing the same version again is allowed (DESIGN section 7),
 * so a partial WRITE is as harmless as a whole one that was not
 * acknowledged.  docs/operations.md says what this means for operators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_cluster.h"
#include "rc_parse.h"
#include "store.h"

#define RC_KEY_MAX    (RC_PREFIX_MAX + 32)  /* P:b{18446744073709551615}      */
#define RC_VER_MAX    24                     /* a decimal uint64 and its NUL   */
#define RC_HELD_LIMIT 64                     /* versions of one block, at most */
#define RC_TAG_MAX    8

static const char write_lua[] =
	"local n = tonumber(ARGV[5])\n"
	"local same = redis.call('HLEN', KEYS[1]) == n\n"
	"if same then\n"
	"  for i = 6, 5 + n do\n"
	"    if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then same = false break end\n"
	"  end\n"
	"end\n"
	"if not same then\n"
	"  if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then\n"
	"    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
	"    return 2\n"
	"  end\n"
	"  return 0\n"
	"end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
	"for i = 6 + n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end\n"
	"if ARGV[3] ~= '0' then redis.call('HINCRBY', KEYS[2], 'b', ARGV[3]) end\n"
	"if ARGV[4] ~= '0' then redis.call('HINCRBY', KEYS[2], 'v', ARGV[4]) end\n"
	"return 1\n";

struct cs_store {
	struct rc_spec spec;
	char tag[RC_SLOTS][RC_TAG_MAX];  /* a hash tag of every slot */
	char meta[RC_KEY_MAX];
};

struct cs_session {
	struct cs_store *st;
	struct rc_cluster *cl;
	uint32_t bs;                    /* the block size once known, else 0 */
};

/* Versions held of one block, as read by HKEYS. */
struct rc_held {
	size_t n;
	uint64_t v[RC_HELD_LIMIT];      /* ascending */
	char f[RC_HELD_LIMIT][RC_VER_MAX];
};

/* Tags found by counting in base 36 until every slot has one (about 170,000
 * CRCs); deterministic, so every cloud store agrees. */
static void find_tags(struct cs_store *st)
{
	static const char dig[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	size_t found = 0;

	memset(st->tag, 0, sizeof(st->tag));
	for (unsigned long i = 0; found < RC_SLOTS; i++) {
		char t[RC_TAG_MAX];
		unsigned long x = i;
		size_t len = 0;
		unsigned s;

		do {
			t[len++] = dig[x % 36];
			x /= 36;
		} while (x != 0 && len < RC_TAG_MAX - 1);
		t[len] = '\0';
		s = rc_crc16(t, len) & (RC_SLOTS - 1);
		if (st->tag[s][0] == '\0') {
			memcpy(st->tag[s], t, len + 1);
			found++;
		}
	}
}

static size_t block_key(const struct cs_store *st, uint64_t id, char *out)
{
	return (size_t)snprintf(out, RC_KEY_MAX, "%s:b{%llu}", st->spec.prefix,
				(unsigned long long)id);
}

static size_t count_key(const struct cs_store *st, unsigned slot, char *out)
{
	return (size_t)snprintf(out, RC_KEY_MAX, "%s:n{%s}", st->spec.prefix, st->tag[slot]);
}

static void cmd_set(struct rc_cmd *c, const char *key, size_t keylen, int argc,
		    const char **argv, size_t *argvlen)
{
	memset(c, 0, sizeof(*c));
	c->slot = rc_key_slot(key, keylen);
	c->argc = argc;
	c->argv = argv;
	c->argvlen = argvlen;
}

/* An error reply as a store error. */
static int reply_err(const redisReply *r, const char *what, char *err, size_t errlen)
{
	if (r != NULL && r->type == REDIS_REPLY_ERROR)
		lwc_errf(err, errlen, "redis-cluster: %s: %.*s", what,
			 (int)(r->len > 200 ? 200 : r->len), r->str);
	else
		lwc_errf(err, errlen, "redis-cluster: %s: unexpected answer (type %d)", what,
			 r ? r->type : -1);
	return LWC_ERR_STORE;
}

/* The block size in P:meta (0 when unset). */
static int meta_get(struct cs_session *s, uint64_t *bs, char *err, size_t errlen)
{
	const char *argv[3] = { "HGET", s->st->meta, "bs" };
	size_t argvlen[3] = { 4, strlen(s->st->meta), 2 };
	struct rc_cmd c;
	int rc;

	cmd_set(&c, argv[1], argvlen[1], 3, argv, argvlen);
	if ((rc = rc_cluster_exec(s->cl, &c, 1, 0, err, errlen)) != LWC_OK)
		return rc;
	*bs = 0;
	if (c.reply->type == REDIS_REPLY_STRING) {
		if (rc_parse_u64(c.reply->str, c.reply->len, bs) != LWC_OK ||
		    *bs > CS_BLOCK_SIZE_MAX) {
			lwc_errf(err, errlen, "redis-cluster: %s holds an invalid block size",
				 s->st->meta);
			rc = LWC_ERR_STORE;
		}
	} else if (c.reply->type != REDIS_REPLY_NIL) {
		rc = reply_err(c.reply, "HGET block size", err, errlen);
	}
	rc_cmds_clear(&c, 1);
	return rc;
}

/* Pins bs as the block size unless one is set; *cur gets the pinned one. */
static int meta_pin(struct cs_session *s, uint64_t bs, uint64_t *cur, char *err, size_t errlen)
{
	char val[RC_VER_MAX];
	const char *argv[4] = { "HSETNX", s->st->meta, "bs", val };
	size_t argvlen[4] = { 6, strlen(s->st->meta), 2, 0 };
	struct rc_cmd c;
	int rc;

	argvlen[3] = (size_t)snprintf(val, sizeof(val), "%llu", (unsigned long long)bs);
	cmd_set(&c, argv[1], argvlen[1], 4, argv, argvlen);
	if ((rc = rc_cluster_exec(s->cl, &c, 1, s->st->spec.wait, err, errlen)) != LWC_OK)
		return rc;
	if (c.reply->type != REDIS_REPLY_INTEGER)
		rc = reply_err(c.reply, "HSETNX block size", err, errlen);
	rc_cmds_clear(&c, 1);
	return rc != LWC_OK ? rc : meta_get(s, cur, err, errlen);
}

static int cmp_held(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* An HKEYS answer into h (sorted). */
static int parse_held(const redisReply *r, uint64_t id, struct rc_held *h,
		      char *err, size_t errlen)
{
	h->n = 0;
	if (r->type != REDIS_REPLY_ARRAY)
		return reply_err(r, "HKEYS", err, errlen);
	if (r->elements > RC_HELD_LIMIT) {
		lwc_errf(err, errlen, "redis-cluster: block %llu holds %zu versions (at most %d "
			 "expected): the store was changed behind the cloud store",
			 (unsigned long long)id, r->elements, RC_HELD_LIMIT);
		return LWC_ERR_STORE;
	}
	for (size_t i = 0; i < r->elements; i++) {
		const redisReply *e = r->element[i];
		if (e == NULL || e->type != REDIS_REPLY_STRING ||
		    rc_parse_u64(e->str, e->len, &h->v[i]) != LWC_OK || h->v[i] == 0) {
			lwc_errf(err, errlen, "redis-cluster: block %llu has a malformed version "
				 "field", (unsigned long long)id);
			return LWC_ERR_STORE;
		}
	}
	h->n = r->elements;
	qsort(h->v, h->n, sizeof(h->v[0]), cmp_held);
	for (size_t i = 0; i < h->n; i++)
		snprintf(h->f[i], RC_VER_MAX, "%llu", (unsigned long long)h->v[i]);
	return LWC_OK;
}

/* HKEYS of ids[0..n) into held[0..n). */
static int held_fetch(struct cs_session *s, const uint64_t *ids, size_t n,
		      struct rc_held *held, char *err, size_t errlen)
{
	struct rc_cmd *c = calloc(n, sizeof(*c));
	char *keys = malloc(n * RC_KEY_MAX);
	const char **argv = malloc(2 * n * sizeof(*argv));
	size_t *argvlen = malloc(2 * n * sizeof(*argvlen));
	int rc = LWC_ERR_NOMEM;

	if (c == NULL || keys == NULL || argv == NULL || argvlen == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *k = keys + i * RC_KEY_MAX;
		argv[2 * i] = "HKEYS";
		argvlen[2 * i] = 5;
		argv[2 * i + 1] = k;
		argvlen[2 * i + 1] = block_key(s->st, ids[i], k);
		cmd_set(&c[i], k, argvlen[2 * i + 1], 2, argv + 2 * i, argvlen + 2 * i);
	}
	rc = rc_cluster_exec(s->cl, c, n, 0, err, errlen);
	for (size_t i = 0; rc == LWC_OK && i < n; i++)
		rc = parse_held(c[i].reply, ids[i], &held[i], err, errlen);
	rc_cmds_clear(c, n);
out:
	free(c);
	free(keys);
	free(argv);
	free(argvlen);
	return rc;
}

static int redis_open(struct cs_store **out, const char *spec, uint32_t block_size,
		      char *err, size_t errlen)
{
	struct cs_store *st = calloc(1, sizeof(*st));
	struct cs_session s = { 0 };
	uint64_t have = 0;
	int rc;

	*out = NULL;
	if (st == NULL)
		return LWC_ERR_NOMEM;
	if ((rc = rc_spec_parse(spec, &st->spec, err, errlen)) != LWC_OK)
		goto fail;
	find_tags(st);
	snprintf(st->meta, sizeof(st->meta), "%s:meta", st->spec.prefix);
	s.st = st;
	if ((rc = rc_cluster_open(&s.cl, &st->spec, err, errlen)) != LWC_OK)
		goto fail;
	rc = meta_get(&s, &have, err, errlen);
	if (rc == LWC_OK && block_size != 0) {
		if (have == 0)
			rc = meta_pin(&s, block_size, &have, err, errlen);
		if (rc == LWC_OK && have != block_size) {
			lwc_errf(err, errlen, "the store holds %llu-byte blocks, but a block size "
				 "of %u was asked for", (unsigned long long)have, block_size);
			rc = LWC_ERR_BLOCK_SIZE;
		}
	}
	rc_cluster_close(s.cl);
	if (rc != LWC_OK)
		goto fail;
	*out = st;
	return LWC_OK;
fail:
	free(st);
	return rc;
}

static void redis_close(struct cs_store *st)
{
	free(st);
}

static int redis_session_open(struct cs_store *st, struct cs_session **out,
			      char *err, size_t errlen)
{
	struct cs_session *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (s == NULL)
		return LWC_ERR_NOMEM;
	s->st = st;
	if ((rc = rc_cluster_open(&s->cl, &st->spec, err, errlen)) != LWC_OK) {
		free(s);
		return rc;
	}
	*out = s;
	return LWC_OK;
}

static void redis_session_close(struct cs_session *s)
{
	if (s == NULL)
		return;
	rc_cluster_close(s->cl);
	free(s);
}

static int redis_block_size(struct cs_session *s, uint32_t *out, char *err, size_t errlen)
{
	uint64_t bs = 0;
	int rc;

	if (s->bs == 0) {
		if ((rc = meta_get(s, &bs, err, errlen)) != LWC_OK)
			return rc;
		s->bs = (uint32_t)bs;
	}
	*out = s->bs;
	return LWC_OK;
}

/* Why (id, version) is missing, into err. */
static void describe_missing(struct cs_session *s, uint64_t id, uint64_t version,
			     char *err, size_t errlen)
{
	struct rc_held h;
	char e2[64];

	if (held_fetch(s, &id, 1, &h, e2, sizeof(e2)) != LWC_OK)
		h.n = 0;
	cs_missing_text(id, version, h.v, h.n, err, errlen);
}

static int redis_read(struct cs_session *s, const uint64_t *ids, const uint64_t *versions,
		      size_t n, uint8_t *const *dst, size_t block_size, char *err, size_t errlen)
{
	struct rc_cmd *c = calloc(n ? n : 1, sizeof(*c));
	char *keys = malloc((n ? n : 1) * (RC_KEY_MAX + RC_VER_MAX));
	const char **argv = malloc(3 * (n ? n : 1) * sizeof(*argv));
	size_t *argvlen = malloc(3 * (n ? n : 1) * sizeof(*argvlen));
	int rc = LWC_ERR_NOMEM;

	if (c == NULL || keys == NULL || argv == NULL || argvlen == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *k = keys + i * (RC_KEY_MAX + RC_VER_MAX), *v = k + RC_KEY_MAX;
		argv[3 * i] = "HGET";
		argvlen[3 * i] = 4;
		argv[3 * i + 1] = k;
		argvlen[3 * i + 1] = block_key(s->st, ids[i], k);
		argv[3 * i + 2] = v;
		argvlen[3 * i + 2] = (size_t)snprintf(v, RC_VER_MAX, "%llu",
						      (unsigned long long)versions[i]);
		cmd_set(&c[i], k, argvlen[3 * i + 1], 3, argv + 3 * i, argvlen + 3 * i);
	}
	rc = rc_cluster_exec(s->cl, c, n, 0, err, errlen);
	for (size_t i = 0; rc == LWC_OK && i < n; i++) {
		const redisReply *r = c[i].reply;
		if (r->type == REDIS_REPLY_NIL) {
			describe_missing(s, ids[i], versions[i], err, errlen);
			rc = LWC_ERR_NOT_FOUND;
		} else if (r->type != REDIS_REPLY_STRING) {
			rc = reply_err(r, "HGET", err, errlen);
		} else if (r->len != block_size) {
			lwc_errf(err, errlen, "block %llu has %zu bytes, store block size is %zu",
				 (unsigned long long)ids[i], r->len, block_size);
			rc = LWC_ERR_STORE;
		} else {
			memcpy(dst[i], r->str, block_size);
		}
	}
	rc_cmds_clear(c, n);
out:
	free(c);
	free(keys);
	free(argv);
	free(argvlen);
	return rc;
}

/* The strings of one block's script call. */
struct wargs {
	char key[RC_KEY_MAX], ckey[RC_KEY_MAX];
	char ver[RC_VER_MAX], db[4], dv[24], nexp[24];
	const char *argv[9 + 2 * RC_HELD_LIMIT];
	size_t argvlen[9 + 2 * RC_HELD_LIMIT];
};

/* Script arguments of block b given what it holds. */
static int wargs_build(const struct cs_store *st, const struct cs_block *b,
		       const struct rc_held *h, struct wargs *w)
{
	uint64_t newest = h->n ? h->v[h->n - 1] : 0;
	long dv = b->version != newest;
	int argc = 0, ndrop = 0;
	size_t kl = block_key(st, b->id, w->key);
	size_t cl = count_key(st, rc_key_slot(w->key, kl), w->ckey);

	for (size_t j = 0; j < h->n; j++)
		if (h->v[j] + 1 < b->version)
			ndrop++;
	dv -= ndrop;
	snprintf(w->ver, sizeof(w->ver), "%llu", (unsigned long long)b->version);
	snprintf(w->db, sizeof(w->db), "%d", h->n == 0);
	snprintf(w->dv, sizeof(w->dv), "%ld", dv);
	snprintf(w->nexp, sizeof(w->nexp), "%zu", h->n);
#define ARG(p, l) (w->argv[argc] = (p), w->argvlen[argc++] = (l))
	ARG("EVAL", 4);
	ARG(write_lua, sizeof(write_lua) - 1);
	ARG("2", 1);
	ARG(w->key, kl);
	ARG(w->ckey, cl);
	ARG(w->ver, strlen(w->ver));
	ARG((const char *)b->data, b->len);
	ARG(w->db, strlen(w->db));
	ARG(w->dv, strlen(w->dv));
	ARG(w->nexp, strlen(w->nexp));
	for (size_t j = 0; j < h->n; j++)
		ARG(h->f[j], strlen(h->f[j]));
	for (size_t j = 0; j < h->n; j++)
		if (h->v[j] + 1 < b->version)
			ARG(h->f[j], strlen(h->f[j]));
#undef ARG
	return argc;
}

static int redis_write(struct cs_session *s, const struct cs_block *blocks, size_t n,
		       char *err, size_t errlen)
{
	struct rc_held *held = NULL;
	struct wargs *w = NULL;
	struct rc_cmd *c = NULL;
	uint64_t *ids = NULL, cur;
	size_t len = blocks[0].len;
	int rc = LWC_ERR_NOMEM;

	if (s->bs != 0 && len != s->bs)
		goto mismatch_known;
	held = malloc(n * sizeof(*held));
	ids = calloc(n, sizeof(*ids));
	w = malloc(n * sizeof(*w));
	c = calloc(n, sizeof(*c));
	if (held == NULL || ids == NULL || w == NULL || c == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		ids[i] = blocks[i].id;
	/* (1) what every block holds, and the version rule: nothing changes yet */
	if ((rc = held_fetch(s, ids, n, held, err, errlen)) != LWC_OK)
		goto out;
	for (size_t i = 0; i < n; i++) {
		uint64_t newest = held[i].n ? held[i].v[held[i].n - 1] : 0;
		if ((rc = cs_version_check(blocks[i].id, newest, blocks[i].version, err,
					   errlen)) != LWC_OK)
			goto out;
	}
	if (s->bs == 0) {
		if ((rc = meta_get(s, &cur, err, errlen)) != LWC_OK)
			goto out;
		if (cur == 0 && (rc = meta_pin(s, len, &cur, err, errlen)) != LWC_OK)
			goto out;
		s->bs = (uint32_t)cur;
		if (cur != len)
			goto mismatch_known;
	}
	/* (2) one script per block */
	for (size_t i = 0; i < n; i++) {
		int argc = wargs_build(s->st, &blocks[i], &held[i], &w[i]);
		cmd_set(&c[i], w[i].key, w[i].argvlen[3], argc, w[i].argv, w[i].argvlen);
	}
	rc = rc_cluster_exec(s->cl, c, n, s->st->spec.wait, err, errlen);
	for (size_t i = 0; rc == LWC_OK && i < n; i++) {
		const redisReply *r = c[i].reply;
		if (r->type != REDIS_REPLY_INTEGER) {
			rc = reply_err(r, "write script", err, errlen);
		} else if (r->integer == 0) {
			lwc_errf(err, errlen, "block %llu changed while it was being written "
				 "(another writer on the same store?)",
				 (unsigned long long)blocks[i].id);
			rc = LWC_ERR_VERSION;
		}
	}
	rc_cmds_clear(c, n);
	goto out;
mismatch_known:
	lwc_errf(err, errlen, "block size mismatch: the store holds %u-byte blocks, "
		 "this WRITE carries %zu-byte blocks", s->bs, len);
	rc = LWC_ERR_BLOCK_SIZE;
out:
	free(held);
	free(ids);
	free(w);
	free(c);
	return rc;
}

/* Totals: the counters of every slot and the block size. */
static int totals(struct cs_session *s, struct cs_stat *out, char *err, size_t errlen)
{
	struct rc_cmd *c = calloc(RC_SLOTS, sizeof(*c));
	char *keys = malloc((size_t)RC_SLOTS * RC_KEY_MAX);
	const char **argv = malloc(4 * (size_t)RC_SLOTS * sizeof(*argv));
	size_t *argvlen = malloc(4 * (size_t)RC_SLOTS * sizeof(*argvlen));
	uint64_t bs = 0;
	int rc = LWC_ERR_NOMEM;

	memset(out, 0, sizeof(*out));
	if (c == NULL || keys == NULL || argv == NULL || argvlen == NULL)
		goto out;
	for (unsigned i = 0; i < RC_SLOTS; i++) {
		char *k = keys + (size_t)i * RC_KEY_MAX;
		const char **a = argv + 4 * i;
		size_t *al = argvlen + 4 * i;
		a[0] = "HMGET";
		al[0] = 5;
		a[1] = k;
		al[1] = count_key(s->st, i, k);
		a[2] = "b";
		al[2] = 1;
		a[3] = "v";
		al[3] = 1;
		cmd_set(&c[i], k, al[1], 4, a, al);
	}
	rc = rc_cluster_exec(s->cl, c, RC_SLOTS, 0, err, errlen);
	for (unsigned i = 0; rc == LWC_OK && i < RC_SLOTS; i++) {
		const redisReply *r = c[i].reply;
		uint64_t x[2] = { 0, 0 };
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
			rc = reply_err(r, "HMGET counters", err, errlen);
			break;
		}
		for (int j = 0; j < 2; j++) {
			const redisReply *e = r->element[j];
			if (e->type == REDIS_REPLY_NIL)
				continue;
			if (e->type != REDIS_REPLY_STRING ||
			    rc_parse_u64(e->str, e->len, &x[j]) != LWC_OK) {
				lwc_errf(err, errlen, "redis-cluster: malformed counters in slot %u",
					 i);
				rc = LWC_ERR_STORE;
				break;
			}
		}
		out->block_count += x[0];
		out->versions_held += x[1];
	}
	rc_cmds_clear(c, RC_SLOTS);
	if (rc == LWC_OK && (rc = meta_get(s, &bs, err, errlen)) == LWC_OK) {
		out->block_size = (uint32_t)bs;
		if (s->bs == 0)
			s->bs = (uint32_t)bs;
	}
out:
	free(c);
	free(keys);
	free(argv);
	free(argvlen);
	return rc;
}

static int redis_stat(struct cs_session *s, const uint64_t *ids, size_t n,
		      struct cs_stat *out, struct cs_held *held, char *err, size_t errlen)
{
	struct rc_held *h = NULL;
	int rc;

	if ((rc = totals(s, out, err, errlen)) != LWC_OK || n == 0)
		return rc;
	h = malloc(n * sizeof(*h));
	if (h == NULL)
		return LWC_ERR_NOMEM;
	rc = held_fetch(s, ids, n, h, err, errlen);
	for (size_t i = 0; rc == LWC_OK && i < n; i++) {
		size_t skip = h[i].n > CS_HELD_MAX ? h[i].n - CS_HELD_MAX : 0;
		held[i].id = ids[i];
		held[i].n = (uint32_t)(h[i].n - skip);
		for (uint32_t j = 0; j < held[i].n; j++)
			held[i].v[j] = h[i].v[skip + j];
	}
	free(h);
	return rc;
}

const struct cs_store_ops cs_store_redis = {
	.name = "redis-cluster",
	.open = redis_open,
	.close = redis_close,
	.session_open = redis_session_open,
	.session_close = redis_session_close,
	.block_size = redis_block_size,
	.read = redis_read,
	.write = redis_write,
	.stat = redis_stat,
};
