# moat — one Makefile.  `make` builds ./moat; `make check` installs what is
# missing, builds, and runs every test; `make asan` does the same under
# ASan+UBSan.
CC      ?= cc
PKGS    := libseccomp libelf libxxhash
CHECK_PKGS := check
CSTD    := -std=c17 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wno-unused-parameter -Wno-format-truncation -Werror
OPT     ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) $(OPT) -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lunwind-ptrace -lunwind-generic -lunwind
BUILD   ?= build

MODULES := syscall-table interposer fs-emulation net-stub audit
LIB_SRC := $(foreach m,$(MODULES),$(wildcard $(m)/*.c)) $(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(BUILD)/%)
PROBE_SRC := $(wildcard tests/integration/*.c tests/security/*.c bench/*.c)
PROBE_BIN := $(PROBE_SRC:%.c=$(BUILD)/%)

DEB_PKGS := build-essential pkg-config libseccomp-dev libunwind-dev libelf-dev \
	libxxhash-dev check python3 python3-pandas python3-matplotlib git tar \
	findutils util-linux proot hyperfine strace

.PHONY: all deps check test unit integration security compat asan bench clean format
all: moat probes

moat: $(BUILD)/cli/main.o $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs $(CHECK_PKGS))

# Probes, escape attempts and benchmarks are plain programs: no moat code.
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -g -Wall -o $@ $< -lpthread
$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE -O2 -g -Wall -o $@ $< -lpthread $(shell pkg-config --libs libseccomp)

probes: $(PROBE_BIN)

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

test: unit integration security compat

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; CK_FORK=yes $$t; done

integration: moat probes
	tests/integration/run.sh

security: moat probes
	tests/security/run.sh

compat: moat
	tests/compat/run.sh

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" all
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" test

bench: moat probes
	bench/run.sh

format:
	clang-format -i $(LIB_SRC) cli/main.c $(wildcard */*.h) $(UNIT_SRC)

clean:
	rm -rf build build-asan moat
