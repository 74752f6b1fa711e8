#!/bin/sh
# run.sh [RUNS] - bounded fuzzing: build the targets if needed, then run each
# for RUNS inputs (default 20000) from its seed corpus in tests/fuzz/corpus/.
# Fails if any target crashes, leaks, trips a sanitizer or an oracle.
#
# New inputs found go to build/fuzz/work/<target>/ (wiped on every run; the
# committed seed corpus is never written), crash reproducers to
# build/fuzz/artifacts/; scratch files in a private temporary directory.
# Knobs: FUZZ_SEED (default 1, so runs repeat),
# FUZZ_MAX_LEN (default 4096), FUZZ_TARGETS (default all eleven).
set -eu

cd "$(dirname "$0")/../.."

RUNS=${1:-20000}
SEED=${FUZZ_SEED:-1}
MAX_LEN=${FUZZ_MAX_LEN:-4096}
TARGETS=${FUZZ_TARGETS:-"fuzz_cs_request fuzz_chan fuzz_keyfile fuzz_userkey fuzz_proxy_request \
 fuzz_admin_request fuzz_sql fuzz_rc_parse fuzz_groups fuzz_cs_wire fuzz_log_open"}
OUT=build/fuzz

if ! sh tests/fuzz/build.sh >"$OUT.build.log" 2>&1; then
	cat "$OUT.build.log" >&2
	echo "fuzz: build failed" >&2
	exit 1
fi
mkdir -p "$OUT/artifacts"

# the targets' scratch files (LMDB store, key files) live here, removed
# whatever happens, even after a crash that skips their own clean-up
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm || base=${TMPDIR:-/tmp}
LWC_FUZZ_TMP=$(mktemp -d "$base/lwc-fuzz-XXXXXX")
export LWC_FUZZ_TMP
trap 'rm -rf "$LWC_FUZZ_TMP"' EXIT INT TERM

failed=0
for t in $TARGETS; do
	work=$OUT/work/$t
	log=$OUT/$t.log
	rm -rf "$work"
	mkdir -p "$work"
	start=$(date +%s)
	if "$OUT/$t" -runs="$RUNS" -seed="$SEED" -max_len="$MAX_LEN" -timeout=20 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$OUT/artifacts/$t-" \
		"$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
		echo "   fuzz $t: $RUNS runs ok ($cov, $(($(date +%s) - start))s)"
	else
		echo "   fuzz $t: FAILED (log: $log)" >&2
		grep -E 'ERROR|SUMMARY|check failed|Test unit written' "$log" | head -n 20 >&2 || true
		echo "   reproduce: $OUT/$t <artifact>" >&2
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ]
