/*
 * fuzz_groups.c - libFuzzer target: the record of the groups of rows in
 * blocks that a clean stop leaves in the proxy's state and the next start
 * reads (proxy/groups.c grp_deserialize).
 *
 * Oracles beyond the sanitizers: whatever the bytes, the groups read are
 * consistent (a row's mates have it among their mates, a row is never its
 * own mate, rows_in_groups counts the rows that have a group); what a
 * well-formed record gives, written out and read again, gives the same
 * mates; every row can be forgotten, after which nothing is left.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../proxy/groups.h"

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_groups: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

#define MAX_MATES 4096u

static uint64_t mates[MAX_MATES], back[MAX_MATES];

/* The rows that have a group, and each one's table (from its group). */
static void check_consistent(const struct px_groups *G)
{
	size_t in_groups = 0;

	for (size_t i = 0; i < G->rows.cap; i++) {
		uint64_t row, grp;
		const struct px_group *g;
		size_t n;

		if (G->rows.e[i].val == 0)
			continue;
		in_groups++;
		row = G->rows.e[i].key;
		grp = G->rows.e[i].val;
		g = grp_find(G, row);
		CHECK(g != NULL && g->grp == grp && g->live >= 2);
		n = grp_mates(G, row, g->table, mates, MAX_MATES);
		CHECK(n + 1 == g->live || n == MAX_MATES);
		CHECK(grp_mates(G, row, g->table ^ 1, back, MAX_MATES) == 0);
		for (size_t k = 0; k < n && k < 8; k++) {
			size_t m, found = 0;

			CHECK(mates[k] != row);
			m = grp_mates(G, mates[k], g->table, back, MAX_MATES);
			for (size_t x = 0; x < m; x++)
				found += back[x] == row;
			CHECK(found == 1);
		}
	}
	CHECK(in_groups == grp_rows(G));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct px_groups G = { 0 }, H = { 0 };
	uint8_t *buf;
	size_t len;
	int rc = grp_deserialize(&G, data, size);

	check_consistent(&G);
	CHECK(grp_serialize(&G, &buf, &len) == 0);
	CHECK(grp_deserialize(&H, buf, len) == 0);
	CHECK(grp_rows(&H) == grp_rows(&G));
	check_consistent(&H);
	for (size_t i = 0; i < G.rows.cap; i++) {
		uint64_t row = G.rows.e[i].key;
		const struct px_group *g;
		size_t a, b;

		if (G.rows.e[i].val == 0)
			continue;
		g = grp_find(&G, row);
		a = grp_mates(&G, row, g->table, mates, MAX_MATES);
		b = grp_mates(&H, row, g->table, back, MAX_MATES);
		CHECK(a == b);
	}
	(void)rc;
	free(buf);
	grp_free(&H);
	/* forget every row: nothing left (the groups freed: LeakSanitizer) */
	while (grp_rows(&G) > 0) {
		for (size_t i = 0; i < G.rows.cap; i++)
			if (G.rows.e[i].val != 0) {
				grp_forget(&G, G.rows.e[i].key);
				break;
			}
	}
	CHECK(G.grps.n == 0);
	grp_free(&G);
	return 0;
}
