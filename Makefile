# LWC - Long White Cloud.  Plain Makefile (LMDB / memcached style).
#
#   make            install missing Debian packages, build everything into bin/
#   make test       build, then run unit and integration tests (LMDB + a private PostgreSQL)
#   make asan       build with AddressSanitizer + UBSan and run the same tests
#   make bench      block-store benchmark (see docs/benchmarks.md)
#   make fuzz       build the libFuzzer targets (clang) into build/fuzz/
#
# Knobs: OPT= (optimisation), XCFLAGS= (extra flags), BUILD=release|asan.

CC      ?= cc
BUILD   ?= release
OPT     ?= -O2

ifeq ($(BUILD),asan)
OUT     := build/asan
BIN     := build/asan/bin
SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
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
           -Icommon -I$(OUT)/gen -I$(PG_INC) $(XCFLAGS)
LDFLAGS := $(SAN) -pthread
LIBS_COMMON := -lprotobuf-c -lsodium
LIBS_CS     := -levent -levent_pthreads -llmdb -lpq $(LIBS_COMMON)

COMMON_SRC := $(wildcard common/*.c)
CS_SRC     := $(wildcard cloudstore/*.c)
PX_SRC     := $(wildcard proxy/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(OUT)/%.o) $(OUT)/gen/lwc.pb-c.o
CS_OBJ     := $(CS_SRC:%.c=$(OUT)/%.o)
CS_LIB_OBJ := $(filter-out $(OUT)/cloudstore/main.o,$(CS_OBJ))
PX_OBJ     := $(PX_SRC:%.c=$(OUT)/%.o)
PX_LIB_OBJ := $(filter-out $(OUT)/proxy/main.o,$(PX_OBJ))

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(OUT)/tests/%)
ITEST_SRC  := $(wildcard tests/integration/it_*.c)
ITEST_BIN  := $(ITEST_SRC:tests/integration/%.c=$(OUT)/tests/%)
ITEST_LIB  := $(OUT)/tests/harness.o $(OUT)/tests/pxc.o

PROGRAMS := $(BIN)/lwc-cloudstore $(BIN)/lwc-proxy $(BIN)/lwc-kma $(BIN)/lwc-cs-bench

.PHONY: all build deps test run-tests asan bench fuzz clean
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

$(BIN)/lwc-proxy: $(OUT)/proxy/main.o $(OUT)/libproxy.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CS)

$(BIN)/lwc-kma: $(OUT)/keymgmt/kma.o $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_COMMON)

$(BIN)/lwc-cloudstore: $(OUT)/cloudstore/main.o $(OUT)/libcloudstore.a $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CS)

$(BIN)/lwc-cs-bench: $(OUT)/bench/cs_bench.o $(OUT)/libcommon.a
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_COMMON) -lm

$(OUT)/tests/test_%: $(OUT)/tests/unit/test_%.o $(OUT)/libproxy.a $(OUT)/libcloudstore.a $(OUT)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LIBS_CS)

$(OUT)/tests/harness.o: tests/integration/harness.c $(OUT)/gen/lwc.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/pxc.o: tests/integration/pxc.c $(OUT)/gen/lwc.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/it_%: $(OUT)/tests/integration/it_%.o $(ITEST_LIB) $(OUT)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lpq -llmdb $(LIBS_COMMON)

test: all
	@$(MAKE) --no-print-directory run-tests

run-tests: build
	@LWC_BIN=$(BIN) LWC_TESTS=$(OUT)/tests LWC_SAN=$(if $(SAN),1,) sh tests/run.sh

asan: deps
	@$(MAKE) --no-print-directory BUILD=asan run-tests

bench: all
	@sh bench/run.sh

fuzz: deps
	@sh tests/fuzz/build.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
