#!/usr/bin/env python3
# spin_idle.py S: keep a vCPU busy at SCHED_IDLE for S seconds
import os, time, sys
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
t=time.time()+float(sys.argv[1])
while time.time()<t: pass
