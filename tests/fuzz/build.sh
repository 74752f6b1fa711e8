#!/bin/sh
# build.sh - build the libFuzzer targets into build/fuzz/ (called by `make fuzz`).
#
#   build/fuzz/fuzz_cs_request   cloudstore request handler over LMDB
#   build/fuzz/fuzz_chan         channel set-up, frames, frame headers
#   build/fuzz/fuzz_keyfile      key file parser
#   build/fuzz/fuzz_userkey      user key and enrollment file parsers
#   build/fuzz/fuzz_proxy_request  a user's request to the proxy: decoding,
#                                predicate checks and evaluation, row checks
#   build/fuzz/fuzz_admin_request  the proxy's admin requests on a real state
#   build/fuzz/fuzz_sql          the client's SQL parser, binder, evaluator and
#                                value conversions
#   build/fuzz/fuzz_rc_parse     the Redis Cluster backend's parsers: store
#                                string, redirections, versions, key slots,
#                                CLUSTER SLOTS answers as raw RESP bytes
#   build/fuzz/fuzz_groups       the proxy's saved groups of rows in blocks
#   build/fuzz/fuzz_cs_wire      READ answers and WRITE requests read in place,
#                                against protobuf-c
#   build/fuzz/fuzz_log_open     the log store's opening: its index read back
#                                from segment files the input describes
#
# clang with -fsanitize=fuzzer,address,undefined.  Incremental: an object is
# rebuilt when its source, any project header or this script is newer.
# Knobs: FUZZ_CC (default clang), FUZZ_CFLAGS (extra flags), JOBS.
set -eu

cd "$(dirname "$0")/../.."

CC=${FUZZ_CC:-clang}
OUT=build/fuzz
GEN=$OUT/gen
OBJ=$OUT/obj
PG_INC=$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Icommon -Iclient -I$GEN -I$PG_INC \
 -g -O1 -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror $SAN ${FUZZ_CFLAGS:-}"
LIBS="-lpg_query -lprotobuf-c -lsodium -llmdb -lpq -lhiredis -pthread"
TARGETS="fuzz_cs_request fuzz_chan fuzz_keyfile fuzz_userkey fuzz_proxy_request fuzz_admin_request fuzz_sql
 fuzz_rc_parse fuzz_groups fuzz_cs_wire fuzz_log_open"

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz: $CC not found (install clang and libclang-rt-14-dev, or run make deps)" >&2
	exit 1
fi
mkdir -p "$GEN" "$OBJ"

# newer OUT SRC...: true when OUT is missing or older than any SRC
newer() {
	out=$1
	shift
	[ -f "$out" ] || return 0
	for s in "$@"; do
		[ "$s" -nt "$out" ] && return 0
	done
	return 1
}

if newer "$GEN/lwc.pb-c.c" common/lwc.proto; then
	echo "fuzz: protoc-c common/lwc.proto"
	protoc-c --proto_path=common --c_out="$GEN" common/lwc.proto
fi

HDRS="$(ls common/*.h cloudstore/*.h proxy/*.h client/*.h tests/fuzz/*.h tests/testdir.h) $GEN/lwc.pb-c.h tests/fuzz/build.sh"
# the library: all of common/ but the servers' accept loop (srvkit.c), the
# generated messages and the store side of cloudstore/ (store.c names every
# backend, so store_pg.c and the Redis Cluster backend come too: -lpq,
# -lhiredis), the proxy's predicates, index and state with its journal (no
# engine, no server: no libevent), the client's SQL
LIB_SRC="$(ls common/*.c | grep -v '^common/srvkit\.c$') $GEN/lwc.pb-c.c cloudstore/store.c cloudstore/store_lmdb.c \
 cloudstore/store_log.c cloudstore/store_log_compact.c cloudstore/store_pg.c cloudstore/store_redis.c cloudstore/rc_cluster.c cloudstore/rc_parse.c \
 cloudstore/proto.c proxy/pred.c proxy/index.c proxy/state.c proxy/padage.c proxy/groups.c proxy/u64map.c proxy/journal.c proxy/rowmap.c proxy/locsort.c \
 $(ls client/sql_*.c)"

pids=""
objs=""
failed=0
for src in $LIB_SRC; do
	obj=$OBJ/$(echo "$src" | sed 's|/|_|g; s|\.c$|.o|')
	objs="$objs $obj"
	# shellcheck disable=SC2086
	if newer "$obj" "$src" $HDRS; then
		echo "fuzz: cc $src"
		# shellcheck disable=SC2086
		$CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
		pids="$pids $!"
	fi
done
for t in $TARGETS; do
	obj=$OBJ/$t.o
	# shellcheck disable=SC2086
	if newer "$obj" "tests/fuzz/$t.c" $HDRS; then
		echo "fuzz: cc tests/fuzz/$t.c"
		# shellcheck disable=SC2086
		$CC $CFLAGS -fsanitize=fuzzer-no-link -c "tests/fuzz/$t.c" -o "$obj" &
		pids="$pids $!"
	fi
done
for p in $pids; do
	wait "$p" || failed=1
done
if [ "$failed" -ne 0 ]; then
	echo "fuzz: compilation failed" >&2
	exit 1
fi

for t in $TARGETS; do
	# shellcheck disable=SC2086
	if newer "$OUT/$t" "$OBJ/$t.o" $objs; then
		echo "fuzz: link $OUT/$t"
		# shellcheck disable=SC2086
		$CC $SAN -fsanitize=fuzzer -o "$OUT/$t" "$OBJ/$t.o" $objs $LIBS
	fi
done
echo "fuzz: targets in $OUT/: $TARGETS"
