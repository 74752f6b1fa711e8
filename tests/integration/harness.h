/*
 * harness.h - starts and stops the real servers for integration tests.
 *
 * Environment (set by tests/run.sh):
 *   LWC_BIN           directory of the binaries under test (bin/ or build/asan/bin)
 *   LWC_TEST_BACKEND  lmdb (default), log, pg or redis
 *   LWC_TEST_PG       libpq conninfo of the private PostgreSQL cluster (pg only)
 *   LWC_TEST_REDIS    seed list HOST:PORT,... of the private Redis Cluster
 *                     (redis only; tests/redis-cluster-tmp.sh prints it)
 *   LWC_TEST_TMP      where the servers' private directories go (default /tmp)
 */
#ifndef LWC_TEST_HARNESS_H
#define LWC_TEST_HARNESS_H

#include <stdint.h>
#include <sys/types.h>

struct h_cs {
	pid_t pid;
	char dir[256];            /* private temp directory                 */
	char addr[64];            /* 127.0.0.1:PORT                         */
	char store[1024];         /* --store argument                        */
	char key_file[300];
	char trace[300];
	char log[300];
	char db[64];              /* PostgreSQL database of this test       */
	char prefix[64];          /* Redis Cluster key prefix of this test  */
	uint8_t key[32];          /* K_CS                                   */
};

const char *h_backend(void);

/* Fresh directory, key, backend store (PostgreSQL: a new database). */
void h_cs_setup(struct h_cs *cs);
/* Start lwc-cloudstore (extra args may be NULL-terminated list or NULL);
 * returns once it accepts connections.  Aborts the test if it cannot. */
void h_cs_start(struct h_cs *cs, const char *const *extra);
/* Send sig and wait; returns the exit status as from waitpid. */
int h_cs_stop(struct h_cs *cs, int sig);
/* Stop if running, drop the database (Redis: the keys of its prefix),
 * remove the directory. */
void h_cs_teardown(struct h_cs *cs);
/* Deletes every key of the Redis Cluster of LWC_TEST_REDIS that starts with
 * prefix followed by ':'; returns the number deleted (-1 on failure). */
long h_redis_drop(const char *prefix);
/* The number of keys starting with prefix ':' on one node (-1 on failure). */
long h_redis_count(const char *host, int port, const char *prefix);

/* ---- lwc-proxy ------------------------------------------------------------ */

struct h_px {
	pid_t pid;
	struct h_cs *cs;          /* the cloud store it uses               */
	char dir[300];            /* cs->dir/px: key files, logs           */
	char state[320];          /* --state DIR                           */
	char addr[64];            /* 127.0.0.1:PORT (a new port per start) */
	char log[320];            /* stdout+stderr of every start (appended) */
	char sock[340];           /* admin socket                          */
	uint8_t ku[32];           /* K_U of this deployment                */
	int nkeys;                /* key files written so far              */
};

/* lwc-proxy init --state DIR --cloudstore CS --cs-key-file F [extra...];
 * a new random K_U.  Aborts the test if init fails. */
void h_px_init(struct h_px *px, struct h_cs *cs, const char *const *extra);
/* lwc-proxy serve --state DIR --listen ADDR [extra...] on a fresh port;
 * returns once it accepts TCP connections.  Aborts if it cannot start. */
void h_px_start(struct h_px *px, const char *const *extra);
/* Send sig and wait; returns the waitpid status (-1 when not running). */
int h_px_stop(struct h_px *px, int sig);
/* Stop if running (SIGKILL). */
void h_px_teardown(struct h_px *px);
/* Run `lwc-proxy ARGS...` (NULL-terminated), output to out_file (may be
 * NULL: the proxy log); returns the exit status. */
int h_px_cli(struct h_px *px, const char *out_file, ...) __attribute__((sentinel));
/* A counter of the proxy's status (what `lwc-proxy status` prints), asked
 * on its admin socket; UINT64_MAX when the status cannot be read or has no
 * such key. */
uint64_t h_px_status_u64(struct h_px *px, const char *key);
/* A user: a random K_DBU (into kdbu), a user key file with this
 * deployment's K_U, `lwc-proxy user add --state DIR --name NAME --key-file F`.
 * Returns the exit status of user add. */
int h_px_user_add(struct h_px *px, const char *name, uint8_t kdbu[32]);
/* `lwc-proxy user revoke --state DIR NAME`; returns the exit status. */
int h_px_user_revoke(struct h_px *px, const char *name);
/* `lwc-proxy check --state DIR` (proxy stopped), output to out_file. */
int h_px_check(struct h_px *px, const char *out_file);
/* Print the last lines of a file to stderr (diagnostics). */
void h_tail(const char *path, int lines);

/* Run a command line; returns its exit status (0..255) or -1. */
int h_run(const char *const *argv, const char *out_file);

/* P with the loopback ports P .. P+n-1 free now (scripts/free-port's rule,
 * without running it); aborts when there is none. */
int h_free_port(int n);

/* The private directory of a deployment: "$LWC_TEST_TMP/lwc-test-XXXXXX"
 * made (mode 0700) into dir; h_is_test_dir tells whether a path is one. */
void h_make_test_dir(char *dir, size_t len);
/* $LWC_TEST_TMP, else /tmp. */
const char *h_test_tmp(void);
int h_is_test_dir(const char *dir);

/* Path of a binary under test. */
const char *h_bin(const char *name, char *buf, size_t len);

/* An LMDB cloud store (cs->dir/store) is split into shards: shard 0 in
 * store/, shard j in store/shard-j/.  How many there are, and shard j's
 * directory. */
unsigned h_cs_shards(const struct h_cs *cs);
void h_cs_shard_dir(const struct h_cs *cs, unsigned j, char *buf, size_t len);

/* ---- lwc-cloudstore --trace ---------------------------------------------- */

#define H_MAX_IDS 8192
#define H_MAX_OPS 256

/* The requests of a trace since a mark: a statement of several batches
 * makes several READs and WRITEs, whose ids follow one another here. */
struct h_access {
	int nread, nwrite, other;       /* READ/WRITE/other lines (HELLO apart) */
	size_t nr, nw;
	uint64_t r[H_MAX_IDS], w[H_MAX_IDS]; /* ids of every READ and WRITE, in order */
	int nops;                       /* READ and WRITE lines, in order:       */
	char op[H_MAX_OPS];             /* 'R' or 'W'                            */
	double t[H_MAX_OPS];            /* the line's time, s of its day (the next
					   day's counted on)                     */
	char bad[256];                  /* the first line with status != ok */
};

/* The trace's size now: a mark for h_trace_since. */
long h_trace_mark(const struct h_cs *cs);
/* The same once px's running statements have committed (no block locked,
 * the proxy's status; up to 5 s): a SELECT is answered while its WRITE may
 * still be on its way, which would land after a mark taken at once. */
long h_trace_mark_idle(struct h_px *px);
/* Wait (up to 5 s) until px's running statements have committed: no block
 * locked (the proxy's status); at once when px is not running. */
void h_px_idle(struct h_px *px);
/* The requests the trace holds after mark; 0, or -1 if it cannot be read.
 * A SELECT is answered while its last WRITE may still be on its way
 * (proxy/engine.c, stmt_answer): while the trace holds fewer ids written
 * than read, it is read again, for up to 3 s. */
int h_trace_since(const struct h_cs *cs, long mark, struct h_access *a);
/* Is pairs a number of READ/WRITE pairs the proxy may cut an access of
 * gamma blocks into with --batch-blocks max (proxy/access.c,
 * access_batch_size, over a fast or a slow link)? */
int h_batches_ok(int pairs, size_t gamma, size_t max);

/* Count lines of a file that contain needle. */
int h_count_lines(const char *path, const char *needle);

#endif
