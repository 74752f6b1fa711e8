#!/bin/sh
# swap.sh DIR BINDIR: restart the store and the proxy of a kept deployment with BINDIR's binaries
D=$1; B=$2
CSCMD=$(tr '\0' ' ' < /proc/$(cat $D/cloudstore.pid)/cmdline | sed "s|^[^ ]*|$B/lwc-cloudstore|")
PXCMD=$(tr '\0' ' ' < /proc/$(cat $D/proxy.pid)/cmdline | sed "s|^[^ ]*|$B/lwc-proxy|")
kill $(cat $D/proxy.pid); while kill -0 $(cat $D/proxy.pid) 2>/dev/null; do sleep 0.1; done
kill $(cat $D/cloudstore.pid); while kill -0 $(cat $D/cloudstore.pid) 2>/dev/null; do sleep 0.1; done
$CSCMD >> $D/cloudstore.log 2>&1 &
echo $! > $D/cloudstore.pid
sleep 1.5
$PXCMD >> $D/proxy.log 2>&1 &
echo $! > $D/proxy.pid
sleep 1.5
