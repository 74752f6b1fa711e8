#!/bin/bash
# watch2.sh LOG OUT: dwarf profile of the proxy over 2 s of the 64-client phase
LOG=$1; OUT=$2
until grep -qE "^ +1 +[0-9]+ " "$LOG" 2>/dev/null; do sleep 0.1; done; sleep 2
perf record -p $(pgrep -x lwc-proxy) --call-graph dwarf,16384 -F 499 -o $OUT.perf -- sleep 2 > /dev/null 2>&1
