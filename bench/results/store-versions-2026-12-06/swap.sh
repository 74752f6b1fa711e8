#!/bin/bash
# swap.sh BIN: restart the kept deployment's store with BIN
D=/tmp/lwc-bench-nIWyEt/lwc; C=$(cat $D/cloudstore.pid)
kill $C; for i in $(seq 50); do kill -0 $C 2>/dev/null || break; sleep 0.1; done
nohup $1 --listen 127.0.0.1:48651 --store log:$D/cloudstore/data --key-file $D/cloudstore/cs.key --trace $D/cloudstore.trace >> $D/cloudstore.log 2>&1 < /dev/null &
echo $! > $D/cloudstore.pid; sleep 1.5; kill -0 $(cat $D/cloudstore.pid) && echo "store $(cat $D/cloudstore.pid) up: $1"
