echo "SELECT count(*) FROM clus WHERE c1m = 0;"
