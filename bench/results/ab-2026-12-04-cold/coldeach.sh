# coldeach.sh DIR v...: drop the log's pages before each scattered 10k SELECT
D=$1; shift
DATA=$(tr '\0' ' ' < /proc/$(cat $D/cloudstore.pid)/cmdline | sed 's/.*--store log:\([^ ]*\).*/\1/')
for v in "$@"; do
python3 -c "
import os,sys,glob
for f in glob.glob(sys.argv[1]+'/seg-*.log'):
    fd=os.open(f,os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)" $DATA
sleep 0.5
sh /work/tmp/scat.sh $D $v
done
