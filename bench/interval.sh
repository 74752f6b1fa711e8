#!/bin/sh
# interval.sh - the time between statements a script sends back to back, as
# the cloud store's trace shows it, and what it costs: a fresh local
# deployment with `lwc-proxy serve` options SERVE_ARGS, the 2,000 rows of
# setup.sql, then the 4,000 random point SELECT / INSERT / UPDATE / DELETE
# of run.sql by the shell (`lwc -f`), timed; analyse.py scores the type
# from each interval alone (nearest centroid, chance 0.25).
#
#   sh bench/interval.sh [SERVE_ARGS...]        e.g. sh bench/interval.sh --pace off
#
# Data: bench/results/interval-2026-12-02/ (setup.sql, run.sql, kinds.txt).
set -eu
cd "$(dirname "$0")/.."
data=bench/results/interval-2026-12-02
dir=$(mktemp -d "${TMPDIR:-/tmp}/lwc-interval-XXXXXX")
trap 'scripts/lwc-local down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
LWC_PROXY_ARGS="$*" scripts/lwc-local up --dir "$dir" --port-base "$(scripts/free-port 2)" >/dev/null
bin/lwc --key "$dir/users/admin.key" -f "$data/setup.sql" >/dev/null
t0=$(date +%s.%N)
bin/lwc --key "$dir/users/admin.key" -f "$data/run.sql" >/dev/null
t1=$(date +%s.%N)
echo "serve ${*:-(defaults)}: 4,000 statements in $(echo "$t1 - $t0" | bc) s"
python3 "$data/analyse.py" "$dir/cloudstore.trace" "$data/kinds.txt"
bin/lwc-proxy status --state "$dir/proxy" | grep '^pace' || true
