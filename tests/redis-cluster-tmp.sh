#!/bin/sh
# redis-cluster-tmp.sh - a private, throwaway Redis Cluster for tests and
# benchmarks (the redis-cluster: backend of lwc-cloudstore).
#
#   tests/redis-cluster-tmp.sh start DIR [MASTERS [REPLICAS]]
#        MASTERS (default 3) masters with REPLICAS (default 1) replicas each,
#        on free loopback ports (cluster bus on PORT+10000), data, logs and
#        pid files in DIR/PORT/; waits until every node sees the cluster OK
#        and prints the seed list HOST:PORT,HOST:PORT,... (the masters)
#   tests/redis-cluster-tmp.sh add-master DIR
#        starts two more empty nodes, joins one as a master (no slots yet) and
#        the other as its replica, prints HOST:PORT NODE-ID of the master
#   tests/redis-cluster-tmp.sh reshard DIR TO-NODE-ID SLOTS
#        moves SLOTS slots from all masters to TO-NODE-ID (redis-cli --cluster
#        reshard, key by key with MIGRATE: clients see ASK/MOVED meanwhile)
#   tests/redis-cluster-tmp.sh pid DIR HOST:PORT
#        prints the pid of that node
#   tests/redis-cluster-tmp.sh masters DIR
#        prints HOST:PORT of every live master that serves slots, one a line
#   tests/redis-cluster-tmp.sh wait-failover DIR HOST:PORT
#        waits until the (killed) master HOST:PORT serves no slot any more and
#        the other nodes see the cluster OK (a replica took over)
#   tests/redis-cluster-tmp.sh restart DIR HOST:PORT
#        starts that node again from its configuration; waits until it is a
#        replica in sync with its master (what a failed master becomes)
#   tests/redis-cluster-tmp.sh stop DIR
#        stops every node (SIGKILL: the data is thrown away) and removes DIR
#
# Settings: appendonly yes, appendfsync $LWC_REDIS_FSYNC (default everysec;
# docs/operations.md says what always costs), cluster-node-timeout
# $LWC_REDIS_NODE_TIMEOUT ms (default 2000: a failover takes a few seconds),
# loopback only, no persistence other than the AOF.
set -eu

prog=$(basename "$0")
: "${LWC_REDIS_FSYNC:=everysec}"
: "${LWC_REDIS_NODE_TIMEOUT:=2000}"

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage() {
	echo "usage: $prog start DIR [MASTERS [REPLICAS]] | add-master DIR |" \
		"reshard DIR NODE-ID SLOTS | pid DIR HOST:PORT | masters DIR |" \
		"wait-failover DIR HOST:PORT | restart DIR HOST:PORT | stop DIR" >&2
	exit 2
}

command -v redis-server >/dev/null 2>&1 || die "redis-server not found (scripts/deps.sh installs it)"
command -v redis-cli >/dev/null 2>&1 || die "redis-cli not found (scripts/deps.sh installs redis-tools)"

# n free loopback ports p whose cluster bus port p+10000 is free as well
free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
n = int(sys.argv[1]); out = []; held = []
while len(out) < n:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    held.append(s)
    if p + 10000 > 65535 or p in out:
        continue
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", p + 10000))
    except OSError:
        continue
    finally:
        b.close()
    out.append(p)
print(" ".join(str(p) for p in out))
EOF
}

write_conf() {
	dir=$1
	port=$2
	mkdir -p "$dir/$port"
	cat >"$dir/$port/redis.conf" <<EOF
bind 127.0.0.1
port $port
protected-mode no
daemonize yes
dir $dir/$port
pidfile $dir/$port/redis.pid
logfile $dir/$port/redis.log
cluster-enabled yes
cluster-config-file $dir/$port/nodes.conf
cluster-node-timeout $LWC_REDIS_NODE_TIMEOUT
appendonly yes
appendfsync $LWC_REDIS_FSYNC
save ""
EOF
}

start_node() {
	try_node "$1" "$2" ||
		die "redis-server on 127.0.0.1:$2 does not answer (see $1/$2/redis.log)"
}

# Start a node on port; 1 when it does not answer within 10 s (a port that
# was free when chosen can be taken before redis binds it: an outgoing
# connection's ephemeral port), the node stopped again.
try_node() {
	dir=$1
	port=$2
	write_conf "$dir" "$port"
	redis-server "$dir/$port/redis.conf" >/dev/null || return 1
	i=0
	until redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			[ -f "$dir/$port/redis.pid" ] &&
				kill "$(cat "$dir/$port/redis.pid")" 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}

# every node of DIR reports cluster_state:ok and the same number of known nodes
wait_ok() {
	dir=$1
	i=0
	while :; do
		ok=1
		for p in $(cat "$dir/ports"); do
			redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null |
				grep -q '^cluster_state:ok' || ok=0
		done
		# every replica in sync with its master (a WAIT right after start
		# would otherwise wait for the initial full sync)
		for p in $(cat "$dir/ports"); do
			redis-cli -h 127.0.0.1 -p "$p" info replication 2>/dev/null |
				grep -q '^role:slave' || continue
			redis-cli -h 127.0.0.1 -p "$p" info replication 2>/dev/null |
				grep -q '^master_link_status:up' || ok=0
		done
		if [ $ok = 1 ] && redis-cli --cluster check "127.0.0.1:$(head -n1 "$dir/ports")" \
			>/dev/null 2>&1; then
			return 0
		fi
		i=$((i + 1))
		[ $i -lt 300 ] || die "the cluster in $dir did not become ready"
		sleep 0.2
	done
}

cmd_start() {
	dir=$1
	masters=$2
	replicas=$3
	case $dir in
	/*) ;;
	*) dir=$(pwd)/$dir ;;
	esac
	mkdir -p "$dir"
	[ -e "$dir/ports" ] && die "$dir already holds a cluster"
	n=$((masters * (replicas + 1)))
	ports=$(free_ports "$n")
	: >"$dir/ports"
	addrs=""
	used=""
	for p in $ports; do
		tries=1
		until try_node "$dir" "$p"; do
			[ $tries -lt 3 ] ||
				die "redis-server on 127.0.0.1:$p does not answer (see $dir/$p/redis.log)"
			echo "$prog: redis-server on 127.0.0.1:$p did not answer; another port" >&2
			tries=$((tries + 1))
			np=$(free_ports 1)
			while case " $ports $used " in *" $np "*) true ;; *) false ;; esac; do
				np=$(free_ports 1)
			done
			p=$np
		done
		echo "$p" >>"$dir/ports"
		used="$used $p"
		addrs="$addrs 127.0.0.1:$p"
	done
	ports=$used
	if [ "$masters" -ge 3 ]; then
		# shellcheck disable=SC2086
		if ! redis-cli --cluster create $addrs --cluster-replicas "$replicas" \
			--cluster-yes >"$dir/create.log" 2>&1; then
			cat "$dir/create.log" >&2
			die "redis-cli --cluster create failed"
		fi
	else
		# --cluster create wants 3 masters: a smaller cluster by hand
		# (masters split the slots, replicas follow the masters in turn)
		set -- $ports
		all="$*"
		i=0
		per=$((16384 / masters))
		while [ $i -lt "$masters" ]; do
			mp=$(echo "$all" | cut -d' ' -f$((i + 1)))
			lo=$((i * per))
			hi=$(((i + 1) * per - 1))
			[ $i -eq $((masters - 1)) ] && hi=16383
			redis-cli -h 127.0.0.1 -p "$mp" cluster addslotsrange "$lo" "$hi" >/dev/null
			i=$((i + 1))
		done
		first=$(echo "$all" | cut -d' ' -f1)
		for p in $all; do
			[ "$p" = "$first" ] || redis-cli -h 127.0.0.1 -p "$p" cluster meet 127.0.0.1 "$first" >/dev/null
		done
		sleep 1
		i=0
		for p in $(echo "$all" | cut -d' ' -f$((masters + 1))-); do
			[ "$masters" -lt "$n" ] || break
			mp=$(echo "$all" | cut -d' ' -f$((i % masters + 1)))
			id=$(redis-cli -h 127.0.0.1 -p "$mp" cluster myid)
			j=0
			until redis-cli -h 127.0.0.1 -p "$p" cluster replicate "$id" 2>/dev/null | grep -q OK; do
				j=$((j + 1))
				[ $j -lt 100 ] || die "127.0.0.1:$p cannot replicate $mp"
				sleep 0.1
			done
			i=$((i + 1))
		done
	fi
	wait_ok "$dir"
	# the seeds: the masters (the first MASTERS ports, as --cluster create assigns them)
	seeds=""
	for p in $(head -n "$masters" "$dir/ports"); do
		seeds="${seeds:+$seeds,}127.0.0.1:$p"
	done
	echo "$seeds"
}

cmd_add_master() {
	dir=$1
	[ -e "$dir/ports" ] || die "no cluster in $dir"
	# (wait_ok and start_node use p, port, dir: the new nodes are np, nr)
	set -- $(free_ports 2)
	np=$1
	nr=$2
	first=$(head -n1 "$dir/ports")
	start_node "$dir" "$np"
	echo "$np" >>"$dir/ports"
	if ! redis-cli --cluster add-node "127.0.0.1:$np" "127.0.0.1:$first" \
		>"$dir/add-$np.log" 2>&1; then
		cat "$dir/add-$np.log" >&2
		die "redis-cli --cluster add-node failed"
	fi
	id=$(redis-cli -h 127.0.0.1 -p "$np" cluster myid)
	wait_ok "$dir"
	start_node "$dir" "$nr"
	echo "$nr" >>"$dir/ports"
	if ! redis-cli --cluster add-node "127.0.0.1:$nr" "127.0.0.1:$first" --cluster-slave \
		--cluster-master-id "$id" >"$dir/add-$nr.log" 2>&1; then
		cat "$dir/add-$nr.log" >&2
		die "redis-cli --cluster add-node (replica) failed"
	fi
	i=0
	until redis-cli -h 127.0.0.1 -p "$nr" info replication 2>/dev/null |
		grep -q '^master_link_status:up'; do
		i=$((i + 1))
		[ $i -lt 600 ] || die "the new replica 127.0.0.1:$nr did not sync in 60 s"
		sleep 0.1
	done
	wait_ok "$dir"
	echo "127.0.0.1:$np $id"
}

cmd_reshard() {
	dir=$1
	to=$2
	slots=$3
	# a live master to talk to
	for p in $(cat "$dir/ports"); do
		if redis-cli -h 127.0.0.1 -p "$p" role 2>/dev/null | head -n1 | grep -q master; then
			break
		fi
	done
	if ! redis-cli --cluster reshard "127.0.0.1:$p" --cluster-from all --cluster-to "$to" \
		--cluster-slots "$slots" --cluster-yes --cluster-pipeline 10 \
		>"$dir/reshard.log" 2>&1; then
		tail -n 20 "$dir/reshard.log" >&2
		die "redis-cli --cluster reshard failed"
	fi
	wait_ok "$dir"
}

cmd_pid() {
	dir=$1
	port=${2##*:}
	cat "$dir/$port/redis.pid"
}

cmd_masters() {
	dir=$1
	for p in $(cat "$dir/ports"); do
		redis-cli -h 127.0.0.1 -p "$p" cluster nodes 2>/dev/null |
			awk -v a="127.0.0.1:$p" '/myself/ && /master/ && NF > 8 { print a }'
	done
}

cmd_wait_failover() {
	dir=$1
	port=${2##*:}
	i=0
	while :; do
		for p in $(cat "$dir/ports"); do
			[ "$p" = "$port" ] && continue
			if redis-cli -h 127.0.0.1 -p "$p" cluster info 2>/dev/null |
				grep -q '^cluster_state:ok' &&
				redis-cli -h 127.0.0.1 -p "$p" cluster nodes 2>/dev/null |
				awk -v a=":$port@" 'index($2, a) && /fail/ && NF == 8 { f = 1 }
					END { exit !f }'; then
				return 0
			fi
		done
		i=$((i + 1))
		[ $i -lt 600 ] || die "no replica took over from 127.0.0.1:$port in 60 s"
		sleep 0.1
	done
}

cmd_restart() {
	dir=$1
	port=${2##*:}
	redis-server "$dir/$port/redis.conf" >/dev/null ||
		die "redis-server on 127.0.0.1:$port did not start again"
	i=0
	until redis-cli -h 127.0.0.1 -p "$port" info replication 2>/dev/null |
		grep -q '^master_link_status:up'; do
		i=$((i + 1))
		[ $i -lt 600 ] || die "127.0.0.1:$port did not come back as a replica in 60 s"
		sleep 0.1
	done
}

cmd_stop() {
	dir=$1
	[ -d "$dir" ] || return 0
	if [ -e "$dir/ports" ]; then
		for p in $(cat "$dir/ports"); do
			[ -e "$dir/$p/redis.pid" ] || continue
			pid=$(cat "$dir/$p/redis.pid")
			# only a redis-server of this directory
			if [ -r "/proc/$pid/cmdline" ] &&
				tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "redis-server 127.0.0.1:$p"; then
				kill -9 "$pid" 2>/dev/null || true
			fi
		done
	fi
	rm -rf "$dir"
}

[ $# -ge 2 ] || usage
case $1 in
start)
	[ $# -le 4 ] || usage
	cmd_start "$2" "${3:-3}" "${4:-1}"
	;;
add-master)
	[ $# -eq 2 ] || usage
	cmd_add_master "$2"
	;;
reshard)
	[ $# -eq 4 ] || usage
	cmd_reshard "$2" "$3" "$4"
	;;
pid)
	[ $# -eq 3 ] || usage
	cmd_pid "$2" "$3"
	;;
masters)
	[ $# -eq 2 ] || usage
	cmd_masters "$2"
	;;
wait-failover)
	[ $# -eq 3 ] || usage
	cmd_wait_failover "$2" "$3"
	;;
restart)
	[ $# -eq 3 ] || usage
	cmd_restart "$2" "$3"
	;;
stop)
	[ $# -eq 2 ] || usage
	cmd_stop "$2"
	;;
*)
	usage
	;;
esac
