#!/bin/sh
# interval.sh - the time between statements a script sends back to back, as
# the cloud store's trace shows it, and what it costs: a fresh local
# deployment with `lwc-proxy serve` options SERVE_ARGS, the 2,000 rows of
# setup.sql, then the 4,000 random point SELECT / INSERT / UPDATE / DELETE
# of run.sql by the shell (`lwc -f`), timed, with the servers' CPU over
# them; analyse.py scores the type from each interval alone (nearest
# centroid, chance 0.25).  $LWC_BIN: the servers' binaries (lwc-local).
#
#   sh bench/interval.sh [--rare] [SERVE_ARGS...]   e.g. sh bench/interval.sh --pace off
#
# Data: bench/results/interval-2026-12-02/ (setup.sql, run.sql, kinds.txt).
# --rare: instead, 4,000 point SELECTs with 4 % UPDATEs among them
# (bench/results/interval-2026-12-03/rare.sql, made by gen_rare.py there),
# and a balanced attack on them (analyse_rare.py there, chance 0.5).
set -eu
cd "$(dirname "$0")/.."
data=bench/results/interval-2026-12-02
run=$data/run.sql kinds=$data/kinds.txt analyse=$data/analyse.py
if [ "${1:-}" = --rare ]; then
	shift
	rare=bench/results/interval-2026-12-03
	run=$rare/rare.sql kinds=$rare/rare-kinds.txt analyse=$rare/analyse_rare.py
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/lwc-interval-XXXXXX")
trap 'scripts/lwc-local down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
LWC_PROXY_ARGS="$*" scripts/lwc-local up --dir "$dir" --port-base "$(scripts/free-port 2)" >/dev/null
bin/lwc --key "$dir/users/admin.key" -f "$data/setup.sql" >/dev/null
# the servers' CPU over the statements: utime + stime of /proc/PID/stat
cpu() { awk '{ print $14 + $15 }' "/proc/$(cat "$dir/$1.pid")/stat"; }
px0=$(cpu proxy) cs0=$(cpu cloudstore)
t0=$(date +%s.%N)
bin/lwc --key "$dir/users/admin.key" -f "$run" >/dev/null
t1=$(date +%s.%N)
px1=$(cpu proxy) cs1=$(cpu cloudstore)
hz=$(getconf CLK_TCK)
echo "serve ${*:-(defaults)}: $(basename "$run"), 4,000 statements in $(echo "$t1 - $t0" | bc) s"
echo "CPU over them: proxy $(echo "scale=2; ($px1 - $px0) / $hz" | bc) s," \
	"cloud store $(echo "scale=2; ($cs1 - $cs0) / $hz" | bc) s"
python3 "$analyse" "$dir/cloudstore.trace" "$kinds"
bin/lwc-proxy status --state "$dir/proxy" | grep '^pace' || true
