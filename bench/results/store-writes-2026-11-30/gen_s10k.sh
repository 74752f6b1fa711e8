v0=$((RANDOM%96)); for v in 0 1 2 3; do echo "SELECT count(*) FROM scat WHERE c10k = $((v0+v));"; done
