# quarry's one build file: the library, the CLI, unit tests, end-to-end tests and benchmarks.
#
#   make            build build/quarry and build/libquarry.a
#   make run        install missing packages, build, serve on 127.0.0.1:8000 (DynamoDB) and
#                   127.0.0.1:9042 (CQL) with data in ./data
#   make test       install missing packages, build, run every test
#   make asan       the same build with AddressSanitizer and UBSan, in build-asan/
#   make SANITIZE=thread all unit e2e   the same with ThreadSanitizer, in build-tsan/
#   make bench      build and run the benchmarks in bench/
#   make install PREFIX=/usr/local   the binary, libquarry (.a and .so), quarry.h, quarry.pc, quarry(1)
#
# Sources are found by wildcard: a new file under src/ joins the library, a new
# tests/unit/<layer>/test_*.c becomes a test program. SANITIZE=1 selects the sanitizer build.

CC       ?= gcc
# Debian's Python, which has pytest and boto3 from apt (a pyenv python3 on PATH may not).
PYTHON   ?= /usr/bin/python3
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD    ?= build-asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT      := -O1 -g
else ifeq ($(SANITIZE),thread)
# ThreadSanitizer, for the server's and the engine's threads: `make SANITIZE=thread all
# unit e2e`. Not part of `make test` (a third build); tests/tsan.supp hides what TSan
# cannot see into (RocksDB, built without TSan), and a report makes the process exit 66.
BUILD    ?= build-tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT      := -O1 -g
# detect_deadlocks=0: TSan tracks at most 64 held locks, and a batch may hold more stripes.
export TSAN_OPTIONS ?= suppressions=$(abspath tests/tsan.supp) exitcode=66 detect_deadlocks=0
else
BUILD    ?= build
SANFLAGS :=
OPT      := -O2 -g
# The server allocates and frees small blocks on several threads for every request;
# jemalloc does that with less CPU than glibc's malloc (PutItem --no-sync 27.4 -> 25.8 us,
# GetItem 9.8 -> 9.4 us, alternating runs), and RocksDB is tuned for it. The sanitizer
# builds keep their own allocators; the library leaves the choice to its host.
#
# The server binary links RocksDB, libstdc++, jemalloc and the small libraries from their
# Debian .a files: a shared librocksdb has ~20 000 symbol relocations (every vtable entry
# of its exported classes) that the loader resolves at each start through the symbol
# tables of all the libraries, touching most of their pages, and shared libraries cannot
# drop what quarry never calls. Idle RSS 19.9 -> 15.1 MB (bench/footprint.py). Still
# position-independent (ASLR); non-PIE would save another 0.6 MB. libh2o-evloop has no .a
# in Debian and brings libssl and libcrypto; glibc stays shared (dlopen of libcurl).
SERVER_LIBS := -Wl,--gc-sections -Wl,-Bstatic -lrocksdb -lsnappy -lbz2 -ljemalloc -ljansson \
               -lyajl_s -lyaml -lxxhash -lz -llz4 -lzstd -lnettle -lgmp -lstdc++ -Wl,-Bdynamic \
               -lh2o-evloop -lssl -lcrypto -lpthread -lm -ldl
endif

PKGS     := rocksdb jansson yajl libh2o-evloop libssl libcrypto nettle yaml-0.1 libxxhash zlib liblz4 libzstd gmp
# Compiled against, not linked: the checker's client loads libcurl when it first calls out.
LOADED   := libcurl
# -fPIC: the same objects make libquarry.a and libquarry.so (in the quarry binary the linker
# still binds every call and thread-local directly); -fno-semantic-interposition keeps gcc
# inlining a file's own global functions, as without -fPIC.
CFLAGS   += -std=c11 -D_GNU_SOURCE -fPIC -fno-semantic-interposition -Wall -Wextra -Werror $(OPT) $(SANFLAGS) -MMD -MP \
            -Iinclude -Isrc $(shell pkg-config --cflags $(PKGS) $(LOADED) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
LDFLAGS  += $(SANFLAGS)
SERVER_LIBS ?= $(LDLIBS)

LIB_SRC  := $(sort $(shell find src -name '*.c' -not -path 'src/cli/*'))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
# Unit tests mirror src/: tests/unit/<layer>/test_NAME.c, for the layer it tests. Each
# builds into $(BUILD)/tests/test_NAME (no layer folder: the Python tests find some by
# that path), so two tests may not share a name.
TEST_SRC := $(sort $(wildcard tests/unit/*/test_*.c))
BENCH_SRC:= $(sort $(wildcard bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRC))))
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
TEST_DUP := $(strip $(foreach n,$(sort $(TEST_BIN)),$(if $(word 2,$(filter $(n),$(TEST_BIN))),$(notdir $(n)))))
ifneq ($(TEST_DUP),)
$(error tests under tests/unit/ share a name, and so a binary: $(TEST_DUP))
endif

# Debian packages the build, the tests and the benchmarks need.
DEB_PKGS := gcc g++ make pkg-config librocksdb-dev libh2o-evloop-dev libjansson-dev libyajl-dev libssl-dev nettle-dev \
            libxxhash-dev libgmp-dev libyaml-dev libcurl4-openssl-dev zlib1g-dev liblz4-dev libzstd-dev libjemalloc-dev clang-format python3 python3-pytest python3-boto3 python3-prometheus-client python3-cassandra python3-lz4 zstd awscli \
            wrk nginx-light golang-go golang-github-aws-aws-sdk-go-v2-dev golang-github-aws-aws-sdk-go-dev golang-github-gocql-gocql-dev \
            golang-github-hashicorp-hcl-v2-dev \
            chromium

.PHONY: all deps run test unit e2e asan bench clean format tree-check install
all: $(BUILD)/quarry $(BUILD)/libquarry.a

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi; \
	if ! command -v npm >/dev/null 2>&1; then \
	    echo "installing: nodejs npm"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi

$(BUILD)/libquarry.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/quarry: $(CLI_OBJ) $(BUILD)/libquarry.a
	$(CC) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The console's files are assembled into console.o (.incbin), which -MMD does not see.
CONSOLE_FILES := $(wildcard share/console/*)
$(BUILD)/src/server/console.o: $(CONSOLE_FILES)

# Each test program from its source in its layer's folder; the shared helpers (check.h,
# call.h) stay in tests/unit/.
$(foreach t,$(TEST_SRC),$(eval $(BUILD)/tests/$(basename $(notdir $(t))): $(t)))
$(TEST_BIN): $(BUILD)/libquarry.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libquarry.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libquarry.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libquarry.a $(LDLIBS)

run: deps
	$(MAKE) all
	mkdir -p data
	$(BUILD)/quarry serve --listen 127.0.0.1:8000 --cql 127.0.0.1:9042 --data ./data

unit: $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	    echo "== $$t"; $$t || fail=1; \
	done; exit $$fail

# Python tests find the binaries through QUARRY_BIN (the CLI) and QUARRY_BUILD (the
# build folder, for test programs such as tests/test_number).
e2e: $(BUILD)/quarry $(TEST_BIN)
	QUARRY_BIN=$(abspath $(BUILD)/quarry) QUARRY_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q -rs tests

# The layout the committed .clang-format gives, over the C sources and unit tests, and
# the layer map of docs/ARCHITECTURE.md (tests/check_layers.sh).
FORMAT_SRC := $(sort $(shell find src include tests/unit -name '*.[ch]'))
format:
	clang-format -i $(FORMAT_SRC)
tree-check:
	@bad=$$(for f in $(FORMAT_SRC); do clang-format --dry-run -Werror $$f >/dev/null 2>&1 || echo $$f; done); \
	if [ -n "$$bad" ]; then echo "not in .clang-format's layout (make format):"; echo "$$bad"; exit 1; fi
	@sh tests/check_layers.sh

test: deps
	$(MAKE) tree-check
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) e2e

asan:
	$(MAKE) SANITIZE=1 all

bench: deps
	$(MAKE) all $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b; done

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d)

# ---- Install: make install PREFIX=DIR (DESTDIR for packaging) ----
# A C program then builds with `cc app.c $(pkg-config --cflags --libs quarry)`, with
# PKG_CONFIG_PATH=DIR/lib/pkgconfig when DIR is not a standard prefix.
PREFIX   ?= /usr/local
VERSION  := $(shell sed -n 's/^\#define QR_VERSION "\(.*\)"/\1/p' include/quarry.h)
$(BUILD)/libquarry.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libquarry.so.0 $(LDFLAGS) -o $@ $^ $(LDLIBS)
install: all $(BUILD)/libquarry.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/quarry $(DESTDIR)$(PREFIX)/bin/quarry
	install -m 644 $(BUILD)/libquarry.a $(DESTDIR)$(PREFIX)/lib/libquarry.a
	install -m 755 $(BUILD)/libquarry.so $(DESTDIR)$(PREFIX)/lib/libquarry.so.$(VERSION)
	ln -sf libquarry.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libquarry.so.0
	ln -sf libquarry.so.0 $(DESTDIR)$(PREFIX)/lib/libquarry.so
	install -m 644 include/quarry.h $(DESTDIR)$(PREFIX)/include/quarry.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@SANFLAGS@|$(SANFLAGS)|' \
	    -e 's|@LIBS@|$(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm|' \
	    share/quarry.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/quarry.pc
	install -m 644 docs/quarry.1 $(DESTDIR)$(PREFIX)/share/man/man1/quarry.1

# ---- Fuzzing: libFuzzer harnesses in tests/fuzz (see tests/fuzz/README.md) ----
# Not part of `make test`. Built with clang into $(FUZZ_BUILD), library sources included,
# so the gcc build above is untouched:  make fuzz  then  build-fuzz/fuzz_call <corpus dir>
FUZZ_CC     ?= clang
FUZZ_BUILD  ?= build-fuzz
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude -Isrc \
               $(shell pkg-config --cflags $(PKGS) $(LOADED) 2>/dev/null)
FUZZ_OBJ    := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BIN    := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))

.PHONY: fuzz fuzz-replay
fuzz: $(FUZZ_BIN)

# Replays the committed reproducers; fails while any of them still crashes.
fuzz-replay: $(FUZZ_BUILD)/fuzz_call $(FUZZ_BUILD)/fuzz_cql_parse $(FUZZ_BUILD)/fuzz_storedrow
	$(PYTHON) tests/fuzz/replay.py $(FUZZ_BUILD)/fuzz_call tests/fuzz/crashes
	$(PYTHON) tests/fuzz/replay.py $(FUZZ_BUILD)/fuzz_cql_parse tests/fuzz/crashes-cql
	$(PYTHON) tests/fuzz/replay.py $(FUZZ_BUILD)/fuzz_storedrow tests/fuzz/crashes-storedrow

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/src/server/console.o: $(CONSOLE_FILES)

$(FUZZ_BUILD)/libquarry.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libquarry.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -MMD -MP -o $@ $< $(FUZZ_BUILD)/libquarry.a $(LDLIBS)

-include $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d)
