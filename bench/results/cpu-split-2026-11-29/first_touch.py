# Reading a sparse file's holes for the first time, again, and after the
# pages were dropped: what the store's read-ahead thread does to the pages
# ahead of its data files' growth (common/lmdb_ahead.c).  python3 first_touch.py
import os, time
fn = '/tmp/sparse-test'
fd = os.open(fn, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
os.ftruncate(fd, 256 << 20)
rfd = os.open(fn, os.O_RDONLY)
os.posix_fadvise(rfd, 0, 0, os.POSIX_FADV_RANDOM)
def once(label):
    t = time.time()
    for off in range(0, 256 << 20, 128 << 10):
        os.pread(rfd, 128 << 10, off)
    print("%-28s 256 MB in %.1f ms" % (label, (time.time() - t) * 1000))
once("first read of the holes")
once("again (cached)")
os.posix_fadvise(rfd, 0, 0, os.POSIX_FADV_DONTNEED)
once("after POSIX_FADV_DONTNEED")
os.unlink(fn)
