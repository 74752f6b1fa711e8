/*
 * main.c - lwc-cloudstore: the untrusted block store.
 *
 *   lwc-cloudstore --listen HOST:PORT --store lmdb:DIR|postgres:CONNINFO|redis-cluster:SEEDS
 *                  --key-file FILE [--trace FILE] [options]
 *   lwc-cloudstore keygen FILE
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cry.h"
#include "keyfile.h"
#include "log.h"
#include "server.h"
#include "heap.h"
#include "srvkit.h"
#include "store.h"
#include "wire.h"

#define CS_KEY_KIND "LWC-CS-KEY"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lwc-cloudstore --listen HOST:PORT\n"
		"                      --store lmdb:DIR|log:DIR|postgres:CONNINFO|redis-cluster:SEEDS\n"
		"                      --key-file FILE [options]\n"
		"       lwc-cloudstore keygen FILE\n"
		"\n"
		"The untrusted block store of LWC: keeps sealed blocks, answers READ, WRITE\n"
		"and STAT from the proxy over a channel keyed by K_CS.\n"
		"\n"
		"options:\n"
		"  --listen HOST:PORT     address to listen on (use a loopback or private address)\n"
		"  --store SPEC           lmdb:DIR[,shards=N] (embedded; N environments for a new\n"
		"                         store, default %u), log:DIR[,segment-mb=N] (embedded,\n"
		"                         appending: a WRITE is one sequential write, into\n"
		"                         segments of N MiB, default 256), postgres:CONNINFO\n"
		"                         (libpq string or URI)\n"
		"                         or redis-cluster:HOST:PORT[,HOST:PORT...][,wait=N]\n"
		"                         [,timeout=MS][,prefix=P] (docs/operations.md)\n"
		"  --key-file FILE        K_CS, created by 'lwc-cloudstore keygen FILE' (mode 0600)\n"
		"  --trace FILE           append one line per request: the cloud's view\n"
		"  --workers N            worker threads / backend connections (default 4)\n"
		"  --block-size BYTES     pin the block size of a new store (default: first WRITE)\n"
		"  --max-frame BYTES      largest request accepted (default and maximum %u)\n"
		"  --max-connections N    connections open at once; more are refused (default:\n"
		"                         3/4 of what the open-file limit leaves, at most 4096)\n"
		"  --handshake-timeout S  close a connection not authenticated after S seconds\n"
		"                         (default 5)\n"
		"  --log-level LEVEL      error, warn, info (default) or debug\n"
		"  -h, --help             this help\n",
		CS_LMDB_SHARDS, WIRE_FRAME_MAX);
}

static int cmd_keygen(int argc, char **argv)
{
	uint8_t *key;
	char err[512] = "";
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: lwc-cloudstore keygen FILE\n");
		return 1;
	}
	key = sodium_malloc(CRY_KEY_BYTES);
	if (key == NULL)
		return 1;
	randombytes_buf(key, CRY_KEY_BYTES);
	rc = keyfile_write(argv[2], CS_KEY_KIND,
			   "LWC K_CS: key of the proxy-cloudstore channel. Give it to lwc-proxy "
			   "and lwc-cloudstore only.", key, CRY_KEY_BYTES, err, sizeof(err));
	sodium_free(key);
	if (rc != LWC_OK) {
		fprintf(stderr, "lwc-cloudstore: %s\n", err[0] ? err : lwc_strerror(rc));
		return 1;
	}
	printf("wrote K_CS to %s (mode 0600)\n", argv[2]);
	return 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (s[0] == '\0' || *end != '\0' || s[0] == '-' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "store", required_argument, NULL, 's' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "trace", required_argument, NULL, 't' },
		{ "workers", required_argument, NULL, 'w' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "max-frame", required_argument, NULL, 'm' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "handshake-timeout", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cs_server_config cfg = { .workers = 4, .max_frame = WIRE_FRAME_MAX };
	const char *key_file = NULL;
	uint8_t *key;
	char err[512] = "";
	uint32_t u;
	int c, rc, lvl;

	log_init("lwc-cloudstore", LOG_INFO);
	lwc_keep_heap();
	if (cry_init_server() != LWC_OK) {
		fprintf(stderr, "lwc-cloudstore: libsodium failed to initialise\n");
		return 1;
	}
	if (argc >= 2 && strcmp(argv[1], "keygen") == 0)
		return cmd_keygen(argc, argv);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': cfg.listen = optarg; break;
		case 's': cfg.store = optarg; break;
		case 'k': key_file = optarg; break;
		case 't': cfg.trace_path = optarg; break;
		case 'w':
			if (parse_u32(optarg, 1, 256, &u) != 0) {
				fprintf(stderr, "lwc-cloudstore: --workers wants 1..256\n");
				return 1;
			}
			cfg.workers = (int)u;
			break;
		case 'b':
			if (parse_u32(optarg, 1, CS_BLOCK_SIZE_MAX, &cfg.block_size) != 0) {
				fprintf(stderr, "lwc-cloudstore: --block-size wants 1..%u\n",
					CS_BLOCK_SIZE_MAX);
				return 1;
			}
			break;
		case 'm':
			if (parse_u32(optarg, 4096, WIRE_FRAME_MAX, &cfg.max_frame) != 0) {
				fprintf(stderr, "lwc-cloudstore: --max-frame wants 4096..%u\n",
					WIRE_FRAME_MAX);
				return 1;
			}
			break;
		case 'C':
			if (parse_u32(optarg, 1, 1000000, &u) != 0) {
				fprintf(stderr, "lwc-cloudstore: --max-connections wants 1..1000000\n");
				return 1;
			}
			cfg.max_conns = (int)u;
			break;
		case 'H':
			if (parse_u32(optarg, 1, 3600, &u) != 0) {
				fprintf(stderr, "lwc-cloudstore: --handshake-timeout wants 1..3600 seconds\n");
				return 1;
			}
			cfg.handshake_s = (int)u;
			break;
		case 'v':
			if ((lvl = log_parse_level(optarg)) < 0) {
				fprintf(stderr, "lwc-cloudstore: --log-level wants error, warn, info or debug\n");
				return 1;
			}
			log_set_level((enum log_level)lvl);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc || cfg.listen == NULL || cfg.store == NULL || key_file == NULL) {
		if (optind != argc)
			fprintf(stderr, "lwc-cloudstore: unexpected argument '%s'\n", argv[optind]);
		else
			fprintf(stderr, "lwc-cloudstore: --listen, --store and --key-file are required\n");
		usage(stderr);
		return 1;
	}
	key = sodium_malloc(CRY_KEY_BYTES);
	if (key == NULL)
		return 1;
	if ((rc = keyfile_read(key_file, CS_KEY_KIND, key, CRY_KEY_BYTES, err, sizeof(err))) != LWC_OK) {
		log_error("%s", err[0] ? err : lwc_strerror(rc));
		sodium_free(key);
		return 1;
	}
	sodium_mlock(key, CRY_KEY_BYTES);
	cfg.key = key;
	rc = cs_server_run(&cfg);
	sodium_free(key);
	return rc == LWC_OK ? 0 : 1;
}
