#!/usr/bin/env python3
# fsync_gap.py: a 68 KB write and its fdatasync, 150 times each back to back, 2 ms and 20 ms apart
import os, time
p="/tmp/fs2_t"; fd=os.open(p, os.O_RDWR|os.O_CREAT|os.O_TRUNC,0o600)
cap=64<<20; os.pwrite(fd, b'\0'*cap, 0); os.fsync(fd)
buf=os.urandom(69632)
for gap in (0, 0.002, 0.02):
    ts=[]; off=0
    for i in range(150):
        os.pwrite(fd, buf, off); off=(off+69632)%(cap-69632)
        t=time.perf_counter(); os.fdatasync(fd); ts.append((time.perf_counter()-t)*1e6)
        if gap: time.sleep(gap)
    ts.sort(); print("gap %.3f: median %.0f p90 %.0f us" % (gap, ts[75], ts[135]))
os.close(fd); os.unlink(p)
