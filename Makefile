# moat — one Makefile.  `make` builds ./moat; `make check` installs what is
# missing, builds, and runs every test; `make asan` does the same under
# ASan+UBSan.
CC      ?= cc
PKGS    := libseccomp libelf libxxhash libunwind-ptrace libunwind-generic jansson
STATIC_PKGS := libseccomp libelf libxxhash jansson
CHECK_PKGS := check
CSTD    := -std=c17 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wno-unused-parameter -Wno-format-truncation -Werror
OPT     ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) $(OPT) -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -pthread
# moat itself links the archives of libseccomp, libelf (and zlib) and
# libxxhash (the -dev packages ship them, built as PIC): ld.so then maps
# five libraries at each start instead of nine (docs/performance.md).
# libunwind is not linked: the stack walker maps it itself (dlopen,
# audit/stack_unwind.c), so no run's start pays for its four libraries.
# MOAT_DYNAMIC=1 links every library as the tests do.
ifeq ($(MOAT_DYNAMIC),1)
MOAT_LDLIBS := $(LDLIBS)
else
MOAT_LDLIBS := -Wl,-Bstatic $(shell pkg-config --libs --static $(STATIC_PKGS) 2>/dev/null) \
	-Wl,-Bdynamic -ldl -pthread
endif
BUILD   ?= build
MOAT_OUT ?= moat

MODULES := core syscall-table interposer fs-emulation net-stub audit
LIB_SRC := $(foreach m,$(MODULES),$(wildcard $(m)/*.c)) \
	$(filter-out cli/main.c cli/session.c cli/mcp.c,$(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(BUILD)/%)
PROBE_SRC := $(wildcard tests/integration/*.c tests/security/*.c bench/*.c)
PROBE_BIN := $(PROBE_SRC:%.c=$(BUILD)/%)

DEB_PKGS := build-essential pkg-config libseccomp-dev libunwind-dev libelf-dev \
	libxxhash-dev libjansson-dev check python3 python3-pandas python3-matplotlib git tar \
	findutils util-linux proot hyperfine strace python3-venv python3-pip sqlite3 nodejs make procps xxhash \
	clang-format postgresql-15 openjdk-17-jdk-headless net-tools iproute2

.PHONY: all probes deps check test lint unit integration security compat sessions asan bench clean format
all: $(MOAT_OUT) probes

$(MOAT_OUT): $(BUILD)/cli/main.o $(BUILD)/cli/session.o $(BUILD)/cli/mcp.o $(BUILD)/gen/filter_blob.o \
		$(BUILD)/gen/drivers.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(MOAT_LDLIBS)

# The session drivers go into the binary as C strings, each after
# drivers/files.py (the code they share): a session passes its driver as
# `python3 -c`, with no file in the view.
DRIVERS := drivers/python_driver.py drivers/bash_driver.py
$(BUILD)/gen/drivers.c: drivers/files.py $(DRIVERS)
	@mkdir -p $(dir $@)
	{ for f in $(DRIVERS); do \
		echo "const char driver_$$(basename $$f _driver.py)[] = {"; \
		cat drivers/files.py $$f | od -An -v -tx1 | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo "0 };"; \
	done; } > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/drivers.o: $(BUILD)/gen/drivers.c
	$(CC) $(CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

# The BPF program is a pure function of the table: built once, here.
$(BUILD)/gen/filter_gen: $(BUILD)/syscall-table/gen/filter_gen.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/gen/filter_blob.c: $(BUILD)/gen/filter_gen
	$< > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/filter_blob.o: $(BUILD)/gen/filter_blob.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJ) $(BUILD)/gen/filter_blob.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter-out %.h,$^) $(LDLIBS) $(shell pkg-config --libs $(CHECK_PKGS))

# Probes, escape attempts and benchmarks are plain programs: no moat code.
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -g -Wall -Wno-format-truncation -o $@ $< -lpthread
$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -g -Wall -o $@ $< -lpthread $(shell pkg-config --libs libseccomp)

# esc_walker_libpath's planted library (a shared object, not a program)
$(BUILD)/tests/security/esc_walker_lib.so: tests/security/lib/walker_unwind.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -Wall -shared -fPIC -o $@ $<

probes: $(PROBE_BIN) $(BUILD)/tests/security/esc_walker_lib.so

# Install the Debian packages the build and the tests need, only if one is
# missing (dpkg-query is fast; apt-get is not).
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

check: deps
	$(MAKE) all
	$(MAKE) test

# Every suite runs even when an earlier one failed; the target fails at
# the end if any did.
SUITES := lint unit integration security compat sessions
test:
	@failed=""; for s in $(SUITES); do \
		echo "===== $$s"; $(MAKE) --no-print-directory $$s || failed="$$failed $$s"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED suites:$$failed"; exit 1; fi; \
	echo "all suites passed"

# The code's own rules (docs/architecture.md): includes only down the
# floors, and no function past 120 lines but the listed exceptions.
lint:
	@python3 tools/include-rule.py
	@python3 tools/funclen.py --allow tools/funclen-allow.txt core $(filter-out core,$(MODULES)) cli
	@clang-format --dry-run --Werror $(FORMAT_SRC) || { echo "lint: the C is not as .clang-format lays it out: run make format"; exit 1; }
	@echo "format: $(words $(FORMAT_SRC)) files as .clang-format lays them out"

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; CK_FORK=yes $$t; done

MOAT_BIN ?= ./moat
integration: $(MOAT_OUT) probes
	MOAT=$(MOAT_BIN) tests/integration/run.sh

# Three times: as uid 65534 (the default), then as uid 0 (the root inside
# a user namespace of the sandbox's own, with its capabilities there; moat
# serves its files as host root without capabilities, where host
# permissions no longer hide a broken rule), then with moat itself not
# root (the network attempts: no namespace of moat's).
security: $(MOAT_OUT) probes
	ESC_MOAT=$(abspath $(MOAT_BIN)) tests/security/run.sh
	ESC_UID0=1 ESC_MOAT=$(abspath $(MOAT_BIN)) tests/security/run.sh
	ESC_NONROOT=1 ESC_MOAT=$(abspath $(MOAT_BIN)) tests/security/run.sh

compat: $(MOAT_OUT)
	MOAT=$(MOAT_BIN) tests/compat/run.sh

# moat session, its Python client and drivers, and moat mcp (docs/sessions.md)
sessions: $(MOAT_OUT)
	MOAT=$(MOAT_BIN) tests/sessions/run.sh

# The same build and tests under ASan+UBSan, in build-asan/ (./moat is
# left alone: the asan binary is build-asan/moat).
ASAN_OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
asan:
	$(MAKE) probes # the probes and attempts are plain programs: tests find them in build/
	$(MAKE) BUILD=build-asan OPT="$(ASAN_OPT)" LDFLAGS="-fsanitize=address,undefined" \
		MOAT_OUT=build-asan/moat MOAT_BIN=build-asan/moat build-asan/moat probes
	$(MAKE) BUILD=build-asan OPT="$(ASAN_OPT)" \
		LDFLAGS="-fsanitize=address,undefined" MOAT_OUT=build-asan/moat MOAT_BIN=build-asan/moat test

# The bench's reference columns (gVisor's runsc, bubblewrap) and its count of
# the supervisor's syscalls (perf) only, not needed by the tests.
BENCH_PKGS := runsc bubblewrap linux-perf
bench: $(MOAT_OUT) probes
	@missing=$$(for p in $(BENCH_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		apt-get install -y -qq $$missing >/dev/null 2>&1 || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null 2>&1) || \
		echo "bench: could not install $$missing; their cells say n/a"; \
	fi
	bench/run.sh

FORMAT_SRC := $(LIB_SRC) cli/main.c $(wildcard */*.h) $(UNIT_SRC)
format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build build-asan moat
