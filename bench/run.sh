#!/bin/sh
# run.sh - the block-store benchmark (`make bench-cs`, after `make all`).
#
#   sh bench/run.sh          run lwc-cs-bench against lwc-cloudstore on LMDB and on its
#                            appending log store, then on
#                            a private PostgreSQL cluster, then on private Redis
#                            Clusters (1 master; 3 masters + 3 replicas with WAIT 1,
#                            appendfsync everysec and always); write the JSON results
#                            to bench/results/ and the plot to docs/img/cs-bench.png
#   sh bench/run.sh plot     only redraw the plot from bench/results/*.json
#
# Everything runs in throw-away temp directories on loopback ports; the servers
# and the cluster are stopped whatever happens.  See docs/benchmarks.md.
#
# Environment (for a quick run, e.g. BENCH_BLOCKS=2048 BENCH_K=1,16,256):
#   BENCH_BLOCKS    blocks in the store, n (default 16384)
#   BENCH_K         comma-separated k values (default 1,2,4,...,4096)
#   BENCH_SECONDS   seconds of statements per k, at least BENCH_REPS (default 5)
#   BENCH_REPS      minimum statements per k (default 5)
#   BENCH_OUT       results directory (default bench/results)
#   BENCH_IMG       plot file (default docs/img/cs-bench.png)
#   BENCH_BACKENDS  which runs (default: lmdb log postgres redis-1m redis-3m redis-3m-always)
#   LWC_BIN         directory of the binaries (default bin)
set -eu

cd "$(dirname "$0")/.."

BIN=${LWC_BIN:-bin}
BLOCKS=${BENCH_BLOCKS:-16384}
KS=${BENCH_K:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096}
SECS=${BENCH_SECONDS:-5}
REPS=${BENCH_REPS:-5}
OUT=${BENCH_OUT:-bench/results}
IMG=${BENCH_IMG:-docs/img/cs-bench.png}
BACKENDS=${BENCH_BACKENDS:-lmdb log postgres redis-1m redis-3m redis-3m-always}

say() { echo "bench: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# ---- plot ------------------------------------------------------------------

# JSON results -> "k gamma median p95 read write mb_per_s" lines.
json_to_dat() {
	python3 - "$1" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
for r in d["results"]:
    print(r["k"], r["gamma"], r["total_ms"]["median"], r["total_ms"]["p95"],
          r["read_ms"]["median"], r["write_ms"]["median"], r["mb_per_s"])
EOF
}

plot() {
	command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found (apt-get install gnuplot-nox)"
	command -v python3 >/dev/null 2>&1 || die "python3 not found"
	pdir=$(mktemp -d /tmp/lwc-bench-plot-XXXXXX)
	lat="" thr="" sep=""
	for b in lmdb log postgres redis-1m redis-3m redis-3m-always; do
		[ -f "$OUT/cs-$b.json" ] || continue
		json_to_dat "$OUT/cs-$b.json" >"$pdir/$b.dat"
		case $b in
		lmdb) color="#1f77b4" name="LMDB" ;;
		log) color="#17becf" name="appending log" ;;
		postgres) color="#d62728" name="PostgreSQL" ;;
		redis-1m) color="#2ca02c" name="Redis Cluster, 1 master" ;;
		redis-3m) color="#ff7f0e" name="Redis Cluster, 3+3, WAIT 1" ;;
		*) color="#9467bd" name="Redis Cluster, 3+3, WAIT 1, fsync always" ;;
		esac
		lat="$lat$sep'$pdir/$b.dat' using 1:3 with linespoints lw 2 pt 7 lc rgb '$color' title '$name median', '$pdir/$b.dat' using 1:4 with lines dt 2 lc rgb '$color' title '$name p95'"
		thr="$thr$sep'$pdir/$b.dat' using 1:7 with linespoints lw 2 pt 7 lc rgb '$color' title '$name'"
		sep=", "
	done
	if [ -z "$lat" ]; then
		rm -rf "$pdir"
		die "no results in $OUT to plot"
	fi
	if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
		term="pngcairo size 1400,560 font 'Sans,11'"
	else
		term="png size 1400,560"
	fi
	first=$(ls "$OUT"/cs-*.json | head -n 1)
	nblocks=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["blocks"])' "$first")
	mkdir -p "$(dirname "$IMG")"
	gnuplot <<EOF
set terminal $term
set output '$IMG'
set multiplot layout 1,2 title "lwc-cloudstore: one statement = READ + WRITE of {/Symbol g} = 2k random blocks of 10800 B (store of n = $nblocks blocks)"
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left
set xlabel 'k (real blocks; {/Symbol g} = 2k blocks read and written)'
set xrange [0.8:5000]
set format x '%g'
set format y '%g'
set ylabel 'statement latency (ms)'
set title 'READ + WRITE latency'
plot $lat
set ylabel 'MB/s (2 {/Symbol g} x 10800 B / median latency)'
set title 'Throughput'
plot $thr
unset multiplot
EOF
	rm -rf "$pdir"
	say "plot written to $IMG"
}

if [ "${1:-}" = plot ]; then
	plot
	exit 0
fi
[ $# -eq 0 ] || die "usage: sh bench/run.sh [plot]"

[ -x "$BIN/lwc-cloudstore" ] && [ -x "$BIN/lwc-cs-bench" ] ||
	die "$BIN/lwc-cloudstore or $BIN/lwc-cs-bench missing: run 'make all' first"
command -v python3 >/dev/null 2>&1 || die "python3 not found"

tmp=$(mktemp -d /tmp/lwc-bench-XXXXXX)
pgdir=""
rcdir=""
cs_pid=""

stop_cs() {
	if [ -n "$cs_pid" ]; then
		kill -TERM "$cs_pid" 2>/dev/null || true
		wait "$cs_pid" 2>/dev/null || true
		cs_pid=""
	fi
}

cleanup() {
	stop_cs
	if [ -n "$pgdir" ]; then
		sh tests/pg-tmp.sh stop "$pgdir" >/dev/null 2>&1 || true
	fi
	if [ -n "$rcdir" ]; then
		sh tests/redis-cluster-tmp.sh stop "$rcdir" >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_cs STORE LOG: starts lwc-cloudstore on a free loopback port, sets
# cs_pid and cs_addr once it listens.
start_cs() {
	store=$1
	log=$2
	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		cs_addr="127.0.0.1:$(free_port)"
		: >"$log"
		"$BIN/lwc-cloudstore" --listen "$cs_addr" --store "$store" \
			--key-file "$tmp/cs.key" 2>>"$log" &
		cs_pid=$!
		i=0
		while [ $i -lt 200 ]; do
			if grep -q "listening on" "$log"; then
				return 0
			fi
			kill -0 "$cs_pid" 2>/dev/null || break
			sleep 0.05
			i=$((i + 1))
		done
		kill -TERM "$cs_pid" 2>/dev/null || true
		wait "$cs_pid" 2>/dev/null || true
		cs_pid=""
		# a port taken meanwhile is worth another try, anything else is not
		grep -q "cannot listen" "$log" || break
	done
	cat "$log" >&2
	die "lwc-cloudstore did not start (store $store)"
}

# run_backend NAME STORE
run_backend() {
	name=$1
	store=$2
	start_cs "$store" "$tmp/cs-$name.log"
	say "$name: lwc-cloudstore (pid $cs_pid) on $cs_addr, n = $BLOCKS, k = $KS"
	"$BIN/lwc-cs-bench" --addr "$cs_addr" --key-file "$tmp/cs.key" --blocks "$BLOCKS" \
		--k "$KS" --reps "$REPS" --seconds "$SECS" --load --label "$name" \
		--json "$tmp/cs-$name.json"
	echo
	stop_cs
	mv "$tmp/cs-$name.json" "$OUT/cs-$name.json"
	say "$name: results in $OUT/cs-$name.json"
}

machine() {
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpus: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "memory: $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "os: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
	echo "disk (temp dir): $(df -h "$tmp" | awk 'NR == 2 { print $1 " " $2 }')"
	echo "postgresql: $(pg_config --version 2>/dev/null || echo unknown)"
	echo "blocks: $BLOCKS, k: $KS, seconds per k: $SECS, min reps: $REPS"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

mkdir -p "$OUT"
t0=$(date +%s)
"$BIN/lwc-cloudstore" keygen "$tmp/cs.key" >/dev/null
machine >"$tmp/machine.txt"
sed 's/^/bench: /' "$tmp/machine.txt" >&2

want() { case " $BACKENDS " in *" $1 "*) return 0 ;; esac; return 1; }

# 1. LMDB, the embedded default.
if want lmdb; then
	run_backend lmdb "lmdb:$tmp/store"
	rm -rf "$tmp/store"
fi

# 1b. The appending log store, the other embedded engine.
if want log; then
	run_backend log "log:$tmp/logstore"
	rm -rf "$tmp/logstore"
fi

# 2. A private PostgreSQL cluster (stock settings but fsync and synchronous_commit on).
if want postgres; then
pgdir=$(mktemp -d /tmp/lwc-bench-pg-XXXXXX)
conninfo=""
tries=0
while [ $tries -lt 5 ] && [ -z "$conninfo" ]; do
	tries=$((tries + 1))
	pgport=$(free_port)
	conninfo=$(sh tests/pg-tmp.sh start "$pgdir" "$pgport") || {
		conninfo=""
		sh tests/pg-tmp.sh stop "$pgdir" >/dev/null 2>&1 || true
		mkdir -p "$pgdir"
	}
done
[ -n "$conninfo" ] || die "could not start a private PostgreSQL cluster"
say "postgres: private cluster at $conninfo"
if command -v psql >/dev/null 2>&1; then
	psql "$conninfo" -Atc "SELECT 'postgresql setting: ' || name || ' = ' ||
		current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers',
		'max_wal_size', 'wal_sync_method', 'synchronous_commit', 'fsync',
		'full_page_writes', 'wal_compression', 'default_toast_compression')
		ORDER BY name" >>"$tmp/machine.txt" 2>/dev/null || true
fi
run_backend postgres "postgres:$conninfo"
sh tests/pg-tmp.sh stop "$pgdir" >/dev/null 2>&1 || true
pgdir=""
fi

# 3. Private Redis Clusters (tests/redis-cluster-tmp.sh: AOF on, loopback):
#    NAME MASTERS REPLICAS WAIT APPENDFSYNC
run_redis() {
	rcdir="$tmp/rc-$1"
	seeds=$(LWC_REDIS_FSYNC=$5 sh tests/redis-cluster-tmp.sh start "$rcdir" "$2" "$3") ||
		die "could not start a private Redis Cluster"
	say "$1: $2 master(s), $3 replica(s) each, appendfsync $5, wait=$4: $seeds"
	echo "redis cluster $1: $2 master(s) x $3 replica(s), appendfsync $5, wait=$4" \
		>>"$tmp/machine.txt"
	run_backend "$1" "redis-cluster:$seeds,wait=$4"
	sh tests/redis-cluster-tmp.sh stop "$rcdir" >/dev/null 2>&1 || true
	rcdir=""
}
if want redis-1m || want redis-3m || want redis-3m-always; then
	echo "redis: $(redis-server --version)" >>"$tmp/machine.txt"
fi
want redis-1m && run_redis redis-1m 1 0 0 everysec
want redis-3m && run_redis redis-3m 3 1 1 everysec
want redis-3m-always && run_redis redis-3m-always 3 1 1 always

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$tmp/machine.txt"
mv "$tmp/machine.txt" "$OUT/machine.txt"
plot
say "done in $(($(date +%s) - t0)) s; results in $OUT, plot in $IMG"
