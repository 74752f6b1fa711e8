#!/bin/sh
# coldab.sh DIR CSBIN MODE(cold|warm) v...: restart the store with CSBIN (and the proxy),
# drop (cold) or read in (warm) the log's pages, time scattered 10k SELECTs
D=$1; CSB=$2; MODE=$3; shift 3
CSCMD=$(tr '\0' ' ' < /proc/$(cat $D/cloudstore.pid)/cmdline | sed "s|^[^ ]*|$CSB|")
PXCMD=$(tr '\0' ' ' < /proc/$(cat $D/proxy.pid)/cmdline)
kill $(cat $D/proxy.pid); while kill -0 $(cat $D/proxy.pid) 2>/dev/null; do sleep 0.1; done
kill $(cat $D/cloudstore.pid); while kill -0 $(cat $D/cloudstore.pid) 2>/dev/null; do sleep 0.1; done
DATA=$(echo "$CSCMD" | sed 's/.*--store log:\([^ ]*\).*/\1/')
if [ $MODE = keep ]; then :
elif [ $MODE = cold ]; then
  python3 -c "
import os,sys,glob
for f in glob.glob(sys.argv[1]+'/seg-*.log'):
    fd=os.open(f,os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)" $DATA
else
  cat $DATA/seg-*.log > /dev/null
fi
$CSCMD >> $D/cloudstore.log 2>&1 &
echo $! > $D/cloudstore.pid
sleep 1.5
$PXCMD >> $D/proxy.log 2>&1 &
echo $! > $D/proxy.pid
sleep 1.5
[ $MODE = cold ] && python3 -c "
import os,sys,glob
for f in glob.glob(sys.argv[1]+'/seg-*.log'):
    fd=os.open(f,os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)" $DATA
echo "== $CSB $MODE resident $(fincore -b $DATA/seg-*.log | awk '{s+=$1} END {printf "%.0f MB", s/1048576}')"
sh /work/tmp/scat.sh $D "$@"
