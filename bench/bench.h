/*
 * bench.h - what the parts of lwc-bench share: the options, the workload's
 * constants, the helpers (bench_util.c), the two deployments
 * (bench_deploy.c), the rows (bench_load.c), the experiments
 * (bench_load.c, bench_select.c, bench_modify.c, bench_cells.c,
 * bench_reloc.c), the machine (bench_machine.c) and the results that
 * bench_report.c turns into the stdout summary, JSON and plots.
 *
 * lwc-bench is one program run by one person at a time: its state is in
 * globals, and everything ends in die() on the first error.
 */
#ifndef LWC_BENCH_H
#define LWC_BENCH_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

#include "lwc.h"

/* ---- workload ------------------------------------------------------------ */

#define PADLEN        64
#define MAX_LIST      16
#define NSIZES        5
#define MOD_BASE      10000000ull        /* id step between modify batches */

/* cK = id / K selects K rows; SIZES[i] is K of column COLS[i] */
extern const uint64_t SIZES[NSIZES];
extern const char *const COLS[NSIZES];
extern const char *const LAYOUTS[2];     /* "clustered", "scattered"          */
extern const char *const TABLES[2];      /* "clus", "scat"                    */

/* ---- options (lwc_bench.c) ------------------------------------------------ */

struct opts {
	uint64_t records;
	const char *tag, *out, *img, *root, *bin;
	unsigned only;                 /* bit set of EXP_*                       */
	int rtts[MAX_LIST], nrtts;
	int clients[MAX_LIST], nclients;
	int clients_rtt;
	double client_secs, pg_client_secs;
	unsigned batch;                /* rows per INSERT statement (modify)     */
	unsigned load_batch;           /* rows per INSERT statement of the load  */
	double reps_scale;
	uint64_t seed;
	int keep;
	int presize;                   /* create the store with room for all rows */
	int modify_pk;                 /* table m with id BIGINT PRIMARY KEY      */
	uint64_t rtt_max_rows;         /* largest result size of the rtt rounds  */
	int relocate;                  /* RELOC_*: `serve --relocate` for all but reloc */
	const char *init_args;         /* more `lwc-proxy init` arguments (geometry) */
	const char *serve_args;        /* more `lwc-proxy serve` arguments          */
	const char *store;             /* the cloud store's engine: "lmdb" or "log" */
	int settle;                    /* timed SELECTs wait for a quiet proxy (off) */
	int quiet_start;               /* timed statements start on a quiet
					* machine (off): quiet_start()            */
};

enum {
	EXP_LOAD = 1, EXP_SELECT = 2, EXP_MODIFY = 4, EXP_RTT = 8, EXP_CLIENTS = 16,
	EXP_CELLS = 32, EXP_RELOC = 64, EXP_RANGE = 128, EXP_ALL = 255
};
#define NEXP 8
extern const char *const EXP_NAMES[NEXP]; /* bit i of EXP_* is EXP_NAMES[i] */

extern struct opts O;

/* ---- helpers (bench_util.c) ------------------------------------------------ */

double now_s(void);
/* Rows a bulk load puts in a block of theta usable slots: the fill limit
 * theta - theta/6 of proxy/state.c (the rest stays for write-backs). */
uint64_t bulk_fill(uint64_t theta);
/* Seconds per call of fn(arg), called for at least min_s seconds and 3
 * times; dies when fn does not return LWC_OK. */
double time_loop(int (*fn)(void *), void *arg, double min_s);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* a line on stderr */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* progress of a long phase on stderr: in place on a terminal, else every 10 s */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void progress_clear(void);
/* a table line on stdout, flushed at once */
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);

/* A growing string. */
struct sb {
	char *s;
	size_t len, cap;
};

void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_put(struct sb *b, const char *s, size_t n);
void sb_u64(struct sb *b, uint64_t v);
void sb_reset(struct sb *b);

/* Human-readable counts: 1000 -> "1k". */
const char *size_name(uint64_t k, char *buf, size_t len);

/* xoshiro256** seeded with splitmix64 (one per thread). */
struct rng {
	uint64_t s[4];
};

uint64_t splitmix64(uint64_t *x);
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
uint64_t rng_below(struct rng *r, uint64_t bound);

struct stats {
	unsigned n;
	double med, p95, mean, min, max;      /* seconds */
};

/* Sorts v; p95 is the nearest rank (the maximum below 20 values). */
struct stats stats_of(double *v, unsigned n);

/* Runs argv; its stdout goes to capture (if not NULL) or /dev/null, its
 * stderr to ours.  extra_env: "NAME=VALUE" strings or NULL.  Returns the
 * exit status (-1 when it could not run). */
int run_cmd(char *const argv[], char *const extra_env[], char *capture, size_t caplen);
/* Two consecutive free loopback ports. */
int free_ports(int n);

/* ---- ranges (bench_range.c) ------------------------------------------------- */

void run_ranges(lwc_conn *c, PGconn *p, struct rng *rng);

/* ---- deployments and connections (bench_deploy.c) --------------------------- */

extern char work_dir[PATH_MAX];          /* LWC deployment and its parents   */
extern char pg_dir[PATH_MAX];            /* PostgreSQL cluster               */
extern char lwc_local[PATH_MAX], pg_tmp[PATH_MAX], bin_abs[PATH_MAX];
extern char lwc_dir[PATH_MAX + 16], lwc_key[PATH_MAX + 32];
extern int lwc_port;
extern uint64_t init_blocks;             /* lwc-proxy init --blocks (0: default) */

/* The proxy's relocation setting for a run of `lwc-proxy serve`. */
enum { RELOC_DEFAULT = -1, RELOC_OFF = 0, RELOC_ON = 1 };

/* (Re)starts the deployment, same state and data, the proxy simulating rtt
 * ms to the cloud and with relocation as given (RELOC_DEFAULT: no flag, the
 * state's own setting from `lwc-proxy init`).  Nothing when it already runs
 * so.  Connections must be reopened after a restart. */
void lwc_up(int rtt, int relocate);
void lwc_down(void);
void pg_start(void);
void pg_stop(void);
/* Stops both deployments and removes their directories (unless --keep). */
void cleanup(void);
void on_signal(int sig);

lwc_conn *lwc_open(void);
PGconn *pg_open(void);
/* Runs a statement that returns no rows; returns the affected-row count. */
uint64_t lwc_cmd(lwc_conn *c, const char *sql);
uint64_t pg_cmd(PGconn *p, const char *sql);

/* What `lwc-proxy status` says (the counters count since the proxy's start). */
struct pxstat {
	int relocation;                /* 1 on, 0 off                           */
	uint64_t stash_rows, stash_max, relocate_max;
	uint64_t fill_limit;            /* rows INSERT puts in a block (0: not shown) */
	uint64_t rows_relocated;       /* rows moved from their block to the stash */
	uint64_t rows_evicted;         /* stash rows written back into a block  */
	uint64_t inserts_via_stash, inserts_placed;
	uint64_t over_relocate_max;    /* statements over --relocate-max: no move */
	uint64_t stash_full;           /* statements that found no room: no move */
	uint64_t statements, cloud_reads, cloud_writes;
	uint64_t blocks_moved;         /* blocks read plus blocks written       */
	uint64_t blocks_read;          /* blocks read: a statement's gamma, counted
					  before its answer (a SELECT's WRITE may
					  still be in flight when it has one)    */
	uint64_t blocks, slots_used;
	uint64_t plan_waits;           /* plans retried after waiting           */
	uint64_t plan_wait_us;         /* ... the time they waited (UINT64_MAX: none
					  reported, a proxy before 6 December 2026) */
	double commit_ms_avg;          /* mean commit, under the state lock     */
	char geometry[128];            /* "R=128 S=168 m=64 theta=48 cell=8"    */
	unsigned block_format;
};

/* Fills *s from `lwc-proxy status --state DIR` of the running proxy. */
void pxstat_read(struct pxstat *s);
/* With --settle on: until the proxy holds no block (its admin socket's
 * blocks_locked), so that the next timed statement, LWC's or PostgreSQL's,
 * does not share the machine with the WRITE a SELECT answered before. */
void px_settle(void);

/*
 * The two systems' timed statements come in turn, and after a statement
 * LWC's cloud store goes on compacting its log and making spare segments
 * (the proxy may still write back), PostgreSQL its WAL writer and
 * checkpointer.  pg_select_q() is pg_select() with LWC's servers' CPU
 * during the statement counted in QUIET (lwc_servers_cpu_ns(): every
 * thread's schedstat from /proc, 0 when no server runs), which each SELECT
 * line reports.  With --quiet-start on (off by default: docs/benchmarks.md,
 * 6 December 2026, measured it to start both systems' statements cold and
 * to flatter LWC's ratios), quiet_start(), called before every timed
 * statement of either system in the load, SELECT and INSERT / UPDATE /
 * DELETE lines and before PostgreSQL's in the others, returns once LWC's
 * two servers and PostgreSQL's processes together have used less than
 * QUIET_CPU of a core in each of QUIET_WINDOWS windows of QUIET_MS in a
 * row, or after QUIET_MAX_S, counted in QUIET.
 */
#define QUIET_MS 20
#define QUIET_WINDOWS 3
#define QUIET_CPU 0.05
#define QUIET_MAX_S 60
struct quiet_stats {
	unsigned waits, timeouts;      /* quiet_start calls that waited; gave up  */
	double waited_s;               /* their time beyond the windows' minimum  */
	double busy_ns, pg_ns;         /* LWC's servers' CPU during PostgreSQL's
					* SELECTs, and those statements' time     */
};
extern struct quiet_stats QUIET;
uint64_t lwc_servers_cpu_ns(void);
void quiet_start(void);
double pg_select_q(PGconn *p, const char *sql, uint64_t expect);

/* ---- data and load (bench_load.c) ----------------------------------------------- */

extern const char SCHEMA_COLS[];         /* with id BIGINT PRIMARY KEY        */
extern const char SCHEMA_COLS_NOPK[];    /* no unique column                  */

/* "INSERT INTO table VALUES (...),..." of the rows base + order[from + i]
 * (base + from + i without order), i < n. */
void insert_sql(struct sb *b, const char *table, const uint64_t *order, uint64_t base,
		uint64_t from, uint64_t n);
/* Creates and loads clus and scat on both systems. */
void run_load(lwc_conn *c, PGconn *p, struct rng *rng);

/* ---- experiments ---------------------------------------------------------------- */

/* bench_select.c: one timed SELECT that must return expect rows */
double lwc_select(lwc_conn *c, const char *sql, uint64_t expect);
double pg_select(PGconn *p, const char *sql, uint64_t expect);
/* bench_select.c: the SELECTs of one round trip (PostgreSQL at rtt 0) */
void run_selects(lwc_conn *c, PGconn *p, int rtt, struct rng *rng);
/* bench_select.c: concurrent clients (restarts LWC at --clients-rtt) */
void run_concurrency(struct rng *rng);
/* bench_modify.c */
void run_modify(lwc_conn *c, PGconn *p, struct rng *rng);
/* bench_cells.c: Fig. 11, no deployment */
void run_cells(void);
/* bench_reloc.c: relocation on and off; restarts LWC, so *c is replaced */
void run_reloc(lwc_conn **c, PGconn *p, struct rng *rng);
/* the short name of a relocation line (RL_*), for plots */
const char *reloc_label(int line);
/* rows run_reloc inserts into its table r (for --blocks) */
uint64_t reloc_rows_inserted(void);

/* ---- machine (bench_machine.c) ----------------------------------------------------- */

extern char cpu_model[256], mem_total[64];
extern long ncpu;
extern double other_cores_sum, other_cores_max, ours_cores_sum, sampler_secs;

void read_machine(void);
/* the three load averages of /proc/loadavg */
void loadavg(char *buf, size_t len);
/* Bytes written to storage so far for what runs under dir: the sectors the
 * block device holding dir has written (/proc/diskstats, after a sync(),
 * so pages a phase left dirty count in it), or, when dir's device is not
 * listed there, procs_written.  Phases run one at a time, so a phase's
 * delta is its own.  (/proc/PID/io write_bytes counts a whole page-cache
 * folio each time a page of it is dirtied; with large folios that
 * overstated LWC's random 4 KB index writes about fivefold.) */
uint64_t storage_written(const char *dir);
/* 1 when a and b are on one block device storage_written reads (then one
 * counter serves both, and a phase's delta must be charged to its side) */
int storage_shared(const char *a, const char *b);
uint64_t procs_written(const char *needle);
/* CPU seconds used so far by LWC's servers (the processes whose command
 * line names work_dir: the proxy and the cloud store) and by this process
 * (its liblwc clients), from /proc */
double lwc_cpu_secs(void);
/* A process's time on a CPU so far (ns): every thread's, from its
 * schedstat file (0 when it has gone); and that of the processes whose
 * command line names needle and their children, summed. */
uint64_t proc_cpu_ns(int pid);
uint64_t procs_cpu_ns(const char *needle);
/* a thread that samples the CPU time of ours and of other processes */
void sampler_start(void);
void sampler_end(void);

/* ---- results (bench_report.c) -------------------------------------------------------- */

struct load_res {
	int done;
	uint64_t rows;
	unsigned stmts, batch;               /* LWC: statements, rows in each */
	double lwc_s;
	double pg_copy_s, pg_index_s;
	uint64_t lwc_written, pg_written;    /* bytes to storage (storage_written) */
};

struct sel_res {
	int rtt, layout;
	uint64_t k;
	struct stats lwc, pg;
	double gamma;                  /* blocks read per LWC statement: median */
};

/* bench_floor.c: the design's cryptography per block and per row, one core */
struct floor_res {
	int done;
	unsigned m, S, full, cell;
	double chan_us;                /* one proxy-cloud crossing (a clear
					* frame: chan.h): seal + open, a block */
	double read_chan_us;           /* a READ answer's (a skeleton frame)   */
	double user_chan_us;           /* the user channel's (sealed frames), the
					* same bytes                              */
	double open_us, unperm_us, fill_us, perm_us, seal_us;
	double proxy_us, store_us, block_us;   /* per block read and written    */
	double record_us;              /* the client's record open, per row     */
	double row_us;                 /* per returned row: user channel + open */
	double commit_us;              /* one durable LMDB-like commit (median) */
	double write_us;               /* the store's durable write of a block:
					* two shards, scattered pages (median)   */
	double write_seq_us;           /* ... the same pages one after another  */
	double block_alone_us;         /* open .. seal of a block, one thread   */
	double block_shared_us;        /* ... each of ncpu threads at once      */
	double cores;                  /* ncpu x alone / shared: the vCPUs'
					* worth in cores, the floor's divisor   */
};
extern struct floor_res FLOOR;
void measure_floor(unsigned m, unsigned S, unsigned full, unsigned cell, const char *dir);

struct mod_res {
	const char *op;
	uint64_t rows;
	unsigned stmts;
	double lwc_s, pg_s;
	uint64_t lwc_written, pg_written;    /* bytes to storage (storage_written) */
};

struct conc_res {
	int clients, rtt;
	uint64_t k;
	double lwc_secs, pg_secs;
	uint64_t lwc_stmts, pg_stmts;
	struct stats lwc, pg;
	double lwc_thr, pg_thr;      /* statements/s */
	/* the proxy's counters over the LWC run (relocation on): statements it
	 * served, and of them those that moved no row although they matched
	 * some (the stash full, or over --relocate-max) */
	uint64_t lwc_counted, lwc_unmoved;
	/* per statement the proxy served: blocks read (each also written back),
	 * and the CPU ms of the proxy, the cloud store and the clients */
	double lwc_gamma, lwc_cpu_ms;
	/* and what they waited for: plans retried after waiting for a block or
	 * a stash row another statement held, and the ms of the commit (made
	 * under the proxy's state lock, so one statement's at a time) */
	double lwc_waits, lwc_wait_ms, lwc_commit_ms;
};

#define NCELLSZ 10
struct cell_res {
	size_t bytes;
	double perm_us[4], unperm_us[4], seal_us, open_us;   /* block format 2 */
	double perm1_us[4];                                  /* format 1's draws */
};

/* The relocation experiment: one line per statement kind, measured in
 * rounds with relocation on, off, on, off (the last two the SELECTs only:
 * alternating cancels the machine's drift between rounds; the figures of
 * each kind pool the rounds); PostgreSQL once. */
enum {
	RL_POINT_CLUS, RL_POINT_SCAT, RL_R100_CLUS, RL_R100_CLUS_RE, RL_R100_SCAT,
	RL_INS_1K, RL_INS_10K, RL_UPD_1K, RL_UPD_10K, RL_DEL_1K, RL_DEL_10K, RL_NLINES
};
#define RL_NSELECT  (RL_R100_SCAT + 1)   /* the SELECT lines come first       */
#define RL_NROUNDS  4                    /* on, off, on again, off again      */

struct reloc_line {
	const char *op;                /* "point SELECT", "INSERT", ...         */
	const char *what;              /* "clustered", "clustered, read before", ... */
	uint64_t rows;                 /* rows per statement                    */
	struct stats on, off;          /* the rounds of each kind pooled        */
	struct stats lwc[RL_NROUNDS], pg;  /* per round; PostgreSQL in round 0  */
	double *sample[RL_NROUNDS];    /* the latencies of each round (sorted)  */
	/* per LWC statement, from lwc-proxy status after every repetition */
	double gamma[RL_NROUNDS];      /* blocks read (= written): median of the reps */
	double gamma_max[RL_NROUNDS];  /* and the largest                       */
	double moved[RL_NROUNDS];      /* rows into the stash, mean             */
	double evicted[RL_NROUNDS];    /* rows written back from it, mean       */
	double stashed_inserts[RL_NROUNDS]; /* INSERT rows that went to the stash */
};

#define RL_MAX_PROBES 64
#define RL_MAX_STRETCH 64
#define RL_STRETCH_STEP 10
struct reloc_round {
	int relocate;                  /* 1 on, 0 off                           */
	unsigned warm_point, warm_range;  /* warm-up statements per table       */
	double warm_s;
	struct pxstat start, warm, end; /* before and after the warm-up, at the end */
};

struct reloc_res {
	int done;
	int default_on;                /* the deployment's default was on       */
	struct reloc_round round[RL_NROUNDS];
	struct reloc_line line[RL_NLINES];
	/* the same clustered c100 = v ranges, blocks read per statement: the
	 * first read (before any warm-up), again at the end of the first round
	 * (relocation on), and a third time at the end of the second (off) */
	unsigned nprobe;
	uint64_t probe_v[RL_MAX_PROBES];
	unsigned probe_gamma[3][RL_MAX_PROBES];
	/* a stretch of clustered 100-row SELECTs only, relocation on: the
	 * stash after every RL_STRETCH_STEP statements */
	unsigned nstretch;
	struct {
		unsigned stmts;            /* statements so far                     */
		uint64_t stash_rows;
		uint64_t moved, back;      /* rows into / out of the stash so far   */
		uint64_t stash_full;       /* statements that moved nothing: full   */
		double med_ms;             /* median latency of the last step       */
	} stretch[RL_MAX_STRETCH];
};

extern struct load_res LOADS[2];
extern struct sel_res *SELS;
extern size_t nsels;
extern struct mod_res MODS[3 * NSIZES + 1];
extern size_t nmods;
extern struct conc_res CONCS[MAX_LIST];
extern size_t nconcs;
extern struct cell_res CELLS[NCELLSZ];
extern size_t ncells;
extern struct reloc_res RELOC;
extern struct pxstat deploy_status;      /* the proxy at the start of the run */
extern double t_start;
extern char started_at[64];
extern char pg_version[256];
extern double phase_s[NEXP];             /* seconds per experiment (EXP_NAMES) */

void sel_add(struct sel_res r);
const struct sel_res *sel_find(int rtt, int layout, uint64_t k);

void write_json(const char *path, const char *la0, const char *la1);
void write_plots(const char *ddir, const char *img);
void print_targets(void);

#endif
