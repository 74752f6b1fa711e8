/*
 * fuzz_admin_request.c - libFuzzer target: the proxy's admin socket
 * requests, decoded and carried out on a real proxy state.
 *
 * Each input is one AdminRequest body as a local operator (or anything
 * that reaches the 0600 socket) can send it.  It is decoded, every field
 * walked, and a user add or revoke that passes the rules of proxy/server.c
 * admin_handle() (reimplemented here: it is static and needs a connection)
 * runs through px_user_add() / px_user_revoke() on a proxy state created
 * once in a private temporary directory (/dev/shm when available).
 *
 * So that an input always meets the same state (reproducible crashes),
 * every input starts from the prelude: user "alice" active with key 0x11..,
 * user "bob" revoked.  The state is rebuilt only when the previous input
 * changed it.
 *
 * Oracles beyond the sanitizers: decode, encode, decode, encode gives the
 * same bytes; an add, replace or revoke answers what a model of the users
 * predicts (LWC_ERR_EXISTS without replace, the new key readable, an old
 * session generation refused, a revoked user's key gone); and what it did
 * survives closing and reopening the state (the users reload from LMDB).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lwc.pb-c.h"
#include "userkey.h"
#include "../../proxy/state.h"
#include "fuzz_pb.h"
#include "../testdir.h"

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz_admin_request: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                  \
			abort();                                             \
		}                                                            \
	} while (0)

static char base[256], dir[300];
static struct px_state *st;
static int dirty = 1;
static uint8_t key_alice[32], key_bob[32];

static void state_open(void)
{
	char err[256] = "";

	if (px_state_open(&st, dir, err, sizeof(err)) != LWC_OK) {
		fprintf(stderr, "fuzz_admin_request: cannot open the state: %s\n", err);
		abort();
	}
}

/* A fresh state holding the prelude users. */
static void reset(void)
{
	struct px_geom g;
	struct px_reloc_cfg rcfg = { 1, PX_STASH_MAX_DEFAULT, PX_RELOCATE_MAX_DEFAULT };
	char err[256] = "", msg[256];
	int existed;

	px_state_close(st);
	st = NULL;
	testdir_rm(dir);
	if (px_geom_init(&g, 16, 4, 2, 1, err, sizeof(err)) != LWC_OK ||
	    px_state_create(dir, &g, "127.0.0.1:1", "/nonexistent/cs.key", &rcfg, err,
			    sizeof(err)) != LWC_OK) {
		fprintf(stderr, "fuzz_admin_request: cannot create the state: %s\n", err);
		abort();
	}
	state_open();
	CHECK(px_user_add(st, "alice", key_alice, 0, msg, sizeof(msg)) == LWC_OK);
	CHECK(px_user_add(st, "bob", key_bob, 0, msg, sizeof(msg)) == LWC_OK);
	CHECK(px_user_revoke(st, "bob", &existed) == LWC_OK && existed);
	dirty = 0;
}

static void cleanup(void)
{
	px_state_close(st);
	st = NULL;
	testdir_rm(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	testdir_make(base, sizeof(base), "fuzz-admin");
	snprintf(dir, sizeof(dir), "%s/px", base);
	memset(key_alice, 0x11, sizeof(key_alice));
	memset(key_bob, 0x22, sizeof(key_bob));
	atexit(cleanup);
	return 0;
}

/* What the model says a user is: 0 unknown, 1 active, 2 revoked. */
static int prelude_status(const char *name)
{
	if (strcmp(name, "alice") == 0)
		return 1;
	if (strcmp(name, "bob") == 0)
		return 2;
	return 0;
}

/* The key of name is key (active) or it is refused with code; sessions of
 * the current generation go on, others end (told when the key was
 * replaced); no session of a revoked or unknown user goes on. */
static void expect_user(const char *name, const uint8_t *key, int code)
{
	uint8_t got[32];
	uint64_t gen = 0;
	int replaced = -1, rc = px_user_key(st, name, got, &gen);

	CHECK(rc == code);
	if (key) {
		CHECK(memcmp(got, key, 32) == 0);
		CHECK(px_user_check(st, name, gen, &replaced) == LWC_OK && replaced == 0);
		CHECK(px_user_check(st, name, gen + 1, &replaced) == LWC_ERR_REVOKED &&
		      replaced == 1);
		CHECK(px_user_check(st, name, gen, NULL) == LWC_OK);
	} else {
		for (uint64_t g = 0; g < 4; g++)
			CHECK(px_user_check(st, name, g, &replaced) == LWC_ERR_REVOKED &&
			      replaced == 0);
	}
}

/* Close and reopen: the users reload from LMDB as they were. */
static void reopen(void)
{
	px_state_close(st);
	st = NULL;
	state_open();
}

static void user_add(const Lwc__AdminUserAdd *a)
{
	const char *name = a->name;
	char msg[256] = "";
	uint8_t oldkey[32];
	uint64_t oldgen = 0;
	int before, rc;

	/* proxy/server.c admin_handle(): the rules before the state is touched */
	if (name == NULL || name[0] == '\0' || strlen(name) > PX_NAME_MAX || a->key.len != 32)
		return;
	if (!userkey_name_valid(name))
		return;
	CHECK(strlen(name) <= USERKEY_NAME_MAX);

	before = prelude_status(name);
	if (before == 1)
		CHECK(px_user_key(st, name, oldkey, &oldgen) == LWC_OK);
	rc = px_user_add(st, name, a->key.data, a->replace, msg, sizeof(msg));
	CHECK(msg[0] != '\0');
	if (before != 0 && !a->replace) {
		CHECK(rc == LWC_ERR_EXISTS);
		expect_user(name, before == 1 ? key_alice : NULL,
			    before == 1 ? LWC_OK : LWC_ERR_REVOKED);
		return;
	}
	CHECK(rc == LWC_OK);
	dirty = 1;
	expect_user(name, a->key.data, LWC_OK);
	if (before == 1) {                    /* a replaced key ends old sessions */
		int replaced = -1;
		CHECK(px_user_check(st, name, oldgen, &replaced) == LWC_ERR_REVOKED &&
		      replaced == 1);
	}
	reopen();
	expect_user(name, a->key.data, LWC_OK);
	if (strcmp(name, "alice") != 0)
		expect_user("alice", key_alice, LWC_OK);
	if (strcmp(name, "bob") != 0)
		expect_user("bob", NULL, LWC_ERR_REVOKED);
}

static void user_revoke(const Lwc__AdminUserRevoke *r)
{
	const char *name = r->name;
	int before, existed = -1;

	if (name == NULL || name[0] == '\0')
		return;
	before = prelude_status(name);
	CHECK(px_user_revoke(st, name, &existed) == LWC_OK);
	CHECK(existed == (before == 1));
	expect_user(name, NULL, before ? LWC_ERR_REVOKED : LWC_ERR_NO_USER);
	if (!existed)
		return;
	dirty = 1;
	reopen();
	expect_user(name, NULL, LWC_ERR_REVOKED);
	expect_user("bob", NULL, LWC_ERR_REVOKED);
}

/* Encode, decode, encode: same bytes. */
static void check_repack(const Lwc__AdminRequest *rq)
{
	size_t n = lwc__admin_request__get_packed_size(rq), n2;
	uint8_t *a = malloc(n ? n : 1), *b;
	Lwc__AdminRequest *rq2;

	CHECK(a != NULL);
	CHECK(lwc__admin_request__pack(rq, a) == n);
	rq2 = lwc__admin_request__unpack(NULL, n, a);
	if (rq2 == NULL) {
		/* the one round trip protobuf-c fails: see fuzz_pb.h */
		CHECK(has_field0(&rq->base));
		free(a);
		return;
	}
	CHECK(rq2->op_case == rq->op_case);
	n2 = lwc__admin_request__get_packed_size(rq2);
	CHECK(n2 == n);
	b = malloc(n2 ? n2 : 1);
	CHECK(b != NULL);
	CHECK(lwc__admin_request__pack(rq2, b) == n2);
	CHECK(memcmp(a, b, n) == 0);
	lwc__admin_request__free_unpacked(rq2, NULL);
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Lwc__AdminRequest *rq = lwc__admin_request__unpack(NULL, size, data);

	if (rq == NULL)
		return 0;
	check_repack(rq);
	switch (rq->op_case) {
	case LWC__ADMIN_REQUEST__OP_USER_ADD:
		CHECK(rq->user_add != NULL);
		/* strings decode NUL-terminated, bytes exactly as long as said */
		CHECK(rq->user_add->name != NULL);
		CHECK(rq->user_add->key.len == 0 || rq->user_add->key.data != NULL);
		if (dirty)
			reset();
		user_add(rq->user_add);
		break;
	case LWC__ADMIN_REQUEST__OP_USER_REVOKE:
		CHECK(rq->user_revoke != NULL && rq->user_revoke->name != NULL);
		if (dirty)
			reset();
		user_revoke(rq->user_revoke);
		break;
	case LWC__ADMIN_REQUEST__OP_USER_LIST:
		CHECK(rq->user_list != NULL);
		break;
	case LWC__ADMIN_REQUEST__OP_STATUS:
		CHECK(rq->status != NULL);
		break;
	default:
		/* no operation, or one this version does not know */
		CHECK(rq->op_case == LWC__ADMIN_REQUEST__OP__NOT_SET);
		break;
	}
	lwc__admin_request__free_unpacked(rq, NULL);
	return 0;
}
