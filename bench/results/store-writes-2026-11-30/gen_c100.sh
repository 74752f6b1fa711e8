for i in $(seq 1 200); do echo "SELECT count(*) FROM clus WHERE c100 = $((RANDOM%10000));"; done
