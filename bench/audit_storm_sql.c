/*
 * audit_storm_sql.c - the statements of lwc-audit --storm's threads: range
 * reads and, with --storm-writes, the writes (audit.h, "A storm thread's
 * statements").  Apart from audit_storm.c's threads and connections so that
 * test_audit checks them without a deployment.
 *
 * The writes leave the table's loaded ids as the audited statements expect
 * them: UPDATEs change only v of a range of them, INSERTs add ids of the
 * thread's own (AU_STORM_ID_BASE and up, far above them), and DELETEs remove
 * only batches the same thread inserted, oldest first.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"

uint64_t au_storm_insert_rows(const struct au_storm_cfg *cfg)
{
	uint64_t n = cfg->rows / 10;

	return n == 0 ? 1 : n > 100 ? 100 : n;
}

void au_storm_ids_init(struct au_storm_ids *ids, uint32_t thread)
{
	memset(ids, 0, sizeof(*ids));
	ids->next = AU_STORM_ID_BASE + (int64_t)thread * AU_STORM_ID_SPAN;
	ids->end = ids->next + AU_STORM_ID_SPAN;
}

enum au_storm_kind au_storm_next(const struct au_storm_cfg *cfg, const struct au_storm_ids *ids,
				 struct au_rng *rng, char *sql, size_t len)
{
	uint64_t span = cfg->id_max >= cfg->rows ? cfg->id_max - cfg->rows + 1 : 1;
	uint64_t lo = 1 + au_rng_below(rng, span), hi = lo + cfg->rows - 1;
	uint64_t ni = au_storm_insert_rows(cfg);
	enum au_storm_kind kind = AU_SK_READ;

	if (au_rng_below(rng, 100) < cfg->writes) {
		uint64_t r = au_rng_below(rng, 4);

		kind = r < 2 ? AU_SK_UPDATE : r == 2 ? AU_SK_INSERT : AU_SK_DELETE;
		if (kind == AU_SK_DELETE && ids->count == 0)
			kind = AU_SK_INSERT;
		if (kind == AU_SK_INSERT && (ids->count == AU_STORM_BATCHES ||
					     ids->next + (int64_t)ni > ids->end))
			kind = ids->count ? AU_SK_DELETE : AU_SK_UPDATE;
	}
	switch (kind) {
	case AU_SK_READ:
		snprintf(sql, len, "SELECT * FROM %s WHERE id BETWEEN %llu AND %llu",
			 cfg->table, (unsigned long long)lo, (unsigned long long)hi);
		break;
	case AU_SK_UPDATE:
		snprintf(sql, len, "UPDATE %s SET v = v + 1 WHERE id BETWEEN %llu AND %llu",
			 cfg->table, (unsigned long long)lo, (unsigned long long)hi);
		break;
	case AU_SK_INSERT: {
		size_t off = (size_t)snprintf(sql, len, "INSERT INTO %s VALUES ", cfg->table);

		for (uint64_t i = 0; i < ni && off < len; i++)
			off += (size_t)snprintf(sql + off, len - off, "%s(%lld, %llu, 's%08llx')",
						i ? ", " : "", (long long)(ids->next + (int64_t)i),
						(unsigned long long)au_rng_below(rng, 1000000),
						(unsigned long long)au_rng_below(rng, 1ull << 32));
		break;
	}
	case AU_SK_DELETE: {
		int64_t first = ids->batch[ids->head];

		snprintf(sql, len, "DELETE FROM %s WHERE id BETWEEN %lld AND %lld", cfg->table,
			 (long long)first, (long long)(first + (int64_t)ni - 1));
		break;
	}
	}
	return kind;
}

void au_storm_ran(const struct au_storm_cfg *cfg, struct au_storm_ids *ids,
		  enum au_storm_kind kind)
{
	if (kind == AU_SK_INSERT) {
		ids->batch[(ids->head + ids->count) % AU_STORM_BATCHES] = ids->next;
		ids->count++;
		ids->next += (int64_t)au_storm_insert_rows(cfg);
	} else if (kind == AU_SK_DELETE) {
		ids->head = (ids->head + 1) % AU_STORM_BATCHES;
		ids->count--;
	}
}
