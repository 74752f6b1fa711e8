/*
 * audit_trace.c - the cloud store's trace as lwc-audit reads it: one line
 * per request (cloudstore/proto.c, cs_trace_write), cut into statements.
 *
 * The audit runs one statement at a time from one connection, so the lines
 * that appear in the file while a statement runs are that statement's.  The
 * store writes and flushes a line before it answers the request.  The proxy
 * answers a statement that changes rows only after its WRITE was
 * acknowledged, and so a SELECT by default (serve --answer-early durable),
 * but with --answer-early on a SELECT as soon as its WRITE is sent
 * (proxy/engine.c, stmt_answer), so when lwc_exec returns its WRITE line
 * may still be on its way: the reader re-reads until the WRITE is there
 * (the connection's next statement waits for this one's commit, so its
 * lines come after), and says so clearly when it never comes (a trace of
 * another store, a store without --trace).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"

#define TRACE_CHUNK (1u << 20)           /* bytes read per pread               */
#define LINE_MAX_BYTES (64u << 20)       /* a longer line is not a trace line  */

struct au_trace {
	int fd;
	char *path;
	off_t off;                       /* file offset of the next byte to read */
	char *buf;                       /* read, not yet consumed: a partial line */
	size_t len, cap;
	int resync;                      /* opened mid-line: drop up to the first '\n' */
	uint64_t *ids;                   /* parser's id buffer                   */
	size_t idcap;
};

/* ---- one line ------------------------------------------------------------- */

struct cur {
	const char *p, *end;
};

static int lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* A decimal number of at most maxd digits (0: any), without overflow. */
static int num(struct cur *c, uint64_t *v, int maxd, int *ndigits)
{
	uint64_t x = 0;
	int d = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && (maxd == 0 || d < maxd)) {
		uint64_t k = (uint64_t)(*c->p - '0');

		if (x > (UINT64_MAX - k) / 10)
			return 0;
		x = x * 10 + k;
		c->p++;
		d++;
	}
	if (ndigits)
		*ndigits = d;
	*v = x;
	return d > 0;
}

static int fixed(struct cur *c, int digits, uint64_t *v)
{
	int d;

	return num(c, v, digits, &d) && d == digits;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int timestamp(struct cur *c, double *t)
{
	uint64_t y, mo, d, h, mi, s, frac;
	int nd;
	double f;

	if (!fixed(c, 4, &y) || !lit(c, "-") || !fixed(c, 2, &mo) || !lit(c, "-") ||
	    !fixed(c, 2, &d) || !lit(c, "T") || !fixed(c, 2, &h) || !lit(c, ":") ||
	    !fixed(c, 2, &mi) || !lit(c, ":") || !fixed(c, 2, &s) || !lit(c, ".") ||
	    !num(c, &frac, 9, &nd) || !lit(c, "Z"))
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return 0;
	f = (double)frac;
	while (nd-- > 0)
		f /= 10.0;
	*t = (double)(days_from_civil((int64_t)y, (unsigned)mo, (unsigned)d) * 86400 +
		      (int64_t)(h * 3600 + mi * 60 + s)) + f;
	return 1;
}

int au_line_parse(const char *s, size_t len, struct au_line *l, uint64_t **buf, size_t *cap)
{
	struct cur c = { s, s + len };
	size_t k = 0, i = 0;

	memset(l, 0, sizeof(*l));
	if (!timestamp(&c, &l->t) || !lit(&c, " conn=") || !num(&c, &l->conn, 0, NULL) ||
	    !lit(&c, " op="))
		return LWC_ERR_FORMAT;
	while (c.p < c.end && *c.p >= 'A' && *c.p <= 'Z' && i < sizeof(l->op) - 1)
		l->op[i++] = *c.p++;
	if (i == 0 || !lit(&c, " n=") || !num(&c, &l->n, 0, NULL) || !lit(&c, " ids="))
		return LWC_ERR_FORMAT;
	if (lit(&c, "-")) {
		if (l->n != 0)                  /* "-" stands for no ids */
			return LWC_ERR_FORMAT;
	} else {
		do {
			uint64_t v;

			if (!num(&c, &v, 0, NULL))
				return LWC_ERR_FORMAT;
			if (k == *cap) {
				size_t nc = *cap ? *cap * 2 : 1024;
				uint64_t *nb = realloc(*buf, nc * sizeof(**buf));

				if (nb == NULL)
					return LWC_ERR_NOMEM;
				*buf = nb;
				*cap = nc;
			}
			(*buf)[k++] = v;
		} while (lit(&c, ","));
		if (k != l->n)
			return LWC_ERR_FORMAT;
	}
	l->ids = *buf;
	if (!lit(&c, " in=") || !num(&c, &l->in, 0, NULL) || !lit(&c, " out=") ||
	    !num(&c, &l->out, 0, NULL) || !lit(&c, " status="))
		return LWC_ERR_FORMAT;
	l->ok = c.end - c.p == 2 && memcmp(c.p, "ok", 2) == 0;
	return LWC_OK;
}

/* ---- the file ------------------------------------------------------------- */

int au_trace_open(struct au_trace **out, const char *path, char *err, size_t errlen)
{
	struct au_trace *t = calloc(1, sizeof(*t));
	struct stat sb;
	char last;

	*out = NULL;
	if (t == NULL || (t->path = strdup(path)) == NULL) {
		free(t);
		return LWC_ERR_NOMEM;
	}
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0 || fstat(t->fd, &sb) != 0) {
		lwc_errf(err, errlen, "cannot read the cloud store's trace %s: %s (the file "
			 "lwc-cloudstore --trace FILE writes)", path, strerror(errno));
		au_trace_close(t);
		return LWC_ERR_IO;
	}
	if (!S_ISREG(sb.st_mode)) {
		lwc_errf(err, errlen, "the cloud store's trace %s is not a regular file", path);
		au_trace_close(t);
		return LWC_ERR_ARG;
	}
	t->off = sb.st_size;
	t->resync = sb.st_size > 0 && pread(t->fd, &last, 1, sb.st_size - 1) == 1 &&
		    last != '\n';
	*out = t;
	return LWC_OK;
}

void au_trace_close(struct au_trace *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	free(t->buf);
	free(t->ids);
	free(t);
}

typedef int (*line_fn)(void *ctx, const struct au_line *l);

/* Read what the file holds now and hand every complete line to fn. */
static int pump(struct au_trace *t, line_fn fn, void *ctx, char *err, size_t errlen)
{
	for (;;) {
		ssize_t got;
		size_t start = 0;

		if (t->cap - t->len < TRACE_CHUNK) {
			size_t nc = t->len + TRACE_CHUNK;
			char *nb;

			if (nc > LINE_MAX_BYTES + TRACE_CHUNK) {
				lwc_errf(err, errlen, "%s: a line of more than %u MiB before byte %lld: "
					 "not a cloud store trace", t->path, LINE_MAX_BYTES >> 20,
					 (long long)t->off);
				return LWC_ERR_FORMAT;
			}
			if ((nb = realloc(t->buf, nc)) == NULL)
				return LWC_ERR_NOMEM;
			t->buf = nb;
			t->cap = nc;
		}
		got = pread(t->fd, t->buf + t->len, t->cap - t->len, t->off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			lwc_errf(err, errlen, "reading the cloud store's trace %s: %s", t->path,
				 strerror(errno));
			return LWC_ERR_IO;
		}
		if (got == 0)
			return LWC_OK;
		t->off += got;
		t->len += (size_t)got;
		for (;;) {
			char *nl = memchr(t->buf + start, '\n', t->len - start);
			size_t ll;
			struct au_line l;
			int rc;

			if (nl == NULL)
				break;
			ll = (size_t)(nl - (t->buf + start));
			if (t->resync) {
				t->resync = 0;
				start += ll + 1;
				continue;
			}
			rc = au_line_parse(t->buf + start, ll, &l, &t->ids, &t->idcap);
			if (rc == LWC_ERR_NOMEM)
				return rc;
			if (rc != LWC_OK) {
				lwc_errf(err, errlen, "%s, the line ending at byte %lld, is not a cloud "
					 "store trace line: \"%.80s%s\"", t->path,
					 (long long)(t->off - (off_t)(t->len - start - ll)),
					 t->buf + start, ll > 80 ? "..." : "");
				return LWC_ERR_FORMAT;
			}
			if ((rc = fn(ctx, &l)) != LWC_OK)
				return rc;
			start += ll + 1;
		}
		memmove(t->buf, t->buf + start, t->len - start);
		t->len -= start;
	}
}

static int is_access(const struct au_line *l)
{
	return strcmp(l->op, "READ") == 0 || strcmp(l->op, "WRITE") == 0;
}

static int count_access(void *ctx, const struct au_line *l)
{
	if (is_access(l))
		(*(uint64_t *)ctx)++;
	return LWC_OK;
}

int au_trace_skip(struct au_trace *t, uint64_t *accesses, char *err, size_t errlen)
{
	*accesses = 0;
	return pump(t, count_access, accesses, err, errlen);
}

struct writes {
	int (*fn)(void *ctx, const uint64_t *ids, size_t n);
	void *ctx;
	uint64_t *accesses;
};

static int write_line(void *ctx, const struct au_line *l)
{
	struct writes *w = ctx;

	if (!is_access(l))
		return LWC_OK;
	(*w->accesses)++;
	return strcmp(l->op, "WRITE") == 0 ? w->fn(w->ctx, l->ids, l->n) : LWC_OK;
}

int au_trace_writes(struct au_trace *t, int (*fn)(void *ctx, const uint64_t *ids, size_t n),
		    void *ctx, uint64_t *accesses, char *err, size_t errlen)
{
	struct writes w = { fn, ctx, accesses };

	*accesses = 0;
	return pump(t, write_line, &w, err, errlen);
}

/* A statement being collected. */
struct collect {
	struct au_obs *o;
	uint64_t *ids;                   /* every id READ, with repeats */
	size_t nids, cap;
	double t_first_read;
	int gap_set;
	int last_write;                  /* the last access line was a WRITE */
};

static int collect_line(void *ctx, const struct au_line *l)
{
	struct collect *c = ctx;
	struct au_obs *o = c->o;

	if (strcmp(l->op, "READ") == 0) {
		if (c->nids + l->n > c->cap) {
			size_t nc = c->cap ? c->cap : 256;
			uint64_t *nb;

			while (nc < c->nids + l->n)
				nc *= 2;
			if ((nb = realloc(c->ids, nc * sizeof(*nb))) == NULL)
				return LWC_ERR_NOMEM;
			c->ids = nb;
			c->cap = nc;
		}
		memcpy(c->ids + c->nids, l->ids, l->n * sizeof(*l->ids));
		c->nids += l->n;
		if (o->read_ops == 0)
			o->t_first = c->t_first_read = l->t;
		o->read_ops++;
		o->read_blocks += l->n;
		c->last_write = 0;
	} else if (strcmp(l->op, "WRITE") == 0) {
		if (o->read_ops > 0 && !c->gap_set) {
			o->gap = l->t - c->t_first_read;
			c->gap_set = 1;
		}
		o->write_ops++;
		o->write_blocks += l->n;
		c->last_write = 1;
	} else {
		return LWC_OK;
	}
	o->t_last = l->t;
	o->bytes_in += l->in;
	o->bytes_out += l->out;
	return LWC_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

size_t au_sort_unique(uint64_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

int au_trace_collect(struct au_trace *t, struct au_obs *o, int wait_ms, char *err,
		     size_t errlen)
{
	struct collect c = { .o = o };
	double deadline = mono_s() + wait_ms / 1000.0;
	int rc;

	au_obs_free(o);
	for (;;) {
		if ((rc = pump(t, collect_line, &c, err, errlen)) != LWC_OK)
			goto out;
		if (o->read_ops > 0 && c.last_write && o->write_blocks >= o->read_blocks)
			break;
		if (mono_s() > deadline) {
			lwc_errf(err, errlen, "the cloud store's trace %s shows %s of the statement "
				 "%d ms after its answer (%u READ, %u WRITE lines): is it the trace of "
				 "the cloud store this proxy uses?", t->path,
				 o->read_ops == 0 ? "no READ" : "no WRITE after the READ", wait_ms,
				 o->read_ops, o->write_ops);
			rc = LWC_ERR_TIMEOUT;
			goto out;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	o->nrset = au_sort_unique(c.ids, c.nids);
	if ((o->rset = malloc((o->nrset ? o->nrset : 1) * sizeof(*o->rset))) == NULL) {
		rc = LWC_ERR_NOMEM;
		goto out;
	}
	memcpy(o->rset, c.ids, o->nrset * sizeof(*o->rset));
	rc = LWC_OK;
out:
	free(c.ids);
	if (rc != LWC_OK)
		au_obs_free(o);
	return rc;
}

void au_obs_free(struct au_obs *o)
{
	free(o->rset);
	memset(o, 0, sizeof(*o));
}
