#!/bin/sh
# deps.sh - install the Debian packages LWC needs, only those missing.
# Run by `make`, `make test` and `make demo`; silent and quick when all are present.
set -eu

PKGS="build-essential pkg-config libsodium-dev libevent-dev liblmdb-dev lmdb-utils
libpq-dev libcmocka-dev libprotobuf-c-dev protobuf-c-compiler libedit-dev libpg-query-dev
postgresql postgresql-contrib gnuplot-nox python3 clang libclang-rt-14-dev procps
redis-server redis-tools libhiredis-dev"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing missing packages:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
		echo "deps: need root (or sudo) to install:$missing" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! $SUDO apt-get install -y --no-install-recommends $missing >&2; then
	$SUDO apt-get update >&2
	# shellcheck disable=SC2086
	$SUDO apt-get install -y --no-install-recommends $missing >&2
fi
