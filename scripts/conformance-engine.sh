#!/bin/sh
# conformance-engine.sh KEYFILE - the engine of `make conformance`.
#
# sqllogictest expects every test file to start on an empty database, and
# not every file of the corpus drops the tables it creates.  run.py starts
# one engine process per file, so this wrapper drops every table of the
# database first, then becomes `lwc --json-lines`.  Binaries come from
# $LWC_BIN (default bin/).
set -eu

lwc=${LWC_BIN:-bin}/lwc
key=$1

# \d in unaligned tuples-only form prints "name|table" per table
"$lwc" --key "$key" -A -t -c '\d' |
	sed -n 's/|table$//p' |
	sed 's/"/""/g; s/.*/DROP TABLE "&";/' |
	"$lwc" --key "$key" -q -f - >&2
exec "$lwc" --key "$key" --json-lines
