/*
 * store.c - backend lookup and the rules every backend shares (store.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

int cs_store_lookup(const char *arg, const struct cs_store_ops **ops,
		    const char **spec, char *err, size_t errlen)
{
	static const struct cs_store_ops *const all[] = { &cs_store_lmdb, &cs_store_pg,
							    &cs_store_redis, &cs_store_log };
	const char *colon = arg ? strchr(arg, ':') : NULL;

	if (colon == NULL || colon[1] == '\0') {
		lwc_errf(err, errlen, "--store must be lmdb:DIR, log:DIR, postgres:CONNINFO or "
			 "redis-cluster:HOST:PORT[,HOST:PORT...]");
		return LWC_ERR_ARG;
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		size_t n = strlen(all[i]->name);
		if ((size_t)(colon - arg) == n && strncmp(arg, all[i]->name, n) == 0) {
			*ops = all[i];
			*spec = colon + 1;
			return LWC_OK;
		}
	}
	lwc_errf(err, errlen, "unknown store backend '%.*s' (use lmdb, log, postgres or redis-cluster)",
		 (int)(colon - arg), arg);
	return LWC_ERR_ARG;
}

int cs_dir_spec(const char *spec, const char *kind, const char *name, unsigned long max,
		char *dir, size_t dirlen, unsigned long *val, char *err, size_t errlen)
{
	const char *opt = spec ? strrchr(spec, ',') : NULL;
	size_t n = spec ? strlen(spec) : 0;
	size_t nl = strlen(name);

	*val = 0;
	if (opt != NULL && strncmp(opt + 1, name, nl) == 0 && opt[1 + nl] == '=') {
		const char *num = opt + 2 + nl;
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(num, &end, 10);
		if (*num < '0' || *num > '9' || *end != '\0' || errno != 0 || v < 1 || v > max) {
			lwc_errf(err, errlen, "%s store: %s=%s: want 1..%lu", kind, name, num, max);
			return LWC_ERR_ARG;
		}
		*val = v;
		n = (size_t)(opt - spec);
	}
	if (n == 0) {
		lwc_errf(err, errlen, "%s store needs a directory (%s:DIR)", kind, kind);
		return LWC_ERR_ARG;
	}
	if (n >= dirlen) {
		lwc_errf(err, errlen, "%s store directory name too long", kind);
		return LWC_ERR_ARG;
	}
	memcpy(dir, spec, n);
	dir[n] = '\0';
	return LWC_OK;
}

void cs_missing_text(uint64_t id, uint64_t version, const uint64_t *held, size_t nheld,
		     char *err, size_t errlen)
{
	if (nheld == 0)
		lwc_errf(err, errlen, "block %llu not held", (unsigned long long)id);
	else if (nheld == 1)
		lwc_errf(err, errlen, "block %llu version %llu not held (held: %llu)",
			 (unsigned long long)id, (unsigned long long)version,
			 (unsigned long long)held[0]);
	else
		lwc_errf(err, errlen, "block %llu version %llu not held (held: %llu, %llu)",
			 (unsigned long long)id, (unsigned long long)version,
			 (unsigned long long)held[nheld - 2], (unsigned long long)held[nheld - 1]);
}

int cs_version_check(uint64_t id, uint64_t held_max, uint64_t version,
		     char *err, size_t errlen)
{
	if (held_max == 0) {
		if (version == 1)
			return LWC_OK;
		lwc_errf(err, errlen, "block %llu is new: its first version must be 1, not %llu",
			 (unsigned long long)id, (unsigned long long)version);
		return LWC_ERR_VERSION;
	}
	/* held_max + 1 wraps to 0 at UINT64_MAX: version 0 never advances */
	if (version == held_max || (version == held_max + 1 && version != 0))
		return LWC_OK;
	if (version > held_max)
		lwc_errf(err, errlen, "block %llu: version %llu skips ahead of held version %llu",
			 (unsigned long long)id, (unsigned long long)version,
			 (unsigned long long)held_max);
	else
		lwc_errf(err, errlen, "block %llu: version %llu is older than held version %llu",
			 (unsigned long long)id, (unsigned long long)version,
			 (unsigned long long)held_max);
	return LWC_ERR_VERSION;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Finds a repeated id; returns 1 and sets *dup if any. */
static int find_dup(const uint64_t *ids, size_t n, uint64_t *dup, int *nomem)
{
	uint64_t *s;
	int found = 0;

	*nomem = 0;
	if (n < 2)
		return 0;
	s = malloc(n * sizeof(*s));
	if (s == NULL) {
		*nomem = 1;
		return 0;
	}
	memcpy(s, ids, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u64);
	for (size_t i = 1; i < n; i++) {
		if (s[i] == s[i - 1]) {
			*dup = s[i];
			found = 1;
			break;
		}
	}
	free(s);
	return found;
}

int cs_read_validate(const uint64_t *ids, size_t n, char *err, size_t errlen)
{
	uint64_t dup;
	int nomem;

	if (n == 0) {
		lwc_errf(err, errlen, "READ names no blocks");
		return LWC_ERR_PROTO;
	}
	if (find_dup(ids, n, &dup, &nomem)) {
		lwc_errf(err, errlen, "block %llu named twice in one READ",
			 (unsigned long long)dup);
		return LWC_ERR_DUPLICATE;
	}
	return nomem ? LWC_ERR_NOMEM : LWC_OK;
}

int cs_write_validate(const struct cs_block *blocks, size_t n,
		      char *err, size_t errlen)
{
	uint64_t *ids, dup;
	int nomem, found;

	if (n == 0) {
		lwc_errf(err, errlen, "WRITE carries no blocks");
		return LWC_ERR_PROTO;
	}
	for (size_t i = 0; i < n; i++) {
		if (blocks[i].len == 0 || blocks[i].len > CS_BLOCK_SIZE_MAX) {
			lwc_errf(err, errlen, "block %llu has size %zu (allowed 1..%u)",
				 (unsigned long long)blocks[i].id, blocks[i].len,
				 CS_BLOCK_SIZE_MAX);
			return LWC_ERR_BLOCK_SIZE;
		}
		if (blocks[i].len != blocks[0].len) {
			lwc_errf(err, errlen, "block %llu has size %zu, block %llu has %zu",
				 (unsigned long long)blocks[i].id, blocks[i].len,
				 (unsigned long long)blocks[0].id, blocks[0].len);
			return LWC_ERR_BLOCK_SIZE;
		}
		if (blocks[i].version == 0) {
			lwc_errf(err, errlen, "block %llu: version 0 is not valid",
				 (unsigned long long)blocks[i].id);
			return LWC_ERR_VERSION;
		}
	}
	ids = malloc(n * sizeof(*ids));
	if (ids == NULL)
		return LWC_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		ids[i] = blocks[i].id;
	found = find_dup(ids, n, &dup, &nomem);
	free(ids);
	if (found) {
		lwc_errf(err, errlen, "block %llu named twice in one WRITE",
			 (unsigned long long)dup);
		return LWC_ERR_DUPLICATE;
	}
	return nomem ? LWC_ERR_NOMEM : LWC_OK;
}
