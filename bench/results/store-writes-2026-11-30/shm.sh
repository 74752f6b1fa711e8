#!/bin/bash
D=$1; B=$2; DATA=$3
cd $D; . ./ports
kill -TERM $(cat proxy.pid); while kill -0 $(cat proxy.pid) 2>/dev/null; do sleep 0.2; done
kill -TERM $(cat cloudstore.pid); while kill -0 $(cat cloudstore.pid) 2>/dev/null; do sleep 0.2; done
$B/lwc-cloudstore --listen 127.0.0.1:$cs_port --store lmdb:$DATA --key-file $D/cloudstore/cs.key --trace $D/cloudstore.trace >> cloudstore.log 2>&1 & echo $! > cloudstore.pid
sleep 1
$B/lwc-proxy serve --state $D/proxy --listen 127.0.0.1:$px_port >> proxy.log 2>&1 & echo $! > proxy.pid
sleep 1.5
