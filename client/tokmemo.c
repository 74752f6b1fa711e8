/*
 * tokmemo.c - see tokmemo.h.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "tokmemo.h"

#define TOKMEMO_WAYS_MAX 4096u
/* entries of all positions together (12 MB): a row of many range-indexed
 * columns (up to 1,024 tokens) gets fewer entries a position */
#define TOKMEMO_ENTRIES_MAX (1u << 17)

struct tokmemo_ent {
	uint8_t n;                     /* bytes of in; 0: empty */
	uint8_t in[TOKMEMO_INPUT];     /* tag, then the value's bytes */
	uint8_t tok[CRY_TOKEN_BYTES];
};

struct tokmemo_pos {
	uint32_t looked, hits;         /* in the current window */
	uint8_t off;                   /* values do not repeat enough */
	uint8_t kept;                  /* its table holds entries: wipe it */
};

struct tokmemo {
	size_t npos;
	uint32_t ways;                 /* a power of two */
	unsigned shift;                /* 64 - log2(ways) */
	uint64_t made;
	struct tokmemo_pos *pos;
	struct tokmemo_ent *ent;       /* npos x ways */
};

struct tokmemo *tokmemo_new(size_t npos, size_t nrows)
{
	struct tokmemo *m;
	uint32_t ways = 1;
	unsigned bits = 0;

	while (ways < nrows && ways < TOKMEMO_WAYS_MAX &&
	       (size_t)ways * 2 * npos <= TOKMEMO_ENTRIES_MAX) {
		ways <<= 1;
		bits++;
	}
	if (npos == 0 || (m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->npos = npos;
	m->ways = ways;
	m->shift = 64 - bits;
	m->pos = calloc(npos, sizeof(*m->pos));
	m->ent = calloc(npos * ways, sizeof(*m->ent));
	if (m->pos == NULL || m->ent == NULL) {
		tokmemo_free(m);
		return NULL;
	}
	return m;
}

void tokmemo_free(struct tokmemo *m)
{
	if (m == NULL)
		return;
	/* the tables that were written (the others were never touched) */
	for (size_t p = 0; m->ent != NULL && m->pos != NULL && p < m->npos; p++)
		if (m->pos[p].kept)
			sodium_memzero(m->ent + p * m->ways, m->ways * sizeof(*m->ent));
	free(m->ent);
	free(m->pos);
	free(m);
}

uint64_t tokmemo_made(const struct tokmemo *m)
{
	return m ? m->made : 0;
}

/* FNV-1a of the input, spread over the table by a multiply */
static uint32_t slot_of(const struct tokmemo *m, const uint8_t *in, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;

	if (m->shift == 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		h = (h ^ in[i]) * 0x100000001b3u;
	return (uint32_t)((h * 0x9e3779b97f4a7c15u) >> m->shift);
}

int tokmemo_token(struct tokmemo *m, size_t pos, uint8_t out[CRY_TOKEN_BYTES],
		  const cry_tokstate *st, uint8_t tag, const void *in, size_t n)
{
	uint8_t key[TOKMEMO_INPUT];
	struct tokmemo_ent *e;
	struct tokmemo_pos *p;
	int rc;

	if (m == NULL || pos >= m->npos || n >= TOKMEMO_INPUT || m->pos[pos].off) {
		if (m != NULL)
			m->made++;
		return cry_token_next(out, st, tag, in, n);
	}
	p = &m->pos[pos];
	key[0] = tag;
	if (n)
		memcpy(key + 1, in, n);
	e = &m->ent[pos * m->ways + slot_of(m, key, n + 1)];
	if (++p->looked == TOKMEMO_PROBE) {
		/* a window's verdict: keep looking up while one in eight hits */
		if (p->hits < TOKMEMO_PROBE / 8)
			p->off = 1;
		p->looked = p->hits = 0;
	}
	if (e->n == n + 1 && memcmp(e->in, key, n + 1) == 0) {
		p->hits++;
		memcpy(out, e->tok, CRY_TOKEN_BYTES);
		return LWC_OK;
	}
	m->made++;
	if ((rc = cry_token_next(out, st, tag, in, n)) != LWC_OK) {
		e->n = 0;
		return rc;
	}
	p->kept = 1;
	e->n = (uint8_t)(n + 1);
	memcpy(e->in, key, n + 1);
	memcpy(e->tok, out, CRY_TOKEN_BYTES);
	return LWC_OK;
}
