# abidle.sh DIR: old/new alternating, clustered 100 26 ms apart (clus.sh) after a warm-up
# (run from /work/tmp: swap.sh is beside this file, clus.sh is ../../ab-2026-12-04-cold/clus.sh)
D=$1; s=7000
for round in 1 2 3; do
for b in old new; do
  [ $b = old ] && BD=/work/tmp/wt-old/bin || BD=/work/main/bin
  sh /work/tmp/swap.sh $D $BD
  sh /work/tmp/clus.sh $D $s 30 > /dev/null; s=$((s+30))
  echo "$b round $round: $(sh /work/tmp/clus.sh $D $s 150)"; s=$((s+150))
done; done
