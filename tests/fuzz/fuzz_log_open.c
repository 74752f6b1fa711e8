/*
 * fuzz_log_open.c - libFuzzer target: the log store's opening
 * (cloudstore/store_log.c), which reads back its index from segment files.
 *
 * The input describes segment files rather than being one: a list of
 * batches, each with flags (a COPY batch of either kind: checked by its
 * blocks, or naming a source segment that may or may not be there; a
 * wrong checksum, a sequence
 * number that does not rise, a new segment, a gap of zeros before it,
 * another block size, bytes of the header overwritten) and up to four
 * (id, version) entries.  The harness writes them in the store's format,
 * with checksums right unless told otherwise, and every block's bytes a
 * function of its (id, version), as a store whose process died would leave
 * them.  Oracles beyond the sanitizers: the store opens or fails with a
 * message (a log it could not have written, such as a copy whose source
 * is there and never held the block, is refused); once open, every version
 * STAT reports (at most two per id, ascending) reads back with exactly its
 * bytes; a WRITE of the next version of a block is acknowledged, and after
 * closing and opening again (with compaction, on its own thread, free to
 * run in between) it is the newest version held and reads back (writing
 * resumes where it should, and no batch left beyond that point is read as
 * later).  That last oracle holds
 * for logs the store could have written (build); a damaged one may be
 * refused at the second opening, with a message, or open with every
 * version reading back its own bytes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cry.h"
#include "../../cloudstore/store.h"
#include "../testdir.h"

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_log_open: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

#define PAGE 4096u
#define IDS 8u
#define MAXBS 128u

static char dir[256], spec[300];

static void cleanup(void)
{
	testdir_rm(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(dir, sizeof(dir), "fuzz-log");
	snprintf(spec, sizeof(spec), "%s,segment-mb=1", dir);
	atexit(cleanup);
	return 0;
}

static void fill(uint8_t *b, size_t bs, uint64_t id, uint64_t v)
{
	for (size_t i = 0; i < bs; i++)
		b[i] = (uint8_t)(id * 31 + v * 7 + i);
}

static int seg_open(unsigned no)
{
	char p[600];
	int fd;

	snprintf(p, sizeof(p), "%s/seg-%016x.log", dir, no);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 1 << 20) == 0);
	return fd;
}

/* Write the segments the input describes; whether the store could have
 * written them: 0 once a batch is damaged (a header byte overwritten, a
 * sequence number that does not rise, a wrong checksum anywhere but on the
 * last batch, where a torn write leaves one), is of another block size, or
 * is a COPY naming a source segment that is there (the builder does not
 * make a source hold what its copies hold, as the store's compaction
 * does).  Gaps of zeros, new segments and COPY batches whose source is gone
 * are what a store whose process died leaves. */
static int build(const uint8_t *in, size_t len)
{
	unsigned no = 1, srcmin = UINT_MAX;
	int fd = seg_open(no), written = 1, torn = 0;
	uint64_t off = 0, seq = 1;
	uint32_t bs0 = 0;
	size_t i = 0;

	while (i + 2 <= len) {
		uint8_t ctl = in[i++], nb = in[i++];
		uint32_t n = 1 + (nb & 3), bs = (ctl & 0x40) ? 128 : 64;
		uint8_t hdr[PAGE], data[4 * MAXBS], sum[16];
		crypto_generichash_state h;

		if (i + 2 * n > len)
			break;
		if (ctl & 4) {                        /* a new segment */
			close(fd);
			fd = seg_open(++no);
			off = 0;
		}
		off += (uint64_t)((ctl >> 4) & 1) * PAGE;   /* a gap of zeros */
		if (off + 2 * PAGE > (1u << 20))
			break;
		memset(hdr, 0, sizeof(hdr));
		cry_put_be32(hdr, 0x4c57434cu);
		cry_put_be32(hdr + 4, 1);
		cry_put_be64(hdr + 8, (ctl & 8) ? seq - 1 : seq);  /* not rising */
		cry_put_be64(hdr + 16, no);
		cry_put_be32(hdr + 24, n);
		cry_put_be32(hdr + 28, bs);
		if ((ctl & 0x21) == 0x20) {           /* a copy naming its source */
			unsigned src = 1 + (nb >> 2) % 4u;

			cry_put_be32(hdr + 32, 2);
			cry_put_be64(hdr + 40, src);
			if (src < srcmin)
				srcmin = src;
		} else {
			cry_put_be32(hdr + 32, ctl & 1);
		}
		for (uint32_t k = 0; k < n; k++) {
			uint64_t id = in[i] % IDS, v = 1 + in[i + 1] % 6;

			i += 2;
			cry_put_be64(hdr + 64 + 16 * k, id);
			cry_put_be64(hdr + 72 + 16 * k, v);
			fill(data + k * bs, bs, id, v);
		}
		crypto_generichash_init(&h, NULL, 0, 16);
		crypto_generichash_update(&h, hdr, 64 + 16 * n);
		if (ctl & 1)
			crypto_generichash_update(&h, data, (size_t)n * bs);
		crypto_generichash_final(&h, sum, 16);
		if (ctl & 2)                          /* a damaged header */
			sum[0] ^= 1;
		memcpy(hdr + 48, sum, 16);
		if ((ctl & 0x80) && i < len && in[i] != 0) {   /* a header byte overwritten */
			hdr[in[i] % (64 + 16 * n)] ^= in[i];
			written = 0;
		}
		if (torn || (ctl & 8) || (bs0 != 0 && bs != bs0))
			written = 0;               /* a batch after a torn one, ... */
		torn = (ctl & 2) != 0;
		bs0 = bs;
		CHECK(pwrite(fd, hdr, PAGE, (off_t)off) == (ssize_t)PAGE);
		CHECK(pwrite(fd, data, (size_t)n * bs, (off_t)(off + PAGE)) == (ssize_t)(n * bs));
		off += 2 * PAGE;
		if (!(ctl & 8))
			seq++;
	}
	close(fd);
	/* segments 1 .. no are there: a source above no is gone */
	return written && srcmin > no;
}

static void open_store(struct cs_store **st, struct cs_session **s)
{
	char err[256] = "";

	CHECK(cs_store_log.open(st, spec, 0, err, sizeof(err)) == LWC_OK);
	CHECK(cs_store_log.session_open(*st, s, err, sizeof(err)) == LWC_OK);
}

/* Every version held reads back with its own bytes; the newest of id. */
static uint64_t check_all(struct cs_session *s, uint32_t bs, uint64_t id_of_interest)
{
	uint64_t ids[IDS], newest = 0;
	struct cs_held held[IDS];
	struct cs_stat t;
	char err[256];
	uint8_t got[MAXBS], want[MAXBS], *dst = got;

	for (uint64_t id = 0; id < IDS; id++)
		ids[id] = id;
	CHECK(cs_store_log.stat(s, ids, IDS, &t, held, err, sizeof(err)) == LWC_OK);
	CHECK(t.block_count <= IDS && t.versions_held <= 2 * IDS);
	for (uint64_t id = 0; id < IDS; id++) {
		CHECK(held[id].n <= 2);
		if (held[id].n == 2)
			CHECK(held[id].v[0] < held[id].v[1]);
		for (uint32_t k = 0; k < held[id].n; k++) {
			uint64_t v = held[id].v[k];

			CHECK(bs != 0 && bs <= MAXBS);
			CHECK(cs_store_log.read(s, &id, &v, 1, &dst, bs, err, sizeof(err)) == LWC_OK);
			fill(want, bs, id, v);
			CHECK(memcmp(got, want, bs) == 0);
		}
		if (id == id_of_interest && held[id].n > 0)
			newest = held[id].v[held[id].n - 1];
	}
	return newest;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t len)
{
	struct cs_store *st = NULL;
	struct cs_session *s = NULL;
	uint32_t bs = 0;
	uint64_t id = 3, v, after;
	uint8_t data[MAXBS];
	struct cs_block b;
	char err[256] = "";
	int rc, written;

	testdir_empty(dir);
	written = build(in, len);
	rc = cs_store_log.open(&st, spec, 0, err, sizeof(err));
	if (rc != LWC_OK) {
		/* blocks of two sizes: refused, with a message */
		CHECK(st == NULL && err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
		return 0;
	}
	CHECK(cs_store_log.session_open(st, &s, err, sizeof(err)) == LWC_OK);
	CHECK(cs_store_log.block_size(s, &bs, err, sizeof(err)) == LWC_OK);
	v = check_all(s, bs ? bs : 64, id);
	if (bs == 0)
		bs = 64;
	/* the next version of block 3, acknowledged, survives reopening */
	fill(data, bs, id, v + 1);
	b = (struct cs_block){ id, v + 1, data, bs };
	CHECK(cs_store_log.write(s, &b, 1, err, sizeof(err)) == LWC_OK);
	cs_store_log.session_close(s);
	cs_store_log.close(st);
	/* (compaction may have run meanwhile, on its own thread) */
	if (!written) {
		/* a damaged log: opening again may find the damage, and refuse
		 * it with a message; if it opens, every version it holds still
		 * reads back with its own bytes */
		rc = cs_store_log.open(&st, spec, 0, err, sizeof(err));
		if (rc != LWC_OK) {
			CHECK(st == NULL && err[0] != '\0');
			return 0;
		}
		CHECK(cs_store_log.session_open(st, &s, err, sizeof(err)) == LWC_OK);
		(void)check_all(s, bs, id);
		cs_store_log.session_close(s);
		cs_store_log.close(st);
		return 0;
	}
	open_store(&st, &s);
	after = check_all(s, bs, id);
	CHECK(after == v + 1);
	cs_store_log.session_close(s);
	cs_store_log.close(st);
	return 0;
}
