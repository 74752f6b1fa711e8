#!/usr/bin/env python3
# spare_first_touch.py W: a 256 MB fallocated file read through, W s, then 177 MB written into it
import os, time, sys
wait=int(sys.argv[1])
p="/tmp/pc2_t"; fd=os.open(p, os.O_RDWR|os.O_CREAT|os.O_TRUNC,0o600)
cap=256<<20; os.posix_fallocate(fd,0,cap); os.fsync(fd)
t=time.perf_counter()
for off in range(0,cap,1<<20): os.pread(fd,1<<20,off)
print("made in %.0f ms" % ((time.perf_counter()-t)*1e3))
time.sleep(wait)
blk=os.urandom(10816); iov=[blk]*1024
t=time.perf_counter(); off=0
for i in range(16):
    off+=os.pwritev(fd, iov, off)
w=time.perf_counter()-t
print("wait %d s: write %.0f MB in %.0f ms: %.2f GB/s" % (wait, off/1e6, w*1e3, off/w/1e9))
os.close(fd); os.unlink(p)
