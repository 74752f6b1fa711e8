import os, time, sys
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
t=time.time()+float(sys.argv[1])
while time.time()<t: pass
