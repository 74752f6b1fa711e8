/*
 * groups.c - see groups.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cry.h"
#include "groups.h"

/* ---- groups --------------------------------------------------------------- */

static struct px_group *group_of(const struct px_groups *G, uint64_t grp)
{
	return (struct px_group *)(uintptr_t)u64map_get(&G->grps, grp);
}

void grp_forget(struct px_groups *G, uint64_t row)
{
	uint64_t grp = u64map_get(&G->rows, row);
	struct px_group *g;

	if (grp == 0)
		return;
	u64map_del(&G->rows, row);
	if ((g = group_of(G, grp)) == NULL)
		return;
	if (--g->live == 1) {
		/* the last one has no mates: it is alone now */
		for (uint32_t i = 0; i < g->n; i++)
			if (u64map_get(&G->rows, g->rows[i]) == grp) {
				u64map_del(&G->rows, g->rows[i]);
				g->live = 0;
				break;
			}
	}
	if (g->live == 0) {
		u64map_del(&G->grps, grp);
		free(g);
	}
}

int grp_note(struct px_groups *G, uint64_t grp, uint32_t table, const uint64_t *rows,
	     size_t n)
{
	struct px_group *g;
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		grp_forget(G, rows[i]);
	if (n < 2 || n > UINT32_MAX || grp == 0 || group_of(G, grp) != NULL)
		return 0;
	if ((g = malloc(sizeof(*g) + n * sizeof(g->rows[0]))) == NULL)
		return -1;
	g->grp = grp;
	g->table = table;
	g->live = 0;
	if (u64map_put(&G->grps, grp, (uint64_t)(uintptr_t)g) != 0) {
		free(g);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (u64map_get(&G->rows, rows[i]) == grp)
			continue;                        /* given twice */
		if (u64map_put(&G->rows, rows[i], grp) != 0) {
			for (uint32_t x = 0; x < k; x++)
				u64map_del(&G->rows, g->rows[x]);
			u64map_del(&G->grps, grp);
			free(g);
			return -1;
		}
		g->rows[k++] = rows[i];
	}
	g->n = g->live = k;
	if (k < 2) {                                 /* one row: alone */
		if (k == 1)
			u64map_del(&G->rows, g->rows[0]);
		u64map_del(&G->grps, grp);
		free(g);
	}
	return 0;
}

size_t grp_mates(const struct px_groups *G, uint64_t row, uint32_t table, uint64_t *out,
		 size_t max)
{
	uint64_t grp = u64map_get(&G->rows, row);
	const struct px_group *g;
	size_t k = 0;

	if (grp == 0 || (g = group_of(G, grp)) == NULL || g->table != table)
		return 0;
	for (uint32_t i = 0; i < g->n && k < max; i++)
		if (g->rows[i] != row && u64map_get(&G->rows, g->rows[i]) == grp)
			out[k++] = g->rows[i];
	return k;
}

const struct px_group *grp_find(const struct px_groups *G, uint64_t row)
{
	uint64_t grp = u64map_get(&G->rows, row);

	return grp == 0 ? NULL : group_of(G, grp);
}

size_t grp_rows(const struct px_groups *G)
{
	return G->rows.n;
}

void grp_free(struct px_groups *G)
{
	for (size_t i = 0; i < G->grps.cap; i++)
		if (G->grps.e[i].val != 0)
			free((void *)(uintptr_t)G->grps.e[i].val);
	u64map_free(&G->grps);
	u64map_free(&G->rows);
	memset(G, 0, sizeof(*G));
}

int grp_serialize(const struct px_groups *G, uint8_t **buf, size_t *len)
{
	size_t n = 0;
	uint8_t *p;

	for (size_t i = 0; i < G->grps.cap; i++)
		if (G->grps.e[i].val != 0)
			n += 16 + 8 * (size_t)((struct px_group *)(uintptr_t)G->grps.e[i].val)->live;
	if ((p = *buf = malloc(n + 1)) == NULL)
		return -1;
	for (size_t i = 0; i < G->grps.cap; i++) {
		const struct px_group *g = (struct px_group *)(uintptr_t)G->grps.e[i].val;
		uint8_t *cnt;
		uint32_t live = 0;

		if (g == NULL)
			continue;
		cry_put_be64(p, g->grp);
		cry_put_be64(p + 8, (uint64_t)g->table << 32);
		cnt = p + 12;
		p += 16;
		for (uint32_t r = 0; r < g->n; r++)
			if (u64map_get(&G->rows, g->rows[r]) == g->grp) {
				cry_put_be64(p, g->rows[r]);
				p += 8;
				live++;
			}
		cnt[0] = (uint8_t)(live >> 24);
		cnt[1] = (uint8_t)(live >> 16);
		cnt[2] = (uint8_t)(live >> 8);
		cnt[3] = (uint8_t)live;
	}
	*len = (size_t)(p - *buf);
	return 0;
}

int grp_deserialize(struct px_groups *G, const uint8_t *buf, size_t len)
{
	uint64_t *rows = NULL;
	size_t cap = 0;
	int rc = 0;

	while (len > 0 && rc == 0) {
		uint64_t grp, tn;
		size_t n;

		if (len < 16) {
			rc = -1;
			break;
		}
		grp = cry_get_be64(buf);
		tn = cry_get_be64(buf + 8);
		n = (size_t)(tn & UINT32_MAX);
		if (grp == 0 || n > (len - 16) / 8) {
			rc = -1;
			break;
		}
		if (n > cap) {
			uint64_t *r = realloc(rows, n * sizeof(*rows));

			if (r == NULL) {
				rc = -1;
				break;
			}
			rows = r;
			cap = n;
		}
		for (size_t i = 0; i < n; i++)
			rows[i] = cry_get_be64(buf + 16 + 8 * i);
		rc = grp_note(G, grp, (uint32_t)(tn >> 32), rows, n);
		buf += 16 + 8 * n;
		len -= 16 + 8 * n;
	}
	free(rows);
	return rc;
}
