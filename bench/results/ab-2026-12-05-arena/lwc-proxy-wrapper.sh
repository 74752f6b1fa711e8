#!/bin/sh
# the proxy alone with glibc's malloc arenas at one (new) against the same binaries (old)
GLIBC_TUNABLES=glibc.malloc.arena_max=1 exec /work/main/bin/lwc-proxy "$@"
