#!/bin/sh
# pg-tmp.sh - a private, throwaway PostgreSQL cluster for tests and benchmarks.
#
#   tests/pg-tmp.sh start DIR PORT   initdb into DIR/data, start it on 127.0.0.1:PORT
#                                    (unix socket in DIR, log in DIR/log), wait until
#                                    it accepts connections, print its conninfo
#   tests/pg-tmp.sh stop DIR         stop it (fast) and remove DIR
#
# Trust authentication on loopback only: the cluster is for local tests.  Run as
# root, the cluster belongs to the postgres user (PostgreSQL refuses to run as
# root) and DIR is handed over to it.
set -eu

prog=$(basename "$0")

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage() {
	echo "usage: $prog start DIR PORT | $prog stop DIR" >&2
	exit 2
}

# Directory holding initdb and pg_ctl.
pg_bindir() {
	if command -v pg_config >/dev/null 2>&1; then
		d=$(pg_config --bindir 2>/dev/null || true)
		if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	fi
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5 -n -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 &&
		dirname "$(command -v pg_ctl)" && return 0
	die "PostgreSQL server binaries (initdb, pg_ctl) not found; install postgresql"
}

# Runs a command as the cluster owner (postgres when we are root).
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

cmd_start() {
	dir=$1
	port=$2
	case $port in
	'' | *[!0-9]*) die "bad port '$port'" ;;
	esac
	case $dir in
	/*) ;;
	*) dir=$(pwd)/$dir ;;
	esac
	bin=$(pg_bindir)
	mkdir -p "$dir"
	[ -e "$dir/data/PG_VERSION" ] && die "$dir/data already holds a cluster"
	chmod 0700 "$dir"
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || die "running as root but there is no postgres user"
		chown -R postgres: "$dir"
		runuser -u postgres -- test -x "$dir" ||
			die "user postgres cannot reach $dir (check the parent directories)"
	fi
	if ! as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 \
		--no-locale >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		die "initdb failed"
	fi
	# Loopback only, socket in DIR, durable (fsync on, synchronous_commit on).
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $port"
		echo "unix_socket_directories = '$dir'"
		echo "fsync = on"
		echo "synchronous_commit = on"
		echo "max_connections = 200"
	} >>"$dir/data/postgresql.conf"
	if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
		-o "-p $port" start >/dev/null 2>&1; then
		tail -n 20 "$dir/log" >&2 2>/dev/null || true
		die "pg_ctl start failed (port $port in use?)"
	fi
	ready=""
	i=0
	while [ $i -lt 60 ]; do
		if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
			ready=1
			break
		fi
		sleep 0.5
		i=$((i + 1))
	done
	if [ -z "$ready" ]; then
		tail -n 20 "$dir/log" >&2 2>/dev/null || true
		die "PostgreSQL on 127.0.0.1:$port did not become ready"
	fi
	echo "host=127.0.0.1 port=$port user=postgres dbname=postgres"
}

cmd_stop() {
	dir=$1
	[ -d "$dir" ] || return 0
	if [ -e "$dir/data/postmaster.pid" ]; then
		bin=$(pg_bindir)
		as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			echo "$prog: warning: pg_ctl stop failed for $dir/data" >&2
	fi
	rm -rf "$dir"
}

[ $# -ge 1 ] || usage
case $1 in
start)
	[ $# -eq 3 ] || usage
	cmd_start "$2" "$3"
	;;
stop)
	[ $# -eq 2 ] || usage
	cmd_stop "$2"
	;;
*)
	usage
	;;
esac
