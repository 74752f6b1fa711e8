# abcomp.sh DIR: alternate cs-r50 / cs-r25, 8 warm-up then 16 timed scattered 10k each
# (run from /work/tmp: coldab.sh is beside this file, scat.sh is ../../ab-2026-12-04-cold/scat.sh)
D=$1
for round in 1 2; do
for b in r50 r25; do
  sh /work/tmp/coldab.sh $D /work/tmp/cs-$b keep 30 31 32 33 34 35 36 37 > /tmp/warm.$b.$round
  sh /work/tmp/scat.sh $D $(seq 40 55) > /tmp/meas.$b.$round
  echo "== $b round $round: $(awk '{split($3,a,"="); split($4,c,"="); split($5,p,"="); w+=a[2]; s+=c[2]; x+=p[2]; n++} END {printf "wall %.0f store %.0f proxy %.0f ms (mean of %d)", w/n, s/n, x/n, n}' /tmp/meas.$b.$round)  log $(du -sm $D/cloudstore/data | cut -f1) MB"
  sort -t= -k4 -n /tmp/meas.$b.$round | awk '{print $3}' | tr '\n' ' '; echo
done; done
