/*
 * harness.h - starts and stops the real servers for integration tests.
 *
 * Environment (set by tests/run.sh):
 *   LWC_BIN           directory of the binaries under test (bin/ or build/asan/bin)
 *   LWC_TEST_BACKEND  lmdb (default) or pg
 *   LWC_TEST_PG       libpq conninfo of the private PostgreSQL cluster (pg only)
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
/* Stop if running, drop the database, remove the directory. */
void h_cs_teardown(struct h_cs *cs);

/* Run a command line; returns its exit status (0..255) or -1. */
int h_run(const char *const *argv, const char *out_file);

/* Path of a binary under test. */
const char *h_bin(const char *name, char *buf, size_t len);

/* Count lines of a file that contain needle. */
int h_count_lines(const char *path, const char *needle);

#endif
