#!/bin/bash
# runs.sh D B LABEL N GEN
HERE=$(cd "$(dirname "$0")" && pwd); SQL=$(mktemp); trap 'rm -f "$SQL"' EXIT
D=$1; B=$2; L=$3; N=$4; GEN=$5
for r in $(seq 1 $N); do
  bash $GEN > "$SQL"
  d0=$(awk '$3=="vda"{print $8, $10, $13}' /proc/diskstats)
  out=$("$HERE/cpu.sh" $D $B "$SQL" 2>&1 | tr '\n' ' ')
  d1=$(awk '$3=="vda"{print $8, $10, $13}' /proc/diskstats)
  echo "$L r$r: $out disk: $(echo $d0 $d1 | awk '{printf "writes %d MB %.0f busy_ms %d", $4-$1, ($5-$2)*512/1e6, $6-$3}')"
done
