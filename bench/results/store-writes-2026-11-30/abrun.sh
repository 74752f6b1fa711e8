#!/bin/bash
# abrun.sh D SQLGEN ROUNDS BIN1 BIN2 ... : alternate proxies, report wall/cpu
HERE=$(cd "$(dirname "$0")" && pwd); SQL=$(mktemp); trap 'rm -f "$SQL"' EXIT
D=$1; GEN=$2; R=$3; shift 3
cd $D; . ./ports
for r in $(seq 1 $R); do for B in "$@"; do
  kill -TERM $(cat proxy.pid); while kill -0 $(cat proxy.pid) 2>/dev/null; do sleep 0.2; done
  $B/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:$px_port >> proxy.log 2>&1 & echo $! > proxy.pid; sleep 1.5
  bash $GEN > "$SQL"
  echo -n "$(basename $B) r$r: "; "$HERE/cpu.sh" $D $B "$SQL" 2>&1 | tr '\n' ' '; echo
done; done
