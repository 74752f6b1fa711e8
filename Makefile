# LWC - Long White Cloud.  Plain Makefile (LMDB / memcached style).
#
#   make            install missing Debian packages, build everything into bin/
#   make test       build, then run unit and integration tests (LMDB + a private PostgreSQL)
#   make asan       build with AddressSanitizer + UBSan and run the same tests
#   make tsan       build with ThreadSanitizer, run the units and the threaded suites
#   make test-failover  the Redis Cluster failover test 20 times in a row (~5 min)
#   make bench      lwc-bench: the paper's experiments against PostgreSQL, N = 1,000,000
#   make bench-full the same with N = 10,000,000 (BENCH_ARGS= adds lwc-bench options)
#   make bench-cs   block-store benchmark of lwc-cloudstore (see docs/benchmarks.md)
#   make audit      lwc-audit: the cloud's attacks across statements, with --check
#   make audit-storm  the same with 64 concurrent clients in bursts (lwc-audit --storm)
#   make fuzz       build the libFuzzer targets (clang) into build/fuzz/
#
# Knobs: OPT= (optimisation), XCFLAGS= (extra flags), BUILD=release|asan|tsan.

CC      ?= cc
BUILD   ?= release
OPT     ?= -O2

ifeq ($(BUILD),asan)
OUT     := build/asan
BIN     := build/asan/bin
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPTF    := -O1 -g
else ifeq ($(BUILD),tsan)
OUT     := build/tsan
BIN     := build/tsan/bin
SAN     := -fsanitize=thread
OPTF    := -O1 -g
else
OUT     := build/release
BIN     := bin
SAN     :=
OPTF    := $(OPT) -g
endif

PG_INC  := $(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
CFLAGS  := -std=c11 -Wall -Wextra -Werror $(OPTF) $(SAN) -pthread \
           -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
           -Icommon -Iclient -I$(OUT)/gen -I$(PG_INC) $(XCFLAGS)
LDFLAGS := $(SAN) -pthread
LIBS_COMMON := -lprotobuf-c -lsodium -lm
# liblwc parses SQL with PostgreSQL's grammar (libpg_query)
LIBS_CLIENT := -lpg_query
LIBS_CS     := -levent -levent_pthreads -llmdb -lpq -lhiredis $(LIBS_COMMON)

COMMON_SRC := $(wildcard common/*.c)
CS_SRC     := $(wildcard cloudstore/*.c)
PX_SRC     := $(wildcard proxy/*.c)
# the client library: everything in client/ but the shell and its main
CLIENT_SRC := $(filter-out client/shell%.c client/main.c,$(wildcard client/*.c))
COMMON_OBJ := $(COMMON_SRC:%.c=$(OUT)/%.o) $(OUT)/gen/lwc.pb-c.o
CS_OBJ     := $(CS_SRC:%.c=$(OUT)/%.o)
CS_LIB_OBJ := $(filter-out $(OUT)/cloudstore/main.o,$(CS_OBJ))
PX_OBJ     := $(PX_SRC:%.c=$(OUT)/%.o)
PX_LIB_OBJ := $(filter-out $(OUT)/proxy/main.o,$(PX_OBJ))
CLIENT_OBJ := $(CLIENT_SRC:%.c=$(OUT)/%.o)

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(OUT)/tests/%)
ITEST_SRC  := $(wildcard tests/integration/it_*.c)
ITEST_BIN  := $(ITEST_SRC:tests/integration/%.c=$(OUT)/tests/%)
ITEST_LIB  := $(OUT)/tests/harness.o $(OUT)/tests/pxc.o

PROGRAMS := $(BIN)/lwc-cloudstore $(BIN)/lwc-proxy $(BIN)/lwc-kma $(BIN)/lwc-cs-bench $(BIN)/lwc \
            $(BIN)/lwc-bench $(BIN)/lwc-audit
# the shell: client/shell.c and its modules client/shell_*.c
LWCSH_OBJ := $(patsubst %.c,$(OUT)/%.o,$(wildcard client/shell*.c))

# make demo / make conformance: deployment directories and ports
DEMO_DIR        ?= .lwc-demo
DEMO_PORT       ?= 5560
CONFORMANCE_DIR ?= ../shared/conformance
CONF_STATE      ?=
CONF_PORT       ?=

.PHONY: all build deps test run-tests test-failover asan tsan bench bench-full bench-cs audit audit-storm fuzz clean demo \
        conformance
.SUFFIXES:

all: deps
	@$(MAKE) --no-print-directory build

build: $(PROGRAMS) $(UNIT_BIN) $(ITEST_BIN)

deps:
	@sh scripts/deps.sh

$(OUT)/gen/lwc.pb-c.c $(OUT)/gen/lwc.pb-c.h: common/lwc.proto
	@mkdir -p $(OUT)/gen
	protoc-c --proto_path=common --c_out=$(OUT)/gen common/lwc.proto

$(OUT)/gen/lwc.pb-c.o: $(OUT)/gen/lwc.pb-c.c
	$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/%.o: %.c $(OUT)/gen/lwc.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/libcommon.a: $(COMMON_OBJ)
	rm -f $@ && ar rcs $@ $^

$(OUT)/libcloudstore.a: $(CS_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(OUT)/libproxy.a: $(PX_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(OUT)/libclient.a: $(CLIENT_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BIN)/lwc-proxy: $(OUT)/proxy/main.o $(OUT)/libproxy.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CS)

$(BIN)/lwc: $(LWCSH_OBJ) $(OUT)/libclient.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ -ledit $(LIBS_CLIENT) $(LIBS_COMMON)

$(BIN)/lwc-kma: $(OUT)/keymgmt/kma.o $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_COMMON)

$(BIN)/lwc-cloudstore: $(OUT)/cloudstore/main.o $(OUT)/libcloudstore.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CS)

$(BIN)/lwc-cs-bench: $(OUT)/bench/cs_bench.o $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_COMMON) -lm

# lwc-bench: bench/lwc_bench.c (options, order) and its parts bench/bench_*.c
BENCH_OBJ := $(patsubst %.c,$(OUT)/%.o,bench/lwc_bench.c $(wildcard bench/bench_*.c))
$(BIN)/lwc-bench: $(BENCH_OBJ) $(OUT)/libclient.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ -lpq $(LIBS_CLIENT) $(LIBS_COMMON) -lm

# lwc-audit: bench/lwc_audit.c (options, workload) and its parts
# bench/audit_*.c; liblwc for the workload, the proxy's read-only locator
# (proxy/locate.c, and state.c for its database names) for the ground truth
AUDIT_OBJ := $(patsubst %.c,$(OUT)/%.o,bench/lwc_audit.c $(wildcard bench/audit_*.c))
$(BIN)/lwc-audit: $(AUDIT_OBJ) $(OUT)/libclient.a $(OUT)/libproxy.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ -llmdb $(LIBS_CLIENT) $(LIBS_COMMON)

# its trace reader and attacks, without a deployment
$(OUT)/tests/test_audit: $(OUT)/tests/unit/test_audit.o $(OUT)/bench/audit_trace.o \
			 $(OUT)/bench/audit_attacks.o $(OUT)/bench/audit_report.o \
			 $(OUT)/bench/audit_storm_sql.o $(OUT)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LIBS_COMMON)

$(OUT)/tests/test_%: $(OUT)/tests/unit/test_%.o $(OUT)/libclient.a $(OUT)/libproxy.a \
		     $(OUT)/libcloudstore.a $(OUT)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LIBS_CLIENT) $(LIBS_CS)

$(OUT)/tests/harness.o: tests/integration/harness.c $(OUT)/gen/lwc.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/pxc.o: tests/integration/pxc.c $(OUT)/gen/lwc.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# (libcloudstore for the Redis Cluster router: raw access to the store)
$(OUT)/tests/it_%: $(OUT)/tests/integration/it_%.o $(ITEST_LIB) $(OUT)/libclient.a \
		   $(OUT)/libproxy.a $(OUT)/libcloudstore.a $(OUT)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lpq -llmdb -lhiredis $(LIBS_CLIENT) $(LIBS_COMMON) -lm

test: all
	@$(MAKE) --no-print-directory run-tests

run-tests: build
	@LWC_BIN=$(BIN) LWC_TESTS=$(OUT)/tests LWC_SAN=$(if $(SAN),1,) sh tests/run.sh

# kill -9 of a Redis Cluster master under a workload, 20 fresh runs in a row
test-failover: all
	@LWC_BIN=$(BIN) LWC_TESTS=$(OUT)/tests sh tests/failover.sh

asan: deps
	@$(MAKE) --no-print-directory BUILD=asan run-tests

# ThreadSanitizer (not part of make test: 5-10 minutes): the unit tests and
# the suites that drive the proxy's, the store's and the client's threads
tsan: deps
	@$(MAKE) --no-print-directory BUILD=tsan build
	@LWC_BIN=build/tsan/bin LWC_TESTS=build/tsan/tests sh tests/tsan.sh

# The whole system on the embedded store with a 10,000-row sample table,
# a few example statements, then the shell when run from a terminal.
demo: deps
	@$(MAKE) --no-print-directory build
	@LWC_BIN=$(BIN) sh scripts/demo.sh $(DEMO_DIR) $(DEMO_PORT)

# The sqllogictest conformance corpus through `lwc --json-lines` against a
# fresh local deployment, stopped whatever the outcome (scripts/conformance.sh;
# CONF_STATE and CONF_PORT default to a private directory and free ports).
conformance: all
	@LWC_BIN=$(BIN) CONFORMANCE_DIR=$(CONFORMANCE_DIR) CONF_STATE=$(CONF_STATE) \
		CONF_PORT=$(CONF_PORT) sh scripts/conformance.sh

# lwc-bench (docs/benchmarks.md): LWC against a private PostgreSQL, results in
# bench/results/lwc-bench-1m.json, plots in docs/img/lwc-bench-1m-*.png.
bench: all
	@$(BIN)/lwc-bench --records 1000000 $(BENCH_ARGS)

bench-full: all
	@$(BIN)/lwc-bench --records 10000000 $(BENCH_ARGS)

# the block-store benchmark of issue 2 (bench/run.sh)
bench-cs: all
	@sh bench/run.sh

# lwc-audit against a fresh local deployment (scripts/audit.sh), exit 1 when
# a leakage threshold is missed; JSON in bench/results/audit.json.  3,200
# statements per type, nine Zipf rounds and 100 intersection ids, as in make test: with lwc-audit's
# own default of 60 per type the type and recurrence checks fail by chance
# alone for an ideal proxy in about one run of four (tests/run.sh).
# AUDIT_INIT_ARGS / AUDIT_PROXY_ARGS go to `lwc-proxy init` / `serve` (e.g.
# AUDIT_INIT_ARGS="--relocate off"), AUDIT_ARGS to lwc-audit.
AUDIT_ARGS ?= --per-type 3200 --zipf-rounds 9 --targets 100
audit: all
	@LWC_BIN=$(BIN) AUDIT_INIT_ARGS="$(AUDIT_INIT_ARGS)" AUDIT_PROXY_ARGS="$(AUDIT_PROXY_ARGS)" \
		sh scripts/audit.sh --check --json bench/results/audit.json $(AUDIT_ARGS)

# The same audit with 64 concurrent clients running statements on 100-row
# ranges for half a second before every 400 audited statements (lwc-audit
# --storm), a quarter of them writes (--storm-writes: UPDATEs of a range,
# INSERTs and DELETEs of rows of their own), as in make test: the attacks in
# the state many clients leave, a stash of thousands of rows.  JSON in
# bench/results/audit-storm.json.
AUDIT_STORM_ARGS ?= --storm 64 --storm-every 400 --storm-ms 500 --storm-writes 25
audit-storm: all
	@LWC_BIN=$(BIN) AUDIT_INIT_ARGS="$(AUDIT_INIT_ARGS)" AUDIT_PROXY_ARGS="$(AUDIT_PROXY_ARGS)" \
		sh scripts/audit.sh --check --json bench/results/audit-storm.json $(AUDIT_ARGS) \
		$(AUDIT_STORM_ARGS)

fuzz: deps
	@sh tests/fuzz/build.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
