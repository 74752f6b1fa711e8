#!/bin/bash
# pxswap.sh BIN [serve args]: restart the kept deployment's proxy
D=/tmp/lwc-bench-nIWyEt/lwc; P=$(cat $D/proxy.pid); B=$1; shift
kill $P; for i in $(seq 100); do kill -0 $P 2>/dev/null || break; sleep 0.1; done
nohup $B serve --state $D/proxy --listen 127.0.0.1:48652 "$@" >> $D/proxy.log 2>&1 < /dev/null &
echo $! > $D/proxy.pid; sleep 1.5; kill -0 $(cat $D/proxy.pid) && echo "proxy up: $B $*"
