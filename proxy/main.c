/*
 * main.c - lwc-proxy: the trusted on-premise proxy.
 *
 *   lwc-proxy init   --state DIR --cloudstore HOST:PORT --cs-key-file FILE [geometry]
 *   lwc-proxy serve  --state DIR --listen HOST:PORT [--pad ...] [...]
 *   lwc-proxy user add --state DIR --name NAME (--key-file FILE | --enroll FILE) [--replace]
 *   lwc-proxy user revoke --state DIR NAME
 *   lwc-proxy user list --state DIR
 *   lwc-proxy status --state DIR
 *   lwc-proxy check  --state DIR
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "admin_client.h"
#include "cry.h"
#include "engine.h"
#include "epoch.h"
#include "index.h"
#include "journal.h"
#include "keyfile.h"
#include "log.h"
#include "lwc.pb-c.h"
#include "pidlock.h"
#include "server.h"
#include "heap.h"
#include "srvkit.h"
#include "par.h"
#include "state.h"
#include "userkey.h"
#include "wire.h"

#define PX_LOCK_FILE "lwc-proxy.pid"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-proxy init --state DIR --cloudstore HOST:PORT --cs-key-file FILE\n"
		"                      [--record-bytes 128] [--slots 64] [--theta 48]\n"
		"                      [--cell-bytes 8] [--blocks 1024] [--relocate on|off]\n"
		"                      [--stash-max 65536] [--relocate-max 1024] [--block-format 2]\n"
		"       lwc-proxy serve --state DIR --listen HOST:PORT [--pad ratio:2|pow2|fixed:G]\n"
		"                      [--pad-min 4] [--rtt-ms 0] [--workers 64] [--batch-blocks 1024]\n"
		"                      [--cloudstore HOST:PORT] [--cs-key-file FILE] [--log-level L]\n"
		"                      [--relocate on|off] [--stash-max N] [--relocate-max N]\n"
		"                      [--evict-group N] [--evict-room N]\n"
		"                      [--block-threads N] [--read-ahead on|off]\n"
		"                      [--pad-age match|uniform] [--answer-early on|durable|off]\n"
		"                      [--pace auto|off|MICROSECONDS]\n"
		"                      [--index-run-min N] [--index-run-max N] [--journal-kb 16384]\n"
		"                      [--max-connections N] [--handshake-timeout S]\n"
		"                      [--accept-stale-state]\n"
		"       lwc-proxy user add --state DIR --name NAME --key-file FILE [--replace]\n"
		"       lwc-proxy user add --state DIR --enroll FILE [--replace]\n"
		"       lwc-proxy user revoke --state DIR NAME\n"
		"       lwc-proxy user list --state DIR\n"
		"       lwc-proxy status --state DIR\n"
		"       lwc-proxy check --state DIR\n"
		"\n"
		"The trusted proxy of LWC: keeps the indexes, slot flags and block versions,\n"
		"and reads and writes the cloud store obliviously.  Admin commands talk to\n"
		"the running proxy through DIR/admin.sock (or --socket PATH).  One serve per\n"
		"state directory: serve, init and check lock DIR/" PX_LOCK_FILE ".\n");
}

/* Lock the state directory for this command (creating the directory for
 * init); prints why not and returns -1 when another process holds it. */
static int lock_state(struct pidlock *pl, const char *dir, const char *cmd, int create)
{
	char err[700] = "";
	int rc;

	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "lwc-proxy %s: %s: %s\n", cmd, dir, strerror(errno));
		return -1;
	}
	if ((rc = pidlock_acquire(pl, dir, PX_LOCK_FILE, err, sizeof(err))) == LWC_OK)
		return 0;
	if (rc == LWC_ERR_BUSY)
		fprintf(stderr, "lwc-proxy %s: %s%s\n", cmd, err, strcmp(cmd, "serve") == 0 ? "" :
			"; stop that server first (status, user add/revoke/list go through its "
			"admin socket)");
	else
		fprintf(stderr, "lwc-proxy %s: %s\n", cmd, err);
	return -1;
}

static int parse_u32(const char *s, const char *what, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "lwc-proxy: %s must be a number from %u to %u\n", what, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* An option with two values: *out = 1 for yes, 0 for no; -1 otherwise. */
static int parse_pair(const char *s, const char *cmd, const char *what, const char *yes,
		      const char *no, int *out)
{
	if (strcmp(s, yes) != 0 && strcmp(s, no) != 0) {
		fprintf(stderr, "lwc-proxy %s: %s must be %s or %s\n", cmd, what, yes, no);
		return -1;
	}
	*out = strcmp(s, yes) == 0;
	return 0;
}

static uint8_t *load_cs_key(const char *path)
{
	uint8_t *key = sodium_malloc(CRY_KEY_BYTES);
	char err[512] = "";

	if (key == NULL)
		return NULL;
	if (keyfile_read(path, PX_CS_KEY_KIND, key, CRY_KEY_BYTES, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-proxy: %s\n", err);
		sodium_free(key);
		return NULL;
	}
	return key;
}

/* ---- init ----------------------------------------------------------------- */

static int cmd_init(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "cloudstore", required_argument, NULL, 'c' },
		{ "cs-key-file", required_argument, NULL, 'k' },
		{ "record-bytes", required_argument, NULL, 'R' },
		{ "slots", required_argument, NULL, 'm' },
		{ "theta", required_argument, NULL, 't' },
		{ "cell-bytes", required_argument, NULL, 'C' },
		{ "blocks", required_argument, NULL, 'n' },
		{ "relocate", required_argument, NULL, 'o' },
		{ "stash-max", required_argument, NULL, 'X' },
		{ "relocate-max", required_argument, NULL, 'M' },
		{ "block-format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = NULL, *cs = NULL, *keyf = NULL;
	uint32_t R = 128, m = 64, theta = 0, cell = 8, nblocks = 1024, fmt = CRY_PERM_V2;
	struct px_reloc_cfg rcfg = { 1, PX_STASH_MAX_DEFAULT, PX_RELOCATE_MAX_DEFAULT };
	struct px_geom g;
	struct px_state *st = NULL;
	struct px_engine_cfg ecfg;
	struct px_worker w;
	struct pidlock lock = { -1, "" };
	uint8_t *cs_key;
	char err[512] = "";
	int o, rc, status = 1;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's': dir = optarg; break;
		case 'c': cs = optarg; break;
		case 'k': keyf = optarg; break;
		case 'R': if (parse_u32(optarg, "--record-bytes", 16, 65536, &R)) return 1; break;
		case 'm': if (parse_u32(optarg, "--slots", 2, PX_MAX_SLOTS, &m)) return 1; break;
		case 't': if (parse_u32(optarg, "--theta", 1, PX_MAX_SLOTS, &theta)) return 1; break;
		case 'C': if (parse_u32(optarg, "--cell-bytes", 1, 8, &cell)) return 1; break;
		case 'n': if (parse_u32(optarg, "--blocks", 1, 1u << 30, &nblocks)) return 1; break;
		case 'o':
			if (parse_pair(optarg, "init", "--relocate", "on", "off", &rcfg.relocate))
				return 1;
			break;
		case 'X': if (parse_u32(optarg, "--stash-max", 0, 1u << 24, &rcfg.stash_max)) return 1; break;
		case 'M': if (parse_u32(optarg, "--relocate-max", 0, 1u << 24, &rcfg.relocate_max)) return 1; break;
		case 'F': if (parse_u32(optarg, "--block-format", CRY_PERM_V1, CRY_PERM_V2, &fmt)) return 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (!dir || !cs || !keyf || optind != argc) {
		fprintf(stderr, "lwc-proxy init: --state, --cloudstore and --cs-key-file are required\n");
		return 1;
	}
	if (theta == 0)
		theta = m * 3 / 4 ? m * 3 / 4 : 1;
	if (px_geom_init(&g, R, m, theta, cell, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-proxy init: %s\n", err);
		return 1;
	}
	g.perm = fmt;     /* 1: the draws of releases before block formats */
	if ((cs_key = load_cs_key(keyf)) == NULL)
		return 1;
	if (lock_state(&lock, dir, "init", 1) != 0) {
		sodium_free(cs_key);
		return 1;
	}
	/* the cloud store must answer, and hold nothing, before anything is
	 * created: blocks of another deployment would be overwritten */
	{
		struct cs_client *cl;
		Lwc__CsResponse *resp = NULL;
		uint64_t held = 0;

		if (cs_client_connect(&cl, cs, cs_key, 10000, err, sizeof(err)) != LWC_OK) {
			fprintf(stderr, "lwc-proxy init: cannot reach the cloud store at %s: %s\n", cs,
				err);
			goto init_out;
		}
		rc = cs_client_stat(cl, NULL, 0, &resp, err, sizeof(err));
		if (rc == LWC_OK && resp->result_case == LWC__CS_RESPONSE__RESULT_STAT)
			held = resp->stat->block_count;
		if (resp)
			cs_client_free_resp(resp);
		cs_client_close(cl);
		if (rc != LWC_OK || held > 0) {
			if (rc != LWC_OK)
				fprintf(stderr, "lwc-proxy init: the cloud store at %s does not answer "
					"STAT: %s\n", cs, err);
			else
				fprintf(stderr, "lwc-proxy init: the cloud store at %s already holds %llu "
					"blocks (another deployment's?); a new proxy needs an empty "
					"store\n", cs, (unsigned long long)held);
			goto init_out;
		}
	}
	if ((rc = px_state_create(dir, &g, cs, keyf, &rcfg, err, sizeof(err))) != LWC_OK) {
		fprintf(stderr, "lwc-proxy init: %s\n", err);
		goto init_out;
	}
	if ((rc = px_state_open(&st, dir, err, sizeof(err))) != LWC_OK) {
		fprintf(stderr, "lwc-proxy init: %s\n", err);
		goto init_out;
	}
	memset(&ecfg, 0, sizeof(ecfg));
	ecfg.batch_blocks = 1024;
	ecfg.cloud_timeout_ms = 60000;
	ecfg.cs_key = cs_key;
	ecfg.cs_addr = cs;
	ecfg.pad_min = 1;
	rc = px_worker_init(&w, st, &ecfg, "init");
	if (rc == LWC_OK) {
		pthread_mutex_lock(&st->mu);
		rc = px_grow(&w, nblocks, err, sizeof(err));
		pthread_mutex_unlock(&st->mu);
		px_worker_fini(&w);
	}
	if (rc == LWC_OK)
		rc = px_epoch_init(st, cs, cs_key, err, sizeof(err));
	if (rc != LWC_OK) {
		char path[600];

		fprintf(stderr, "lwc-proxy init: writing the initial blocks failed: %s\n",
			err[0] ? err : lwc_strerror(rc));
		px_state_close(st);
		st = NULL;
		/* leave nothing half-made behind: init can simply be run again */
		snprintf(path, sizeof(path), "%s/state/data.mdb", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/state/lock.mdb", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/state", dir);
		rmdir(path);
		snprintf(path, sizeof(path), "%s/ops.key", dir);
		unlink(path);
		goto init_out;
	}
	printf("initialised %s: %u blocks of %u slots x %u bytes (records of %u bytes, theta %u, "
	       "cells of %u bytes, block format %u) in the cloud store at %s; relocation %s "
	       "(stash of at most %u rows, statements touching over %u rows move none)\n", dir,
	       nblocks, g.m, g.S, g.R, g.theta, g.cell, g.perm, cs,
	       rcfg.relocate ? "on" : "off", rcfg.stash_max, rcfg.relocate_max);
	status = 0;
init_out:
	px_state_close(st);
	pidlock_release(&lock);
	sodium_free(cs_key);
	return status;
}

/* ---- serve ---------------------------------------------------------------- */

static int parse_pad(const char *s, struct px_engine_cfg *e)
{
	char *end;
	unsigned long v;

	if (strcmp(s, "pow2") == 0) {
		e->pad = PX_PAD_POW2;
		return 0;
	}
	if (strncmp(s, "ratio:", 6) == 0 || strncmp(s, "fixed:", 6) == 0) {
		errno = 0;
		v = strtoul(s + 6, &end, 10);
		if (!errno && end != s + 6 && !*end && v >= 1 && v <= 1u << 24) {
			e->pad = s[0] == 'r' ? PX_PAD_RATIO : PX_PAD_FIXED;
			e->pad_arg = (uint32_t)v;
			return 0;
		}
	}
	fprintf(stderr, "lwc-proxy: --pad must be ratio:R, pow2 or fixed:G (R, G >= 1)\n");
	return -1;
}

static int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "pad", required_argument, NULL, 'p' },
		{ "pad-min", required_argument, NULL, 'P' },
		{ "rtt-ms", required_argument, NULL, 'r' },
		{ "workers", required_argument, NULL, 'w' },
		{ "batch-blocks", required_argument, NULL, 'b' },
		{ "cloudstore", required_argument, NULL, 'c' },
		{ "cs-key-file", required_argument, NULL, 'k' },
		{ "max-frame", required_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "stash-max", required_argument, NULL, 'X' },
		{ "relocate-max", required_argument, NULL, 'M' },
		{ "relocate", required_argument, NULL, 'o' },
		{ "evict-group", required_argument, NULL, 'E' },
		{ "evict-room", required_argument, NULL, 'e' },
		{ "block-threads", required_argument, NULL, 'T' },
		{ "read-ahead", required_argument, NULL, 'A' },
		{ "pad-age", required_argument, NULL, 'G' },
		{ "answer-early", required_argument, NULL, 'Y' },
		{ "pace", required_argument, NULL, 'y' },
		{ "index-run-min", required_argument, NULL, 'I' },
		{ "index-run-max", required_argument, NULL, 'J' },
		{ "journal-kb", required_argument, NULL, 'j' },
		{ "max-connections", required_argument, NULL, 'N' },
		{ "handshake-timeout", required_argument, NULL, 'H' },
		{ "accept-stale-state", no_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint32_t stash_max = UINT32_MAX, relocate_max = UINT32_MAX, block_threads = UINT32_MAX;
	uint32_t evict_group = UINT32_MAX, evict_room = UINT32_MAX;
	uint32_t run_min = 65536, run_max = 0, journal_kb = PX_JOURNAL_FOLD_DEFAULT >> 10;
	int relocate = -1, accept_stale = 0;
	struct pidlock lock = { -1, "" };
	const char *dir = NULL, *listen = NULL, *pad = "ratio:2", *cs = NULL, *keyf = NULL;
	struct px_server_config cfg;
	struct px_state *st = NULL;
	uint32_t v;
	char err[512] = "", admin[600];
	uint8_t *cs_key;
	int o, rc, level;

	memset(&cfg, 0, sizeof(cfg));
	cfg.engine.pad = PX_PAD_RATIO;
	cfg.engine.pad_arg = 2;
	cfg.engine.pad_min = 4;
	cfg.engine.batch_blocks = 1024;
	cfg.engine.cloud_timeout_ms = 60000;
	cfg.engine.read_ahead = 1;
	cfg.engine.pad_age = 1;
	cfg.engine.answer_early = PX_ANSWER_DURABLE;
	cfg.workers = 64;
	cfg.max_frame = 64u << 20;
	cfg.io_timeout_ms = 60000;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's': dir = optarg; break;
		case 'l': listen = optarg; break;
		case 'p': pad = optarg; break;
		case 'P': if (parse_u32(optarg, "--pad-min", 1, 1u << 24, &cfg.engine.pad_min)) return 1; break;
		case 'r': if (parse_u32(optarg, "--rtt-ms", 0, 60000, &v)) return 1; cfg.engine.rtt_ms = (int)v; break;
		case 'w': if (parse_u32(optarg, "--workers", 1, 1024, &v)) return 1; cfg.workers = (int)v; break;
		case 'b': if (parse_u32(optarg, "--batch-blocks", 1, 1u << 20, &cfg.engine.batch_blocks)) return 1; break;
		case 'c': cs = optarg; break;
		case 'k': keyf = optarg; break;
		case 'f': if (parse_u32(optarg, "--max-frame", 4096, WIRE_FRAME_MAX, &cfg.max_frame)) return 1; break;
		case 'X': if (parse_u32(optarg, "--stash-max", 0, 1u << 24, &stash_max)) return 1; break;
		case 'M': if (parse_u32(optarg, "--relocate-max", 0, 1u << 24, &relocate_max)) return 1; break;
		case 'E': if (parse_u32(optarg, "--evict-group", 1, 1024, &evict_group)) return 1; break;
		case 'e': if (parse_u32(optarg, "--evict-room", 1, PX_MAX_SLOTS, &evict_room)) return 1; break;
		case 'T': if (parse_u32(optarg, "--block-threads", 0, 256, &block_threads)) return 1; break;
		case 'A':
			if (parse_pair(optarg, "serve", "--read-ahead", "on", "off",
				       &cfg.engine.read_ahead))
				return 1;
			break;
		case 'G':
			if (parse_pair(optarg, "serve", "--pad-age", "match", "uniform",
				       &cfg.engine.pad_age))
				return 1;
			break;
		case 'Y':
			{
				int a = PX_ANSWER_N;

				while (a-- > 0 && strcmp(optarg, px_answer_names[a]) != 0)
					;
				if (a < 0) {
					fprintf(stderr, "lwc-proxy serve: --answer-early must be on, "
						"durable or off\n");
					return 1;
				}
				cfg.engine.answer_early = (enum px_answer)a;
			}
			break;
		case 'y':
			if (strcmp(optarg, "auto") == 0) {
				cfg.engine.pace = PX_PACE_AUTO;
			} else if (strcmp(optarg, "off") == 0) {
				cfg.engine.pace = PX_PACE_OFF;
			} else {
				if (parse_u32(optarg, "--pace", 0, 1000000, &cfg.engine.pace_us))
					return 1;
				cfg.engine.pace = PX_PACE_FIXED;
			}
			break;
		case 'I': if (parse_u32(optarg, "--index-run-min", 0, UINT32_MAX, &run_min)) return 1; break;
		case 'J': if (parse_u32(optarg, "--index-run-max", 0, UINT32_MAX, &run_max)) return 1; break;
		case 'j': if (parse_u32(optarg, "--journal-kb", 1, 1u << 22, &journal_kb)) return 1; break;
		case 'N': if (parse_u32(optarg, "--max-connections", 1, 1000000, &v)) return 1; cfg.max_conns = (int)v; break;
		case 'H': if (parse_u32(optarg, "--handshake-timeout", 1, 3600, &v)) return 1; cfg.handshake_s = (int)v; break;
		case 'Z': accept_stale = 1; break;
		case 'o':
			if (parse_pair(optarg, "serve", "--relocate", "on", "off", &relocate))
				return 1;
			break;
		case 'L':
			if ((level = log_parse_level(optarg)) < 0) {
				fprintf(stderr, "lwc-proxy: unknown log level %s\n", optarg);
				return 1;
			}
			log_set_level((enum log_level)level);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (!dir || !listen || optind != argc) {
		fprintf(stderr, "lwc-proxy serve: --state and --listen are required\n");
		return 1;
	}
	if (parse_pad(pad, &cfg.engine) != 0)
		return 1;
	idx_configure(run_min, run_max);
	/* one serve per state directory, before anything in it is touched:
	 * a second one would replace the admin socket and write the same cloud */
	{
		int lrc = pidlock_acquire(&lock, dir, PX_LOCK_FILE, err, sizeof(err));
		if (lrc != LWC_OK) {
			log_error("%s", err);
			return 1;
		}
	}
	if ((rc = px_state_open(&st, dir, err, sizeof(err))) != LWC_OK) {
		log_error("%s", err);
		pidlock_release(&lock);
		return 1;
	}
	/* serve's own limits for this run (init stored the defaults) */
	if (stash_max != UINT32_MAX)
		st->stash_max = stash_max;
	if (relocate_max != UINT32_MAX)
		st->relocate_max = relocate_max;
	if (relocate >= 0)
		st->relocate = relocate;
	if (evict_group != UINT32_MAX)
		st->evict_group = evict_group;
	if (evict_room != UINT32_MAX) {
		if (evict_room >= st->g.theta) {
			log_error("--evict-room %u: must be below theta (%u)", evict_room,
				  st->g.theta);
			px_state_close(st);
			pidlock_release(&lock);
			return 1;
		}
		st->evict_room = evict_room;
	}
	st->jr_fold_bytes = (uint64_t)journal_kb << 10;
	log_info("relocation %s: stash of %zu rows (at most %u), statements touching over %u rows "
		 "move none%s", st->relocate ? "on" : "off", st->nstash, st->stash_max,
		 st->relocate_max, st->evict_group > 1 ? ", written back in groups" : "");
	if (st->evict_group > 1)
		log_info("write-back in groups of up to %u rows (--evict-group): rows read together "
			 "go back to one block, and leave it together", st->evict_group);
	if (cfg.engine.batch_blocks * st->g.sealed_bytes > WIRE_FRAME_MAX / 2) {
		cfg.engine.batch_blocks = (uint32_t)(WIRE_FRAME_MAX / 2 / st->g.sealed_bytes);
		if (cfg.engine.batch_blocks == 0)
			cfg.engine.batch_blocks = 1;
	}
	if ((cs_key = load_cs_key(keyf ? keyf : st->cs_key_file)) == NULL) {
		px_state_close(st);
		pidlock_release(&lock);
		return 1;
	}
	/* fail now, not at the first statement, if the cloud store is unreachable,
	 * does not take this key, or does not match this state (epoch.h) */
	{
		const char *addr = cs ? cs : st->cs_addr;

		rc = px_epoch_start(st, addr, cs_key, accept_stale, err, sizeof(err));
		if (rc != LWC_OK) {
			if (rc == LWC_ERR_STALE)
				log_error("%s", err);
			else
				log_error("cannot reach the cloud store at %s: %s", addr, err);
			px_state_close(st);
			pidlock_release(&lock);
			sodium_free(cs_key);
			return 1;
		}
		log_info("epoch %llu (proxy state and cloud store header agree)",
			 (unsigned long long)st->epoch);
	}
	snprintf(admin, sizeof(admin), "%s/admin.sock", dir);
	cfg.listen = listen;
	cfg.admin_path = admin;
	cfg.pad_text = pad;
	cfg.engine.cs_key = cs_key;
	cfg.engine.cs_addr = cs ? cs : st->cs_addr;
	/* the block pool: with the statement's own thread, one per core */
	if (block_threads == UINT32_MAX) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		block_threads = ncpu > 1 ? (uint32_t)(ncpu - 1) : 0;
	}
	if (par_start(block_threads, px_scratch_words(&st->g)) !=
	    LWC_OK) {
		log_error("block pool: out of memory");
		px_state_close(st);
		pidlock_release(&lock);
		sodium_free(cs_key);
		return 1;
	}
	log_info("block pool: %u thread%s besides each statement's own", par_threads(),
		 par_threads() == 1 ? "" : "s");
	{
		int restored = 0, orc = px_order_restore(st, &restored);

		if (orc != 0)
			log_warn("the blocks' saved write order could not be read or dropped: %s",
				 mdb_strerror(orc));
		log_info("padding %s; the blocks' write order: %s",
			 cfg.engine.pad_age ? "by age" : "uniform",
			 restored ? "restored from the last clean stop"
			 : "unknown (no clean stop saved it), a random one to begin with");
	}
	{
		size_t restored = 0;
		int grc = px_groups_restore(st, &restored);

		if (grc != 0)
			log_warn("the saved groups of rows could not be read or dropped: %s",
				 mdb_strerror(grc));
		else if (restored > 0)
			log_info("groups of rows in blocks: %zu rows, restored from the last clean stop",
				 restored);
	}
	rc = px_server_run(st, &cfg);
	par_stop();
	{
		int orc = px_order_save(st);

		if (orc != 0)
			log_warn("could not save the blocks' write order (%s): the next start "
				 "begins with a random one", orc == ENOMEM ? "out of memory"
				 : mdb_strerror(orc));
		if ((orc = px_groups_save(st)) != 0)
			log_warn("could not save the groups of rows in blocks (%s): their rows "
				 "move one by one until read", orc == ENOMEM ? "out of memory"
				 : mdb_strerror(orc));
	}
	px_state_close(st);
	pidlock_release(&lock);
	sodium_free(cs_key);
	return rc == LWC_OK ? 0 : 1;
}

/* ---- admin client --------------------------------------------------------- */

static int call(const char *sock, const Lwc__AdminRequest *req, Lwc__AdminResponse **out)
{
	char err[600] = "";

	if (admin_call(sock, req, out, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-proxy: %s\n", err);
		return 1;
	}
	return 0;
}

static const char *admin_socket(const char *dir, const char *sock, char *buf, size_t len)
{
	if (sock)
		return sock;
	if (dir == NULL)
		return NULL;
	snprintf(buf, len, "%s/admin.sock", dir);
	return buf;
}

static void fmt_time(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0 || gmtime_r(&tt, &tm) == NULL)
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int cmd_admin(const char *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "name", required_argument, NULL, 'n' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "enroll", required_argument, NULL, 'e' },
		{ "replace", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = NULL, *sock = NULL, *name = NULL, *keyf = NULL, *enroll = NULL;
	int replace = 0, o, rc;
	char sbuf[600], err[512] = "";
	Lwc__AdminRequest req = LWC__ADMIN_REQUEST__INIT;
	Lwc__AdminResponse *resp = NULL;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's': dir = optarg; break;
		case 'S': sock = optarg; break;
		case 'n': name = optarg; break;
		case 'k': keyf = optarg; break;
		case 'e': enroll = optarg; break;
		case 'r': replace = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if ((sock = admin_socket(dir, sock, sbuf, sizeof(sbuf))) == NULL) {
		fprintf(stderr, "lwc-proxy %s: --state DIR (or --socket PATH) is required\n", cmd);
		return 1;
	}
	if (strcmp(cmd, "add") == 0) {
		Lwc__AdminUserAdd add = LWC__ADMIN_USER_ADD__INIT;
		uint8_t *key = sodium_malloc(32);
		char ename[USERKEY_NAME_MAX + 1];

		if (key == NULL)
			return 1;
		if ((keyf != NULL) == (enroll != NULL) || optind != argc) {
			fprintf(stderr, "lwc-proxy user add: give --key-file FILE (with --name) or "
				"--enroll FILE\n");
			sodium_free(key);
			return 1;
		}
		if (keyf) {
			struct userkey *uk = NULL;
			if (userkey_read(keyf, &uk, err, sizeof(err)) != LWC_OK) {
				fprintf(stderr, "lwc-proxy: %s\n", err);
				sodium_free(key);
				return 1;
			}
			if (name && strcmp(name, uk->name) != 0) {
				fprintf(stderr, "lwc-proxy: the key file %s belongs to user %s, not %s\n",
					keyf, uk->name, name);
				userkey_free(uk);
				sodium_free(key);
				return 1;
			}
			memcpy(key, uk->kdbu, 32);
			snprintf(ename, sizeof(ename), "%s", uk->name);
			userkey_free(uk);
		} else {
			if (enroll_read(enroll, ename, key, err, sizeof(err)) != LWC_OK) {
				fprintf(stderr, "lwc-proxy: %s\n", err);
				sodium_free(key);
				return 1;
			}
			if (name && strcmp(name, ename) != 0) {
				fprintf(stderr, "lwc-proxy: the enrollment %s is for user %s, not %s\n",
					enroll, ename, name);
				sodium_free(key);
				return 1;
			}
		}
		add.name = ename;
		add.key.data = key;
		add.key.len = 32;
		add.replace = replace;
		req.op_case = LWC__ADMIN_REQUEST__OP_USER_ADD;
		req.user_add = &add;
		rc = call(sock, &req, &resp);
		sodium_free(key);
		if (rc != 0)
			return 1;
		printf("%s\n", resp->message);
	} else if (strcmp(cmd, "revoke") == 0) {
		Lwc__AdminUserRevoke rv = LWC__ADMIN_USER_REVOKE__INIT;
		if (name == NULL && optind == argc - 1)
			name = argv[optind];
		else if (optind != argc || name == NULL) {
			fprintf(stderr, "usage: lwc-proxy user revoke --state DIR NAME\n");
			return 1;
		}
		rv.name = (char *)(uintptr_t)name;
		req.op_case = LWC__ADMIN_REQUEST__OP_USER_REVOKE;
		req.user_revoke = &rv;
		if (call(sock, &req, &resp) != 0)
			return 1;
		printf("%s\n", resp->message);
	} else if (strcmp(cmd, "list") == 0) {
		Lwc__AdminUserList ul = LWC__ADMIN_USER_LIST__INIT;
		req.op_case = LWC__ADMIN_REQUEST__OP_USER_LIST;
		req.user_list = &ul;
		if (call(sock, &req, &resp) != 0)
			return 1;
		printf("%-24s %-8s %-21s %-21s %s\n", "user", "status", "added", "revoked", "sessions");
		for (size_t i = 0; i < resp->n_users; i++) {
			char a[32], r[32];
			fmt_time(resp->users[i]->created, a, sizeof(a));
			fmt_time(resp->users[i]->revoked, r, sizeof(r));
			printf("%-24s %-8s %-21s %-21s %u\n", resp->users[i]->name,
			       resp->users[i]->active ? "active" : "revoked", a, r,
			       resp->users[i]->sessions);
		}
		printf("(%zu user%s)\n", resp->n_users, resp->n_users == 1 ? "" : "s");
	} else {
		Lwc__AdminStatus sreq = LWC__ADMIN_STATUS__INIT;
		req.op_case = LWC__ADMIN_REQUEST__OP_STATUS;
		req.status = &sreq;
		if (call(sock, &req, &resp) != 0)
			return 1;
		for (size_t i = 0; i < resp->n_status; i++)
			printf("%-18s %s\n", resp->status[i]->key, resp->status[i]->value);
	}
	lwc__admin_response__free_unpacked(resp, NULL);
	return 0;
}

/* ---- check ---------------------------------------------------------------- */

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "cloudstore", required_argument, NULL, 'c' },
		{ "cs-key-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = NULL, *cs = NULL, *keyf = NULL;
	struct px_state *st = NULL;
	struct px_engine_cfg ecfg;
	struct px_worker w;
	struct pidlock lock = { -1, "" };
	uint8_t *cs_key;
	char err[512] = "";
	int o, bad;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': dir = optarg; break;
		case 'c': cs = optarg; break;
		case 'k': keyf = optarg; break;
		default: usage(stderr); return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "lwc-proxy check: --state is required\n");
		return 2;
	}
	/* a running serve moves blocks under check's feet: every block it
	 * rewrites meanwhile would be reported */
	if (lock_state(&lock, dir, "check", 0) != 0)
		return 2;
	if (px_state_open(&st, dir, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "lwc-proxy check: %s\n", err);
		pidlock_release(&lock);
		return 2;
	}
	if ((cs_key = load_cs_key(keyf ? keyf : st->cs_key_file)) == NULL) {
		px_state_close(st);
		pidlock_release(&lock);
		return 2;
	}
	memset(&ecfg, 0, sizeof(ecfg));
	ecfg.batch_blocks = 1024;
	ecfg.cloud_timeout_ms = 60000;
	ecfg.cs_key = cs_key;
	ecfg.cs_addr = cs ? cs : st->cs_addr;
	if (px_worker_init(&w, st, &ecfg, "check") != LWC_OK) {
		px_state_close(st);
		pidlock_release(&lock);
		sodium_free(cs_key);
		return 2;
	}
	bad = px_check(&w, 1);
	px_worker_fini(&w);
	px_state_close(st);
	pidlock_release(&lock);
	sodium_free(cs_key);
	return bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *cmd;

	log_init("lwc-proxy", LOG_INFO);
	signal(SIGPIPE, SIG_IGN);
	lwc_keep_heap();
	if (cry_init_server() != LWC_OK) {
		fprintf(stderr, "lwc-proxy: libsodium failed to initialise\n");
		return 1;
	}
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "init") == 0)
		return cmd_init(argc - 1, argv + 1);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "status") == 0)
		return cmd_admin("status", argc - 1, argv + 1);
	if (strcmp(cmd, "user") == 0 && argc >= 3 &&
	    (strcmp(argv[2], "add") == 0 || strcmp(argv[2], "revoke") == 0 ||
	     strcmp(argv[2], "list") == 0))
		return cmd_admin(argv[2], argc - 2, argv + 2);
	fprintf(stderr, "lwc-proxy: unknown command '%s'\n", cmd);
	usage(stderr);
	return 1;
}
