#!/bin/sh
# demo.sh - `make demo`: the whole system on this machine, on the embedded
# (LMDB) cloud store.
#
#   scripts/demo.sh [DIR [PORT]]      (make demo DEMO_DIR=... DEMO_PORT=...)
#
# Starts a deployment with scripts/lwc-local in DIR (default .lwc-demo; ports
# PORT and PORT+1, default 5560), loads a deterministic 10,000-row table
# `people` (scripts/demo-data.py) with `lwc \copy`, runs the example
# statements of scripts/demo.sql and, when run from a terminal, opens the
# shell.  Running it again reuses the deployment and reloads the table only
# when it does not hold the 10,000 rows.  Binaries come from $LWC_BIN (bin/).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-.lwc-demo}
port=${2:-5560}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
: "${LWC_BIN:=$here/bin}"
case $LWC_BIN in /*) ;; *) LWC_BIN=$PWD/$LWC_BIN ;; esac
export LWC_BIN
lwc=$LWC_BIN/lwc
key=$dir/users/admin.key
rows=10000

"$here/scripts/lwc-local" up --dir "$dir" --port-base "$port"

n=$("$lwc" --key "$key" -A -t -c "SELECT COUNT(*) FROM people" 2>/dev/null || true)
if [ "$n" = "$rows" ]; then
	echo
	echo "== The table people is loaded already ($rows rows)."
else
	echo
	echo "== Loading $rows rows of sample data into the table people"
	python3 "$here/scripts/demo-data.py" "$rows" >"$dir/people.csv.tmp"
	mv "$dir/people.csv.tmp" "$dir/people.csv"
	copy="\\copy people FROM '$dir/people.csv' CSV HEADER"
	"$lwc" --key "$key" -e \
		-c "DROP TABLE IF EXISTS people" \
		-c "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), city TEXT, age INT, salary FLOAT)"
	printf '%s\n' "$copy"
	"$lwc" --key "$key" -c "$copy"
fi

"$lwc" --key "$key" -e -f "$here/scripts/demo.sql"

if [ -t 0 ] && [ -t 1 ]; then
	echo
	printf '%s\n' '== Now the shell is yours: try \d people, \x, \timing, \copy; \q quits.'
	"$lwc" --key "$key" || true
fi

echo
echo "The deployment keeps running in $dir (user key $key):"
echo "  $lwc --key $key"
echo "Stop everything with:"
echo "  scripts/lwc-local down --dir $dir"
