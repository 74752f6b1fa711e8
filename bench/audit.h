/*
 * audit.h - the pieces of lwc-audit (bench/lwc_audit.c): what the cloud's
 * trace shows of one statement, the reader that cuts the trace into
 * statements (audit_trace.c), the attacks that use the trace alone
 * (audit_attacks.c), the run's summary, checks and output
 * (audit_report.c), and the concurrent clients of --storm (audit_storm.c).
 *
 * The attacks see only struct au_obs (the adversary's view).  The fields of
 * struct au_stmt outside o (kind, id, target, truth, k) are the workload's
 * labels and the proxy's ground truth: the attacks use them to pick which
 * statements to compare (as an adversary who guesses that two statements
 * share a record would) and to SCORE the outcome, never to decide it.
 */
#ifndef LWC_AUDIT_H
#define LWC_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "lwc_err.h"

#define AU_NO_BLOCK UINT64_MAX            /* no block: in the stash, or unknown */

/* ---- a seeded generator (xoshiro256**), so a run can be repeated ---------- */

struct au_rng {
	uint64_t s[4];
};

void au_rng_seed(struct au_rng *r, uint64_t seed);
uint64_t au_rng_next(struct au_rng *r);
/* Uniform in [0, n), n >= 1, without modulo bias. */
uint64_t au_rng_below(struct au_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double au_rng_double(struct au_rng *r);
/* Shuffle n elements of size sz in place (Fisher-Yates). */
void au_rng_shuffle(struct au_rng *r, void *base, size_t n, size_t sz);

/* ---- the trace of one statement ------------------------------------------ */

/* What the cloud store's trace shows of one statement: its READ and WRITE
 * lines (HELLO and STAT lines say nothing about statements). */
struct au_obs {
	uint64_t *rset;        /* distinct block ids READ, ascending (malloc'ed)  */
	size_t nrset;
	uint64_t read_blocks;  /* sum of n over the READ lines: the statement's gamma */
	uint64_t write_blocks; /* sum of n over the WRITE lines                   */
	uint32_t read_ops;     /* READ lines                                      */
	uint32_t write_ops;    /* WRITE lines                                     */
	uint64_t bytes_in;     /* request bytes of its READ and WRITE lines       */
	uint64_t bytes_out;    /* answer bytes of its READ and WRITE lines        */
	double gap;            /* seconds from the first READ to the next WRITE   */
	double t_first;        /* the trace's time (s) of its first READ line ...  */
	double t_last;         /* ... and of its last READ or WRITE line          */
};

void au_obs_free(struct au_obs *o);
/* Sort v[0..n) and drop repeats in place; the distinct count. */
size_t au_sort_unique(uint64_t *v, size_t n);

/* One parsed trace line, e.g.
 *   2026-11-24T16:56:02.123456Z conn=3 op=READ n=4 ids=1,5,9,12 in=40 out=43270 status=ok
 * (cloudstore/proto.c, cs_trace_write). */
struct au_line {
	double t;              /* seconds since the epoch (UTC)                   */
	uint64_t conn;
	char op[8];            /* HELLO, READ, WRITE, STAT                        */
	uint64_t n;
	uint64_t *ids;         /* n ids; points into the caller's buffer          */
	uint64_t in, out;
	int ok;                /* status=ok                                       */
};

/* Parse one line (without its newline).  ids go to *buf (grown with
 * realloc, *cap elements; the caller frees it).  LWC_OK, LWC_ERR_FORMAT,
 * LWC_ERR_NOMEM. */
int au_line_parse(const char *s, size_t len, struct au_line *l, uint64_t **buf,
		  size_t *cap) LWC_WUR;

/* Reads the trace file incrementally, from where it stood when opened. */
struct au_trace;

int au_trace_open(struct au_trace **out, const char *path, char *err, size_t errlen) LWC_WUR;
void au_trace_close(struct au_trace *t);
/* Consume every complete line the file holds now.  *accesses counts the
 * READ and WRITE lines among them (between two audited statements there
 * should be none: another client would blur the figures). */
int au_trace_skip(struct au_trace *t, uint64_t *accesses, char *err, size_t errlen) LWC_WUR;
/* As au_trace_skip, and hand the ids of every WRITE line to fn, in the
 * trace's order (the ids point into a buffer reused for the next line). */
int au_trace_writes(struct au_trace *t, int (*fn)(void *ctx, const uint64_t *ids, size_t n),
		    void *ctx, uint64_t *accesses, char *err, size_t errlen) LWC_WUR;
/* The lines of the statement that has just completed: everything after the
 * last skip or collect, read until its READs are followed by WRITEs of as
 * many blocks (the store writes a line before it answers, and the proxy
 * answers after the WRITE, so they are normally there at once; the file is
 * re-read for up to wait_ms otherwise).  o is reset first.  LWC_ERR_TIMEOUT
 * when no such WRITE came. */
int au_trace_collect(struct au_trace *t, struct au_obs *o, int wait_ms, char *err,
		     size_t errlen) LWC_WUR;

/* ---- the audited statements ------------------------------------------------ */

enum au_kind {
	AU_SELECT,             /* SELECT * ... WHERE id = X                       */
	AU_INSERT,             /* one-row INSERT of a new id                      */
	AU_UPDATE,             /* UPDATE ... SET v = v + 1 WHERE id = X            */
	AU_DELETE,             /* DELETE ... WHERE id = X                          */
	AU_IN,                 /* SELECT * ... WHERE id IN (k ids)                */
	AU_RANGE,              /* SELECT * ... WHERE id BETWEEN a AND a + k - 1   */
	AU_NKINDS
};

extern const char *const au_kind_names[AU_NKINDS];

enum au_phase {
	AU_P_REPEAT,           /* attacks 1 and 2: targets repeated among others */
	AU_P_ZIPF,             /* attack 3: Zipf-distributed point SELECTs       */
	AU_P_WARM,             /* attack 4: statements before the typed ones     */
	AU_P_TYPES,            /* attack 4: the four statement types, shuffled   */
	AU_P_SIZE,             /* attack 5: k rows matched                       */
	AU_P_RANGE,            /* attacks 7 and 8: ranges read again among others */
	AU_P_COREAD,           /* attack 9: single rows of the ranges, later      */
	AU_P_PACE,             /* attack 4, timing: the four types back to back   */
	AU_P_STORM,            /* --storm: one WRITE line of the concurrent clients,
				  unlabelled (its rset: the blocks written); only
				  the order of writes (attacks 6 and 8) uses it  */
	AU_NPHASES
};

extern const char *const au_phase_names[AU_NPHASES];

struct au_stmt {
	enum au_phase phase;
	enum au_kind kind;
	int64_t id;            /* the row a point statement targets; -1 for IN   */
	int32_t target;        /* AU_P_REPEAT: target index, -1 for the others;
				  AU_P_ZIPF: popularity rank - 1               */
	uint32_t round;        /* AU_P_ZIPF: which round (own set of ids)        */
	uint32_t k;            /* rows the statement matches                     */
	uint64_t truth;        /* ground truth: the block holding id right before
				  the statement; AU_NO_BLOCK: stash or none      */
	uint32_t kblocks;      /* ground truth, AU_IN, AU_RANGE: blocks holding the
				  k rows                                         */
	uint64_t *real;        /* ground truth, AU_RANGE: those blocks, ascending
				  (malloc'ed; kblocks of them)                   */
	uint32_t rep;          /* AU_RANGE: which read of its range (0: first)   */
	double secs;           /* client-side latency                            */
	struct au_obs o;       /* the trace                                      */
};

/* ---- the attacks (audit_attacks.c) ----------------------------------------- */

/* 1. Intersection of the READ sets of the first r repetitions of each
 * target (res->r set by the caller).  identified: exactly one block left
 * and it is a block the record was read from at one of those repetitions;
 * nonempty: anything left. */
struct au_isect {
	int r;
	uint32_t targets;      /* targets with at least r repetitions             */
	uint32_t identified, nonempty;
};

int au_attack_intersection(const struct au_stmt *s, size_t n, uint32_t ntargets,
			   struct au_isect *res) LWC_WUR;

/* 2. Linkage: do the READ sets of two point SELECTs overlap?  Over every
 * pair of repetitions of a target, and over npairs random pairs of point
 * SELECTs of the repetition phase with different ids. */
struct au_link {
	uint64_t same_pairs, same_overlap;
	uint64_t diff_pairs, diff_overlap;
};

int au_attack_linkage(const struct au_stmt *s, size_t n, uint32_t ntargets, uint64_t npairs,
		      struct au_rng *rng, struct au_link *res) LWC_WUR;

/* 3. Frequency: the top blocks most READ in the Zipf phase against the
 * blocks of the top hottest ids (an id's block: the one ground truth says
 * it was read from most often, a tie to the one it was read from first;
 * reads served from the stash ignored; an id never read from a block has
 * none and cannot count). */
#define AU_FREQ_MAX_ROUNDS 16

struct au_freq {
	uint32_t top;                 /* 20                                       */
	uint32_t round;               /* the round these figures are of           */
	uint32_t rounds;              /* set by the report: rounds run, and ...   */
	uint32_t round_hits[AU_FREQ_MAX_ROUNDS]; /* ... each one's hits; the
					 figures above are the median round's */
	uint32_t hot_with_block;      /* hottest ids ever read from a block        */
	uint32_t hits;                /* of those, whose block is a top block      */
	uint64_t stash_reads;         /* Zipf statements served from the stash     */
	uint64_t statements;
	uint64_t top_reads[3];        /* READ counts of the 1st, 2nd, 20th block   */
	uint64_t distinct_blocks;     /* blocks READ at least once in the phase    */
	double chance;                /* hits expected if each id's block were the
					 block of a READ drawn at random from the
					 phase: hot_with_block x the top blocks'
					 share of its READs                        */
	double round_chance[AU_FREQ_MAX_ROUNDS];
};

int au_attack_frequency(const struct au_stmt *s, size_t n, uint32_t top, uint32_t round,
			struct au_freq *res) LWC_WUR;

/* 4. Statement type from trace features, nearest centroid on standardised
 * features; train on a random half, test on the other, repeated over
 * `splits` random halves (accuracy and confusion pooled over them).  The
 * recurrence feature of a statement: it READs a block one of the `window`
 * statements before it READ (warm-up statements count as predecessors). */
#define AU_NFEAT 6
extern const char *const au_feat_names[AU_NFEAT];

struct au_type {
	uint32_t splits, window;
	uint64_t tested, correct;
	uint64_t confusion[4][4];     /* [true kind][predicted kind]              */
	uint32_t per_kind[4];         /* statements of each kind                  */
	uint32_t recurrent[4];        /* of them, recurrent                       */
	double mean[4][AU_NFEAT];     /* feature means per kind (raw units)       */
};

int au_attack_type(const struct au_stmt *s, size_t n, uint32_t window, uint32_t splits,
		   struct au_rng *rng, struct au_type *res) LWC_WUR;

/* 4, timing: the statements of phase AU_P_PACE ran back to back, as a script
 * sends them (no wait for the proxy's commit, no ground truth read between
 * them), so the intervals between them are the proxy's and the client's.
 * The same nearest-centroid classifier on two features of a statement: the
 * interval from the last access line of the statement before to its first
 * READ (prev), and from its last access line to the next one's first READ
 * (next); each alone and both together. */
struct au_interval {
	uint32_t splits;
	uint64_t tested, correct;           /* both features                    */
	uint64_t tested_prev, correct_prev; /* prev alone                       */
	uint64_t tested_next, correct_next; /* next alone                       */
	uint32_t per_kind[4];
	double median_prev_ms[4], median_next_ms[4];
	/* the tails, [0] before and [1] after: the pooled 95th and 99th
	 * percentiles, and each type's share of its intervals beyond them
	 * (equal shares, about 0.05 and 0.01, when the tails tell nothing) */
	double p95_ms[2], p99_ms[2];
	double past95[2][4], past99[2][4];
};

int au_attack_interval(const struct au_stmt *s, size_t n, uint32_t splits, struct au_rng *rng,
		       struct au_interval *res) LWC_WUR;

/* 5. Recency: every statement writes back what it READ, so the cloud knows
 * when each block was last written.  A record moved by relocation sits in
 * a block a recent statement wrote (its padding took the record from the
 * stash), while padding blocks are drawn uniformly, whatever their age.
 * The guess, for each point SELECT whose record is in a block: the block
 * of its READ set written last (by the statements audited before it; ties
 * share the guess).  Informational (no --check threshold yet): hits
 * against chance, the mean of 1 / |READ set|. */
struct au_recency {
	uint64_t tries;               /* point SELECTs with the record in a block */
	double hits;                  /* guesses that were the record's block      */
	double chance;                /* sum of 1 / |READ set|                     */
	uint64_t unwritten;           /* ... whose record's block none wrote yet  */
};

/* quiet: order the blocks by the writes of the audited statements only,
 * leaving out the storm's (AU_P_STORM): the guess of a cloud that tells a
 * burst of many clients from the quiet periods by its timing. */
int au_attack_recency(const struct au_stmt *s, size_t n, int quiet,
		      struct au_recency *res) LWC_WUR;

/* 7. Ranges read again (phase AU_P_RANGE, target = the range): do the READ
 * sets of two reads of one range overlap more than those of two different
 * ranges?  Over every pair of reads of a range, and over npairs random
 * pairs of reads of different ranges. */
int au_attack_range_linkage(const struct au_stmt *s, size_t n, uint64_t npairs,
			    struct au_rng *rng, struct au_link *res) LWC_WUR;

/* 8. Shared writer: each statement writes back every block it READ, so the
 * cloud knows each block's last writer.  Rows a statement wrote back
 * together share it; padding blocks drawn one by one seldom do.  The
 * guess, for each range read: the blocks of its READ set whose last writer
 * (among the audited statements before it) wrote the most blocks of the
 * set, when that is two or more.  Scored against the ground truth of AU_RANGE statements, the
 * first reads of their ranges apart from the later ones: precision of the
 * guess against the base rate (real blocks / blocks READ). */
struct au_shared {
	uint64_t stmts;               /* range reads scored                        */
	uint64_t blocks, real;        /* blocks READ; of them real                 */
	uint64_t guessed, hits;       /* blocks guessed real; of them real         */
};

int au_attack_shared_writer(const struct au_stmt *s, size_t n, int later,
			    struct au_shared *res) LWC_WUR;

/* 9. Rows read together before (phase AU_P_COREAD: point SELECTs of rows
 * of the ranges of attacks 7 and 8, once their reads are over, target =
 * the range): do the READ sets of two point SELECTs of rows of one range
 * overlap more than those of rows of different ranges?  Rows written back
 * into one block stay together until each is read, so a later reader of
 * one shares that block with a later reader of another.  Over every pair
 * of one range, and npairs random pairs of different ranges. */
int au_attack_coread(const struct au_stmt *s, size_t n, uint64_t npairs, struct au_rng *rng,
		     struct au_link *res) LWC_WUR;

/* Median of n values (sorts v in place); 0 for n = 0. */
double au_median(double *v, size_t n);

/* ---- a run's summary, checks and output (audit_report.c) ---------------------- */

#define AU_LINK_PAIRS   4000      /* random pairs of different ids           */
#define AU_FREQ_TOP     20        /* hottest ids, most READ blocks            */
#define AU_TYPE_WINDOW  5         /* recurrence: the statements before       */
#define AU_TYPE_SPLITS  25        /* random halves of the classifier         */
#define AU_NISECT       3
#define AU_NSIZE        3
extern const int au_isect_r[AU_NISECT];       /* r = 2, 3, 5                 */
extern const uint32_t au_size_k[AU_NSIZE];    /* k = 1, 10, 100              */

/* Thresholds of --check (the contract of DESIGN.md section 6). */
#define AU_LIM_ISECT    0.05      /* fraction of targets identified, each r */
#define AU_LIM_LINK     0.05      /* linkage advantage                       */
#define AU_LIM_FREQ     2         /* hottest 20 ids with their block in the top 20,
				     beyond the number chance puts there       */
#define AU_LIM_TYPE     0.30      /* classifier accuracy (chance 0.25)       */
#define AU_LIM_REC      0.05      /* |rec(INSERT) - rec(SELECT)|             */
#define AU_LIM_RECENCY  0.03      /* recency hit rate beyond chance           */
#define AU_LIM_RLINK    0.05      /* range linkage advantage                  */
#define AU_LIM_SHARED   0.10      /* shared writer: precision beyond the base
				     rate, ranges read again                  */
#define AU_LIM_COREAD   0.05      /* rows read together: linkage advantage    */

struct au_kv {
	char *key, *value;
};

/* The workload's settings and what the run measured besides the trace. */
struct au_gstat {
	size_t n;
	double min, median, max;
};

struct au_run {
	const char *table, *trace, *state, *started;
	uint64_t rows, targets, reps, others, zipf_ids, zipf_queries, zipf_rounds, per_type, seed;
	uint64_t ranges, range_rows, range_reps, coread_rows;
	double zipf_s;
	uint64_t setup_stmts;         /* DROP, CREATE, the load                   */
	uint64_t foreign;             /* cloud accesses between audited statements */
	uint32_t storm_clients;       /* --storm: 0 when the audit ran alone      */
	uint64_t storm_rows, storm_every, storm_bursts, storm_stmts, storm_accesses;
	uint64_t storm_rows_read;     /* rows the storm's range reads returned    */
	uint32_t storm_writes;        /* --storm-writes: % of its statements      */
	uint64_t storm_updates, storm_inserts, storm_deletes;
	double storm_secs;            /* seconds a burst                          */
	struct au_gstat storm_stash;  /* the proxy's stash_rows after each burst  */
	double secs_total, secs_load, phase_secs[AU_NPHASES];
	const struct au_kv *status;   /* the proxy's status (admin socket)        */
	size_t nstatus;
	const char *status_err;       /* why there is none                        */
};

struct au_results {
	struct au_isect isect[AU_NISECT];   /* the r <= --reps                  */
	int nisect;
	struct au_link link;
	struct au_freq freq;
	struct au_type type;
	struct au_interval interval;         /* 4, timing                       */
	struct au_recency recency;
	struct au_recency recency_quiet;     /* 6, the storm's writes left out  */
	int stormed;                         /* --storm ran: recency_quiet checked */
	struct au_link rlink;                /* 7                              */
	struct au_link coread;               /* 9                              */
	struct au_shared shared[2];          /* 8: first reads, later reads    */
	struct au_gstat range_gamma[2];      /* gamma of first and later reads */
	struct au_gstat range_blocks[2];     /* blocks the rows were in        */
	struct au_gstat gamma[AU_NKINDS];
	struct au_gstat latency[AU_NKINDS]; /* client-side, milliseconds        */
	struct au_gstat size[AU_NSIZE];     /* gamma per k                      */
	struct au_gstat size_blocks[AU_NSIZE]; /* blocks the k rows were in     */
	uint64_t stash_served[AU_NPHASES];  /* rows the stash served            */
	uint64_t audited;
	uint64_t truth_checked;             /* statements whose row was in a block */
	uint64_t truth_unread;              /* ... that did not READ that block  */
};

struct au_check {
	const char *name;
	double value, limit;          /* passes when value <= limit               */
	int pass;
};

/* intersection at each r, linkage, frequency, type, recurrence, type from
 * the intervals, recency,
 * the ground truth's consistency */
#define AU_MAX_CHECKS (AU_NISECT + 11)

int au_analyse(const struct au_stmt *s, size_t n, const struct au_run *run, struct au_rng *rng,
	       struct au_results *R) LWC_WUR;
/* The checks of R into c (AU_MAX_CHECKS at most); their number. */
size_t au_checks(const struct au_results *R, struct au_check *c);
/* The readable table, on stdout. */
void au_report_print(const struct au_run *run, const struct au_results *R,
		     const struct au_check *ck);
int au_report_json(const char *path, const struct au_run *run, const struct au_results *R,
		   const struct au_check *ck, size_t nck, int passed, char *err,
		   size_t errlen) LWC_WUR;

/* ---- concurrent clients between the audited statements (audit_storm.c) --- */

struct au_storm_cfg {
	const char *key, *proxy;     /* as lwc_connect takes them                */
	const char *table;
	uint32_t clients;            /* threads, each its own connection         */
	uint64_t rows;               /* ids a statement reads: BETWEEN lo AND lo + rows - 1 */
	uint64_t id_max;             /* lo is uniform in 1 .. id_max - rows + 1  */
	uint32_t writes;             /* % of statements that write (audit_storm.c) */
	uint64_t seed;
};

struct au_storm_tally {
	uint64_t bursts, stmts;      /* bursts, statements run                   */
	uint64_t rows;               /* rows the range reads returned            */
	uint64_t updates, inserts, deletes;   /* the writes that ran             */
};

/* A storm thread's statements (au_storm_next; unit-tested apart from the
 * threads).  With cfg->writes = P, P % of them write: half UPDATE a range,
 * a quarter INSERT a batch of au_storm_insert_rows rows with ids of the
 * thread's own, a quarter DELETE its oldest batch still there. */
#define AU_STORM_ID_BASE   1000000000ll  /* inserted ids: INT, as id is        */
#define AU_STORM_ID_SPAN   10000000ll    /* ids one thread may insert          */
#define AU_STORM_BATCHES   64            /* inserted batches a thread keeps    */

enum au_storm_kind { AU_SK_READ, AU_SK_UPDATE, AU_SK_INSERT, AU_SK_DELETE };

struct au_storm_ids {
	int64_t next, end;                  /* its next id to insert, its last + 1 */
	int64_t batch[AU_STORM_BATCHES];    /* first ids of its batches still there */
	uint32_t head, count;
};

uint64_t au_storm_insert_rows(const struct au_storm_cfg *cfg);
void au_storm_ids_init(struct au_storm_ids *ids, uint32_t thread);
/* The next statement into sql (len bytes; 8 KB hold every one). */
enum au_storm_kind au_storm_next(const struct au_storm_cfg *cfg, const struct au_storm_ids *ids,
				 struct au_rng *rng, char *sql, size_t len);
/* The statement au_storm_next gave ran without an error. */
void au_storm_ran(const struct au_storm_cfg *cfg, struct au_storm_ids *ids,
		  enum au_storm_kind kind);

struct au_storm;

/* Connect the clients and park them; *out is set even on an error (give it
 * to au_storm_stop). */
int au_storm_start(struct au_storm **out, const struct au_storm_cfg *cfg, char *err,
		   size_t errlen) LWC_WUR;
/* Let the clients run statements for secs seconds, then wait until every one
 * has finished its statement.  An error when a statement failed. */
int au_storm_burst(struct au_storm *s, double secs, char *err, size_t errlen) LWC_WUR;
void au_storm_counts(struct au_storm *s, struct au_storm_tally *t);
void au_storm_stop(struct au_storm *s);

#endif
