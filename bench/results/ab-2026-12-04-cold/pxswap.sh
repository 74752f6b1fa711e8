# pxswap.sh DIR PXBIN: restart the proxy with PXBIN
D=$1; PXB=$2
PXCMD=$(tr '\0' ' ' < /proc/$(cat $D/proxy.pid)/cmdline | sed "s|^[^ ]*|$PXB|")
kill $(cat $D/proxy.pid); while kill -0 $(cat $D/proxy.pid) 2>/dev/null; do sleep 0.1; done
$PXCMD >> $D/proxy.log 2>&1 &
echo $! > $D/proxy.pid
sleep 1.5
