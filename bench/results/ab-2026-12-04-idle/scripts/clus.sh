# clus.sh DIR START COUNT: clustered 100 SELECTs of new values 26 ms apart; median time, proxy and store major faults
D=$1; PX=$(sed -n 's/px_port=//p' $D/ports); PP=$(cat $D/proxy.pid); CP=$(cat $D/cloudstore.pid)
m0=$(awk '{print $12}' /proc/$PP/stat); c0=$(awk '{print $12}' /proc/$CP/stat)
(printf '%s\n' '\timing on'; i=0; while [ $i -lt $3 ]; do echo "SELECT * FROM clus WHERE c100 = $(( $2 + i ));"; sleep 0.026; i=$((i+1)); done) | /work/main/bin/lwc --key $D/users/admin.key -p 127.0.0.1:$PX -t -A | grep '^Time' | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {printf "n=%d p10 %.2f median %.2f p90 %.2f ms", NR, a[int(NR*0.1)+1], a[int(NR/2)+1], a[int(NR*0.9)]}'
m1=$(awk '{print $12}' /proc/$PP/stat); c1=$(awk '{print $12}' /proc/$CP/stat)
echo "  proxy majflt $((m1-m0)) store majflt $((c1-c0))"
