#!/bin/bash
D=/tmp/lwc-bench-zaKliq/lwc; P=$(cat $D/proxy.pid)
kill $P; for i in $(seq 100); do kill -0 $P 2>/dev/null || break; sleep 0.1; done
nohup /work/main/bin/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:33466 "$@" >> $D/proxy.log 2>&1 < /dev/null &
echo $! > $D/proxy.pid; sleep 1.5; kill -0 $(cat $D/proxy.pid) && echo "proxy up: $*"
