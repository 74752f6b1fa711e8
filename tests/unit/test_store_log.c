/*
 * test_store_log.c - the appending block store (cloudstore/store_log.c):
 * its version rules, reopening, the crash cases its opening must survive
 * (a torn tail, a batch left beyond the point where writing resumed, a copy
 * cut short while its source is still there, an old copy whose blocks do
 * not match its checksum), compaction and its spare
 * segments written over, spares made ahead, READs of blocks not in
 * memory, on a real store
 * in a private mkdtemp directory with small segments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cry.h"
#include "../../cloudstore/store.h"
#include "../testdir.h"

#define BS 8192u
#define SEG_MB 1
#define SPARES_MAX 2                   /* store_log_int.h's LOG_SPARES */
#define SPARES_AHEAD 1                 /* ... and its SPARE_AHEAD   */

struct fx {
	char dir[64];
	char spec[128];
	struct cs_store *st;
	struct cs_session *s;
};

static const struct cs_store_ops *ops = &cs_store_log;

/* The bytes of (id, version): distinct for every pair. */
static void fill(uint8_t *b, uint64_t id, uint64_t v)
{
	for (size_t i = 0; i < BS; i += 16) {
		cry_put_be64(b + i, id * 1000003u + i);
		cry_put_be64(b + i + 8, v ^ (i << 20));
	}
}

static void fx_close(struct fx *f)
{
	if (f->s)
		ops->session_close(f->s);
	if (f->st)
		ops->close(f->st);
	f->s = NULL;
	f->st = NULL;
}

static void fx_open(struct fx *f)
{
	char err[256] = "";

	fx_close(f);
	if (ops->open(&f->st, f->spec, 0, err, sizeof(err)) != LWC_OK ||
	    ops->session_open(f->st, &f->s, err, sizeof(err)) != LWC_OK)
		fail_msg("open %s: %s", f->spec, err);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/lwc-test-log-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->spec, sizeof(f->spec), "%s,segment-mb=%d", f->dir, SEG_MB);
	*state = f;
	fx_open(f);
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	fx_close(f);
	testdir_rm(f->dir);
	free(f);
	return 0;
}

/* WRITE of ids[i] at vs[i]; the result code. */
static int put(struct fx *f, const uint64_t *ids, const uint64_t *vs, size_t n)
{
	struct cs_block *b = calloc(n, sizeof(*b));
	uint8_t *data = malloc(n * BS);
	char err[256] = "";
	int rc;

	assert_non_null(b);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++) {
		fill(data + i * BS, ids[i], vs[i]);
		b[i] = (struct cs_block){ ids[i], vs[i], data + i * BS, BS };
	}
	rc = ops->write(f->s, b, n, err, sizeof(err));
	free(b);
	free(data);
	return rc;
}

static void put1(struct fx *f, uint64_t id, uint64_t v)
{
	assert_int_equal(put(f, &id, &v, 1), LWC_OK);
}

/* The versions held for id, ascending, into v (at most 2); their number. */
static unsigned held(struct fx *f, uint64_t id, uint64_t v[2])
{
	struct cs_stat t;
	struct cs_held h;
	char err[256];

	assert_int_equal(ops->stat(f->s, &id, 1, &t, &h, err, sizeof(err)), LWC_OK);
	assert_true(h.n <= 2);
	for (unsigned i = 0; i < h.n; i++)
		v[i] = h.v[i];
	return h.n;
}

/* (id, v) reads back with its own bytes. */
static void read_ok(struct fx *f, uint64_t id, uint64_t v)
{
	uint8_t *got = malloc(BS), *want = malloc(BS);
	char err[256] = "";

	assert_non_null(got);
	assert_non_null(want);
	fill(want, id, v);
	if (ops->read(f->s, &id, &v, 1, &got, BS, err, sizeof(err)) != LWC_OK)
		fail_msg("read %llu v%llu: %s", (unsigned long long)id, (unsigned long long)v, err);
	assert_memory_equal(got, want, BS);
	free(got);
	free(want);
}

static void totals(struct fx *f, uint64_t blocks, uint64_t versions)
{
	struct cs_stat t;
	char err[256];

	assert_int_equal(ops->stat(f->s, NULL, 0, &t, NULL, err, sizeof(err)), LWC_OK);
	assert_int_equal(t.block_count, blocks);
	assert_int_equal(t.versions_held, versions);
}

/* Files of the store whose names start with prefix, ascending by name
 * (at most max of them into names); their number. */
static int files(struct fx *f, const char *prefix, char names[][64], int max)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (n < max) {
			int j = n;

			while (j > 0 && strcmp(names[j - 1], e->d_name) > 0) {
				memcpy(names[j], names[j - 1], 64);
				j--;
			}
			snprintf(names[j], 64, "%.60s", e->d_name);
		}
		n++;
	}
	closedir(d);
	return n;
}

/* Segment files of the store, ascending by name; their number. */
static int segments(struct fx *f, char names[][64], int max)
{
	return files(f, "seg-", names, max);
}

static int seg_fd(struct fx *f, const char *name)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%.64s", f->dir, name);
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	return fd;
}

/* ------------------------------------------------------------- the tests */

static void test_rules_and_reopen(void **state)
{
	struct fx *f = *state;
	uint64_t v[2], ids[3] = { 7, 8, 9 }, vs[3] = { 1, 1, 1 };
	uint8_t *buf = malloc(BS);
	char err[256] = "";

	assert_non_null(buf);
	totals(f, 0, 0);
	assert_int_equal(put(f, ids, vs, 3), LWC_OK);
	put1(f, 7, 2);
	put1(f, 7, 3);                          /* 1 dropped: 2 and 3 held */
	put1(f, 8, 1);                          /* the same version again  */
	{
		uint64_t bad_v = 5;                 /* skips ahead             */
		assert_int_equal(put(f, &ids[0], &bad_v, 1), LWC_ERR_VERSION);
		bad_v = 1;                          /* older than held         */
		assert_int_equal(put(f, &ids[0], &bad_v, 1), LWC_ERR_VERSION);
		bad_v = 2;                          /* a new block starts at 1 */
		assert_int_equal(put(f, (uint64_t[]){ 42 }, &bad_v, 1), LWC_ERR_VERSION);
	}
	/* a WRITE with one bad block appends nothing */
	{
		uint64_t wi[2] = { 9, 7 }, wv[2] = { 2, 9 };
		assert_int_equal(put(f, wi, wv, 2), LWC_ERR_VERSION);
		assert_int_equal(held(f, 9, v), 1);
	}
	totals(f, 3, 4);
	assert_int_equal(held(f, 7, v), 2);
	assert_int_equal(v[0], 2);
	assert_int_equal(v[1], 3);
	read_ok(f, 7, 2);
	read_ok(f, 7, 3);
	read_ok(f, 8, 1);
	{
		uint64_t id = 7, ver = 1;
		assert_int_equal(ops->read(f->s, &id, &ver, 1, &buf, BS, err, sizeof(err)),
				 LWC_ERR_NOT_FOUND);
		assert_non_null(strstr(err, "held: 2, 3"));
	}
	/* the same after reopening: the index is read back from the log */
	fx_open(f);
	totals(f, 3, 4);
	assert_int_equal(held(f, 7, v), 2);
	assert_int_equal(v[0], 2);
	read_ok(f, 7, 3);
	read_ok(f, 9, 1);
	put1(f, 7, 4);
	fx_open(f);
	assert_int_equal(held(f, 7, v), 2);
	assert_int_equal(v[0], 3);
	assert_int_equal(v[1], 4);
	read_ok(f, 7, 4);
	free(buf);
}

static void test_block_size_and_spec(void **state)
{
	struct fx *f = *state;
	struct cs_store *st = NULL;
	char err[256] = "", spec[128];
	uint32_t bs = 0;

	/* pinned before any WRITE, kept by log.meta */
	fx_close(f);
	assert_int_equal(ops->open(&f->st, f->spec, BS, err, sizeof(err)), LWC_OK);
	assert_int_equal(ops->session_open(f->st, &f->s, err, sizeof(err)), LWC_OK);
	assert_int_equal(ops->block_size(f->s, &bs, err, sizeof(err)), LWC_OK);
	assert_int_equal(bs, BS);
	fx_open(f);
	assert_int_equal(ops->block_size(f->s, &bs, err, sizeof(err)), LWC_OK);
	assert_int_equal(bs, BS);
	{
		uint8_t small[16] = { 0 };
		struct cs_block b = { 1, 1, small, sizeof(small) };
		assert_int_equal(ops->write(f->s, &b, 1, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	}
	put1(f, 1, 1);
	fx_close(f);
	assert_int_equal(ops->open(&st, f->spec, BS * 2, err, sizeof(err)), LWC_ERR_BLOCK_SIZE);
	assert_null(st);
	assert_non_null(strstr(err, "holds blocks of"));
	/* specs */
	assert_int_equal(ops->open(&st, "", 0, err, sizeof(err)), LWC_ERR_ARG);
	snprintf(spec, sizeof(spec), "%s,segment-mb=0", f->dir);
	assert_int_equal(ops->open(&st, spec, 0, err, sizeof(err)), LWC_ERR_ARG);
	assert_non_null(strstr(err, "segment-mb"));
	snprintf(spec, sizeof(spec), "%s,segment-mb=x", f->dir);
	assert_int_equal(ops->open(&st, spec, 0, err, sizeof(err)), LWC_ERR_ARG);
	assert_null(st);
	fx_open(f);
	read_ok(f, 1, 1);
}

static void meta_put(struct fx *f, const char *line)
{
	char p[256];
	FILE *m;

	snprintf(p, sizeof(p), "%s/log.meta", f->dir);
	m = fopen(p, "w");
	assert_non_null(m);
	assert_true(fputs(line, m) >= 0);
	assert_int_equal(fclose(m), 0);
}

static void meta_get(struct fx *f, char *line, size_t len)
{
	char p[256];
	FILE *m;

	snprintf(p, sizeof(p), "%s/log.meta", f->dir);
	m = fopen(p, "r");
	assert_non_null(m);
	assert_non_null(fgets(line, (int)len, m));
	fclose(m);
}

/* log.meta names the log's version (2: COPY batches may name their
 * source), in a line the builds before it refuse, so that none of them
 * opens a log it would misread; a log of theirs (version 1) opens and is
 * marked version 2; an unknown version or a damaged line is refused. */
static void test_meta_version(void **state)
{
	struct fx *f = *state;
	struct cs_store *st = NULL;
	char line[64], err[256] = "";
	unsigned long long v;

	put1(f, 1, 1);
	fx_close(f);
	meta_get(f, line, sizeof(line));
	assert_string_equal(line, "lwc-log 2 block_size 8192\n");
	/* what the builds before it parse: not a block-size line to them */
	assert_int_not_equal(sscanf(line, "block_size %llu", &v), 1);
	/* a log of an earlier build */
	meta_put(f, "block_size 8192\n");
	fx_open(f);
	read_ok(f, 1, 1);
	fx_close(f);
	meta_get(f, line, sizeof(line));
	assert_string_equal(line, "lwc-log 2 block_size 8192\n");
	/* refused, and left as it was */
	meta_put(f, "lwc-log 3 block_size 8192\n");
	assert_int_equal(ops->open(&st, f->spec, 0, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_null(st);
	assert_non_null(strstr(err, "log version 3"));
	meta_get(f, line, sizeof(line));
	assert_string_equal(line, "lwc-log 3 block_size 8192\n");
	meta_put(f, "lwc-log 2 block_size 8192 x\n");
	assert_int_equal(ops->open(&st, f->spec, 0, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_non_null(strstr(err, "not a block-size line"));
	meta_put(f, "block_size 8192 x\n");
	assert_int_equal(ops->open(&st, f->spec, 0, err, sizeof(err)), LWC_ERR_FORMAT);
	meta_put(f, "lwc-log 2 block_size 8192\n");
	fx_open(f);
	read_ok(f, 1, 1);
}

/* A tail that was being written when the machine stopped: a header that
 * does not check, a batch cut short, zeros.  Opening keeps what came
 * before and writing goes on from there. */
static void test_torn_tail(void **state)
{
	struct fx *f = *state;
	char names[8][64];
	uint64_t v[2];
	struct stat sb;
	int fd;

	for (uint64_t id = 0; id < 10; id++)
		put1(f, id, 1);
	fx_close(f);
	assert_int_equal(segments(f, names, 8), 1);
	fd = seg_fd(f, names[0]);
	assert_int_equal(fstat(fd, &sb), 0);
	{
		/* a header of the next batch with one byte of its entries wrong:
		 * find the end of the valid batches (10 x (4 KiB header + 8 KiB)) */
		uint8_t hdr[4096];
		off_t end = 10 * (4096 + BS);

		assert_int_equal(pread(fd, hdr, sizeof(hdr), 9 * (4096 + BS)), (ssize_t)sizeof(hdr));
		hdr[64] ^= 1;                       /* an entry: the checksum fails */
		cry_put_be64(hdr + 8, cry_get_be64(hdr + 8) + 1);
		assert_int_equal(pwrite(fd, hdr, sizeof(hdr), end), (ssize_t)sizeof(hdr));
	}
	close(fd);
	fx_open(f);
	totals(f, 10, 10);
	for (uint64_t id = 0; id < 10; id++)
		read_ok(f, id, 1);
	put1(f, 3, 2);
	put1(f, 11, 1);
	fx_open(f);
	totals(f, 11, 12);
	assert_int_equal(held(f, 3, v), 2);
	read_ok(f, 3, 2);
	read_ok(f, 11, 1);
}

/* Batches A (x v1), B (y v1), C (x v2) written; B's header lost, so opening
 * stops after A and C is left beyond the point where writing resumes.  A
 * batch D of B's size then ends exactly where C begins: C, whole and
 * checking, must still not be read as written after D. */
static void test_stale_batch_after_resume(void **state)
{
	struct fx *f = *state;
	char names[8][64];
	uint8_t zero[4096] = { 0 };
	uint64_t v[2];
	int fd;

	put1(f, 100, 1);                        /* A */
	put1(f, 200, 1);                        /* B */
	put1(f, 100, 2);                        /* C */
	fx_close(f);
	assert_int_equal(segments(f, names, 8), 1);
	fd = seg_fd(f, names[0]);
	assert_int_equal(pwrite(fd, zero, sizeof(zero), 4096 + BS), (ssize_t)sizeof(zero));
	close(fd);
	fx_open(f);
	totals(f, 1, 1);                        /* only A */
	assert_int_equal(held(f, 100, v), 1);
	put1(f, 200, 1);                        /* D, where B was */
	fx_open(f);
	totals(f, 2, 2);
	assert_int_equal(held(f, 100, v), 1);   /* C is not taken */
	assert_int_equal(v[0], 1);
	read_ok(f, 100, 1);
	read_ok(f, 200, 1);
	/* and writing goes on after D, over C */
	put1(f, 100, 2);
	fx_open(f);
	assert_int_equal(held(f, 100, v), 2);
	read_ok(f, 100, 2);
}

/* Wait (up to 4 s) for the compaction thread: until the first segment is
 * gone and at most `most` are left.  The segments' names into names, their
 * number returned. */
static int wait_compacted(struct fx *f, char names[][64], int max, int most)
{
	int n = 0;

	for (int t = 0; t < 200; t++) {
		n = segments(f, names, max);
		if (n <= most && (n == 0 || strcmp(names[0], "seg-0000000000000001.log") != 0))
			break;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return n;
}

/* Rewrite a working set until compaction has deleted segments; every
 * block reads back at its versions, before and after reopening, and the
 * store holds a bounded number of segments. */
static void test_compaction(void **state)
{
	struct fx *f = *state;
	enum { N = 40, ROUNDS = 30 };
	uint64_t ids[N], vs[N];
	char names[64][64];
	int nseg = 0;

	for (int i = 0; i < N; i++)
		ids[i] = (uint64_t)i * 3;
	for (int r = 1; r <= ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			vs[i] = (uint64_t)r;
		/* two WRITEs a round, of half the blocks each */
		assert_int_equal(put(f, ids, vs, N / 2), LWC_OK);
		assert_int_equal(put(f, ids + N / 2, vs + N / 2, N / 2), LWC_OK);
	}
	/* 30 rounds x 40 blocks x 8 KiB = 9.4 MiB written into 1 MiB segments;
	 * live are 2 x 40 x 8 KiB.  Compaction runs on its own thread: wait
	 * for it to catch up (a few seconds at most). */
	nseg = wait_compacted(f, names, 64, 4);
	assert_true(nseg <= 4);
	assert_true(strcmp(names[0], "seg-0000000000000001.log") > 0);  /* the first went */
	totals(f, N, 2 * N);
	for (int i = 0; i < N; i++) {
		read_ok(f, ids[i], ROUNDS - 1);
		read_ok(f, ids[i], ROUNDS);
	}
	fx_open(f);
	totals(f, N, 2 * N);
	for (int i = 0; i < N; i++) {
		read_ok(f, ids[i], ROUNDS - 1);
		read_ok(f, ids[i], ROUNDS);
	}
	/* and on from there */
	for (int i = 0; i < N; i++)
		vs[i] = ROUNDS + 1;
	assert_int_equal(put(f, ids, vs, N), LWC_OK);
	fx_open(f);
	read_ok(f, ids[N - 1], ROUNDS + 1);
}

/* Block 1 at v1 in the first segment, the rest rewritten until compaction
 * has copied block 1 and the first segment is gone; then the store closed. */
static void copy_block1(struct fx *f)
{
	char names[64][64];

	put1(f, 1, 1);
	for (uint64_t v = 1; v <= 12; v++) {
		uint64_t ids[16], vs[16];
		for (int i = 0; i < 16; i++) {
			ids[i] = 100 + (uint64_t)i;
			vs[i] = v;
		}
		assert_int_equal(put(f, ids, vs, 16), LWC_OK);
	}
	wait_compacted(f, names, 64, 64);
	assert_string_not_equal(names[0], "seg-0000000000000001.log");
	read_ok(f, 1, 1);
	fx_close(f);
}

/* Call fn(fd, header offset, header, entry k) for every COPY batch (of
 * flags `flags`) that holds block 1, in every segment; their number. */
static int each_copy_of_1(struct fx *f, uint32_t flags,
			  void (*fn)(int fd, off_t off, uint8_t *hdr, uint32_t k))
{
	char names[64][64];
	int n = segments(f, names, 64), found = 0;

	for (int s = 0; s < n; s++) {
		int fd = seg_fd(f, names[s]);
		struct stat sb;
		uint8_t hdr[4096];

		assert_int_equal(fstat(fd, &sb), 0);
		for (off_t off = 0; off + 4096 <= sb.st_size; off += 4096) {
			if (pread(fd, hdr, sizeof(hdr), off) != (ssize_t)sizeof(hdr))
				break;
			if (cry_get_be32(hdr) != 0x4c57434cu || cry_get_be32(hdr + 32) != flags)
				continue;
			for (uint32_t k = 0; k < cry_get_be32(hdr + 24); k++) {
				if (cry_get_be64(hdr + 64 + 16 * k) != 1)
					continue;
				fn(fd, off, hdr, k);
				found++;
			}
		}
		close(fd);
	}
	return found;
}

/* Change a byte of block 1 where a COPY batch holds it (as a crash would
 * leave a copy whose header reached the disk and not all its blocks). */
static void damage(int fd, off_t off, uint8_t *hdr, uint32_t k)
{
	uint8_t b;
	off_t at = off + 4096 + (off_t)k * BS + 100;

	(void)hdr;
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x55;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
}

/* A COPY batch is trusted when the segment it names as its source is gone
 * (the source goes only once every copy of it is durable), and not while
 * that segment is still there: after a crash that kept the source (its
 * deletion never reached the disk) and tore a copy, the block is read
 * from the source, whole. */
static void test_copy_source(void **state)
{
	struct fx *f = *state;
	char p[256];
	uint8_t *seg1;
	struct stat sb;
	int fd;

	/* the first segment as it is once block 1 is in it */
	put1(f, 1, 1);
	snprintf(p, sizeof(p), "%s/seg-0000000000000001.log", f->dir);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	seg1 = malloc((size_t)sb.st_size);
	assert_non_null(seg1);
	assert_int_equal(pread(fd, seg1, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	copy_block1(f);
	/* the source gone: the copy serves, after reopening too */
	fx_open(f);
	read_ok(f, 1, 1);
	fx_close(f);
	assert_true(each_copy_of_1(f, 2, damage) > 0);
	/* the source back, as if its deletion (or its rename to a spare) had
	 * not reached the disk: opening skips the copies and reads it */
	snprintf(p, sizeof(p), "%s/spare-0000000000000001.log", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/seg-0000000000000001.log", f->dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, seg1, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	free(seg1);
	fx_open(f);
	read_ok(f, 1, 1);
	{
		uint64_t v[2];

		assert_int_equal(held(f, 1, v), 1);
		assert_int_equal(v[0], 1);
	}
	/* and the store goes on from there */
	put1(f, 1, 2);
	fx_open(f);
	read_ok(f, 1, 1);
	read_ok(f, 1, 2);
}

/* A COPY batch whose source is there but never held the block it copies
 * is not one the store wrote (a source goes only after its copies, and
 * they hold what it held): opening refuses the log, with a message, and
 * changes nothing.  Before, opening skipped the copy and went on; once a
 * later compaction took the source away, the next opening entered the
 * copy, whose version then stood over a later, acknowledged one (found by
 * fuzz_log_open, 3 December 2026). */
static void test_copy_source_lacks(void **state)
{
	struct fx *f = *state;
	char p[256], err[256] = "";
	struct cs_store *st = NULL;
	int fd;

	copy_block1(f);
	/* a segment 1 of the standard size that holds no batch at all */
	snprintf(p, sizeof(p), "%s/spare-0000000000000001.log", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/seg-0000000000000001.log", f->dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)SEG_MB << 20), 0);
	close(fd);
	assert_int_equal(ops->open(&st, f->spec, 0, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_null(st);
	assert_non_null(strstr(err, "is damaged"));
	assert_non_null(strstr(err, "copies block 1 version 1 from segment 1"));
	/* nothing changed: refused again, and whole once the stray segment
	 * goes (the copy then serves block 1, as before) */
	assert_int_equal(ops->open(&st, f->spec, 0, err, sizeof(err)), LWC_ERR_FORMAT);
	assert_int_equal(unlink(p), 0);
	fx_open(f);
	read_ok(f, 1, 1);
}

/* Turn a COPY batch of flag 2 into one of flag 1, as earlier builds wrote
 * it: no source, a checksum over its blocks too. */
static void to_flag1(int fd, off_t off, uint8_t *hdr, uint32_t k)
{
	uint32_t n = cry_get_be32(hdr + 24);
	size_t hl = 64 + 16 * (size_t)n, dl = (size_t)n * BS;
	off_t dat = off + (off_t)((hl + 4095) / 4096 * 4096);
	uint8_t *h = malloc(hl), *d = malloc(dl), sum[16];
	crypto_generichash_state g;

	(void)k;
	assert_non_null(h);
	assert_non_null(d);
	assert_int_equal(pread(fd, h, hl, off), (ssize_t)hl);
	assert_int_equal(pread(fd, d, dl, dat), (ssize_t)dl);
	cry_put_be32(h + 32, 1);
	memset(h + 40, 0, 8);
	memset(h + 48, 0, 16);
	crypto_generichash_init(&g, NULL, 0, 16);
	crypto_generichash_update(&g, h, hl);
	crypto_generichash_update(&g, d, dl);
	crypto_generichash_final(&g, sum, 16);
	memcpy(h + 48, sum, 16);
	assert_int_equal(pwrite(fd, h, 64, off), 64);
	free(h);
	free(d);
}

/* The COPY batches of earlier builds (flag 1) still open, and are trusted
 * only when their blocks match their checksum: one damaged is where
 * opening stops reading its segment. */
static void test_old_copy_checked(void **state)
{
	struct fx *f = *state;

	copy_block1(f);
	assert_true(each_copy_of_1(f, 2, to_flag1) > 0);
	fx_open(f);
	read_ok(f, 1, 1);
	fx_close(f);
	assert_true(each_copy_of_1(f, 1, damage) > 0);
	fx_open(f);
	{
		uint64_t v[2];
		uint64_t id = 1, ver = 1;
		uint8_t *buf = malloc(BS);
		char err[256];
		/* not served from the damaged copy: absent (its source is gone) */
		assert_int_equal(held(f, 1, v), 0);
		assert_int_equal(ops->read(f->s, &id, &ver, 1, &buf, BS, err, sizeof(err)),
				 LWC_ERR_NOT_FOUND);
		free(buf);
	}
}

/* Reopen the store with a 4 KiB file dir/name added while it was closed;
 * opening must delete it. */
static void reopen_with_stray(struct fx *f, const char *name)
{
	char p[256];
	int fd;

	fx_close(f);
	snprintf(p, sizeof(p), "%s/%.64s", f->dir, name);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	fx_open(f);
	assert_int_equal(access(p, F_OK), -1);
}

/* Batch headers in segment file name whose segment number is not the
 * file's: what a spare held before it was written over. */
static int stale_headers(struct fx *f, const char *name)
{
	unsigned long long no = strtoull(name + 4, NULL, 16);
	int fd = seg_fd(f, name), n = 0;
	uint8_t h[64];

	for (off_t off = 0; pread(fd, h, sizeof(h), off) == (ssize_t)sizeof(h); off += 4096)
		if (cry_get_be32(h) == 0x4c57434cu && cry_get_be64(h + 16) != no)
			n++;
	close(fd);
	return n;
}

/* Compacted segments are kept as spares (at most SPARES_MAX) and written over as
 * new segments; what a spare held before is never read back: every block
 * reads at its versions before and after reopening, and a spare of another
 * size is deleted at opening. */
static void test_spares(void **state)
{
	struct fx *f = *state;
	enum { N = 40 };
	uint64_t ids[N], vs[N];
	char names[64][64];
	int nsp = 0, reused = 0, r = 0;

	for (int i = 0; i < N; i++)
		ids[i] = (uint64_t)i * 5 + 1;
	/* rewrite until compaction has left spares (spare-0...: a compacted
	 * segment's number; spares made ahead are numbered from 2^60) */
	for (int t = 0; t < 400 && nsp == 0; t++) {
		r++;
		for (int i = 0; i < N; i++)
			vs[i] = (uint64_t)r;
		assert_int_equal(put(f, ids, vs, N / 2), LWC_OK);
		assert_int_equal(put(f, ids + N / 2, vs + N / 2, N / 2), LWC_OK);
		if (r % 10 == 0) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			nsp = files(f, "spare-0", names, 64);
		}
	}
	assert_true(nsp >= 1 && files(f, "spare-", names, 64) <= SPARES_MAX);
	/* more WRITEs make new segments: from those spares */
	for (int t = 0; t < 400 && !reused; t++) {
		r++;
		for (int i = 0; i < N; i++)
			vs[i] = (uint64_t)r;
		assert_int_equal(put(f, ids, vs, N), LWC_OK);
		int n = segments(f, names, 64);
		for (int s = 0; s < n && s < 64 && !reused; s++)
			reused = stale_headers(f, names[s]) > 0;
	}
	assert_true(reused);
	assert_true(files(f, "spare-", names, 64) <= SPARES_MAX);
	totals(f, N, 2 * N);
	for (int i = 0; i < N; i++) {
		read_ok(f, ids[i], (uint64_t)r - 1);
		read_ok(f, ids[i], (uint64_t)r);
	}
	/* reopened: the reused segments' stale batches are not read, and a
	 * spare not of the standard size is deleted */
	reopen_with_stray(f, "spare-00000000000000ff.log");
	totals(f, N, 2 * N);
	for (int i = 0; i < N; i++) {
		read_ok(f, ids[i], (uint64_t)r - 1);
		read_ok(f, ids[i], (uint64_t)r);
	}
	/* and on from there */
	for (int i = 0; i < N; i++)
		vs[i] = (uint64_t)r + 1;
	assert_int_equal(put(f, ids, vs, N), LWC_OK);
	fx_open(f);
	totals(f, N, 2 * N);
	read_ok(f, ids[0], (uint64_t)r + 1);
	read_ok(f, ids[N - 1], (uint64_t)r);
}

/* Whether the file at dir/name holds bytes bytes, all zero. */
static int all_zero(struct fx *f, const char *name, uint64_t bytes)
{
	uint8_t buf[4096];
	int fd = seg_fd(f, name), ok = 1;
	uint64_t off = 0;
	ssize_t r;

	while (ok && (r = pread(fd, buf, sizeof(buf), (off_t)off)) > 0) {
		for (ssize_t i = 0; i < r && ok; i++)
			ok = buf[i] == 0;
		off += (uint64_t)r;
	}
	close(fd);
	return ok && off == bytes;
}

/* Pages of dir/name in the page cache. */
static size_t resident(struct fx *f, const char *name, uint64_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), np = (bytes + pg - 1) / pg, in = 0;
	unsigned char *vec = malloc(np);
	int fd = seg_fd(f, name);
	void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);

	assert_true(m != MAP_FAILED);
	assert_non_null(vec);
	assert_int_equal(mincore(m, bytes, vec), 0);
	for (size_t i = 0; i < np; i++)
		in += vec[i] & 1;
	munmap(m, bytes);
	close(fd);
	free(vec);
	return in;
}

/* Whether every page of the file at dir/name is in the page cache. */
static int cached(struct fx *f, const char *name, uint64_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return resident(f, name, bytes) == (bytes + pg - 1) / pg;
}

/* With fewer than SPARES_AHEAD spares kept and the last segment a
 * quarter full, spares are made ahead (allocated, their pages brought into
 * the cache as zeros), and the next segment is made from one, cached
 * whole; a spare.tmp left by a crash is deleted at opening. */
static void test_spare_made(void **state)
{
	struct fx *f = *state;
	enum { N = 40 };
	uint64_t ids[N], vs[N];
	char names[64][64];
	int nsp = 0;

	for (int i = 0; i < N; i++)
		ids[i] = (uint64_t)i + 1, vs[i] = 1;
	/* an empty store makes none; N blocks fill more than a quarter */
	assert_int_equal(files(f, "spare", names, 64), 0);
	assert_int_equal(put(f, ids, vs, N), LWC_OK);
	assert_int_equal(segments(f, names, 64), 1);
	for (int t = 0; t < 400 && nsp < SPARES_AHEAD; t++) {
		struct timespec ts = { 0, 25 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		nsp = files(f, "spare-", names, 64);
	}
	assert_int_equal(nsp, SPARES_AHEAD);
	for (int i = 0; i < SPARES_AHEAD; i++) {
		char want[64];

		snprintf(want, sizeof(want), "spare-%016llx.log", (1ull << 60) + (unsigned)i);
		assert_string_equal(names[i], want);
		assert_true(cached(f, names[i], (uint64_t)SEG_MB << 20));
		assert_true(all_zero(f, names[i], (uint64_t)SEG_MB << 20));
	}
	assert_int_equal(files(f, "spare.tmp", names, 64), 0);
	/* the next segment is a spare renamed and written over: its pages
	 * past what was written are cached (a new file's would not be) */
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < N; i++)
			ids[i] += N;
		assert_int_equal(put(f, ids, vs, N), LWC_OK);
	}
	assert_int_equal(segments(f, names, 64), 2);
	assert_string_equal(names[1], "seg-0000000000000002.log");
	assert_true(cached(f, names[1], (uint64_t)SEG_MB << 20));
	totals(f, 4 * N, 4 * N);
	for (uint64_t id = 1; id <= 4 * N; id++)
		read_ok(f, id, 1);
	/* reopened: every block there; a spare.tmp left by a crash goes */
	reopen_with_stray(f, "spare.tmp");
	totals(f, 4 * N, 4 * N);
	for (uint64_t id = 1; id <= 4 * N; id++)
		read_ok(f, id, 1);
}

/* A READ of blocks not in memory, or partly: what is cached is copied,
 * the rest asked of the disk together and read (store_log.c, read_cold);
 * every block comes back whole and right, in the order asked. */
static void test_read_cold(void **state)
{
	struct fx *f = *state;
	enum { N = 40 };
	uint64_t ids[N], vs[N], rids[N], rvs[N];
	uint8_t *buf = malloc((size_t)N * BS), *want = malloc(BS), *dst[N];
	uint64_t bytes = (uint64_t)SEG_MB << 20;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char names[64][64], err[256] = "";
	int fd;

	assert_non_null(buf);
	assert_non_null(want);
	for (int i = 0; i < N; i++)
		ids[i] = (uint64_t)i + 1, vs[i] = 1;
	assert_int_equal(put(f, ids, vs, N), LWC_OK);
	assert_int_equal(segments(f, names, 64), 1);
	/* the WRITE was made durable, so its pages are clean and can go; a
	 * store on tmpfs keeps them (the READ is then an ordinary one) */
	fd = seg_fd(f, names[0]);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	if (resident(f, names[0], bytes) == 0) {
		/* every third page back in: some blocks partly cached */
		for (uint64_t off = 0; off < 64 * BS; off += 3 * pg) {
			uint8_t b;

			assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
		}
		assert_true(resident(f, names[0], bytes) > 0);
	} else {
		print_message("the store's pages stay in memory here: the READ is not cold\n");
	}
	close(fd);
	/* a READ in another order than the WRITE's */
	for (int i = 0; i < N; i++) {
		rids[i] = ids[(i * 7) % N];
		rvs[i] = 1;
		dst[i] = buf + (size_t)i * BS;
	}
	if (ops->read(f->s, rids, rvs, N, dst, BS, err, sizeof(err)) != LWC_OK)
		fail_msg("read: %s", err);
	for (int i = 0; i < N; i++) {
		fill(want, rids[i], 1);
		assert_memory_equal(dst[i], want, BS);
	}
	/* a version not held still names itself, cold or not */
	rvs[N / 2] = 2;
	assert_int_equal(ops->read(f->s, rids, rvs, N, dst, BS, err, sizeof(err)),
			 LWC_ERR_NOT_FOUND);
	free(buf);
	free(want);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules_and_reopen, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_block_size_and_spec, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_meta_version, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stale_batch_after_resume, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_compaction, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_copy_source, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_old_copy_checked, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_spares, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_copy_source_lacks, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_spare_made, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_read_cold, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
