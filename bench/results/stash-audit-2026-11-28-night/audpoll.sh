#!/bin/sh
# usage: audpoll.sh TAG [proxy args]
tag=$1; shift
cd /work/main
( AUDIT_PROXY_ARGS="$*" sh scripts/audit.sh --check --per-type 3200 --zipf-rounds 9 --targets 100 > /work/tmp/aud-$tag.log 2>&1; echo "rc $?" >> /work/tmp/aud-$tag.log ) &
sleep 3
: > /work/tmp/poll-$tag.log
while ! grep -q "^rc " /work/tmp/aud-$tag.log 2>/dev/null; do
  d=$(ls -dt /tmp/lwc-audit-* 2>/dev/null | head -1)
  phase=$(grep -o "lwc-audit: [a-z ]*:" /work/tmp/aud-$tag.log | tail -1)
  s=$(bin/lwc-proxy status --state $d/proxy 2>/dev/null | grep -E "^(blocks|stash_rows|inserts_via_stash|blocks_above_fill_limit|stmts_stash_full) " | tr '\n' ' ')
  echo "$(date +%T) $phase $s" >> /work/tmp/poll-$tag.log
  sleep 3
done
