# denytrace: build, test, demo, bench, install.
# `make` builds build/libdenytrace.so and build/denytrace.

PREFIX ?= /usr/local
DESTDIR ?=
# Where make install puts the probe. The CLI looks beside itself, in
# ../lib/denytrace and in ../lib/MULTIARCH/denytrace (the Debian package's).
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
PROBEDIR ?= $(PREFIX)/lib/denytrace
BUILD ?= build
CC ?= cc
CLANG ?= clang

WARN := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
BASEFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE
# The probe is built without _FILE_OFFSET_BITS=64: it defines both open and
# open64. Only the interposed names are exported.
# -fno-tree-loop-distribute-patterns: the compiler made the probe's own
# loops (dt_strlen, byte copies) calls to libc's strlen and memcpy, which
# the loader binds at their first call on the caller's stack (> 4 KiB):
# on the host's stack that crashed a thread with 4 KiB left.
PROBE_FLAGS := $(BASEFLAGS) -fPIC -fvisibility=hidden -fno-strict-aliasing \
	-fno-stack-protector -fno-tree-loop-distribute-patterns -Ipreload
# Loading the probe costs what an empty LD_PRELOAD shim costs, plus what
# make bench (section 3) prints: every exec of the traced tree pays it.
# - Lazy binding (no -z now): binding its libc imports at load cost
#   several times the probe's whole load per exec. glibc's _dl_fixup binds each at its first
#   call instead; for a target in libc (loaded at start-up) it takes no lock
#   and allocates nothing, so it is safe in a signal handler, and in a vfork
#   child it stores the value the parent would. The hot path calls no import.
#   But a binding takes ~3.5 KiB of the caller's stack: what runs on the
#   host's stack binds nothing (__errno_location is bound by the
#   constructor; see successes.c for the clock).
# - No DT_NEEDED and no symbol versions (-nostdlib): matching libc.so.6 by
#   name and checking five GLIBC_x versions cost twice the rest of the
#   load. The imports bind to the default versions of the libc every
#   dynamic program has loaded (dlsym and dlopen are in libc since glibc
#   2.34). -z nodelete because
#   nothing (no crtbegin) would unregister the fork handler at dlclose.
# Stacks come from the probe's own CFI unwinder (preload/unwind.c), never
# libgcc's or libunwind's: see preload/backtrace.c for why.
# -z noseparate-code: one read-execute segment for code and read-only data
# instead of three, so the loader maps and faults in fewer pages in every
# process (about four page faults per exec here; make bench, section 1-2).
PROBE_LIBS := -lgcc
PROBE_LDFLAGS := -nostdlib -Wl,-z,lazy -Wl,-z,nodelete -Wl,-z,noseparate-code
# Before glibc 2.34 dlsym was in libdl, which a program need not load: there
# the probe links libc and libdl as it used to (and loads ~4,000 slower).
GLIBC_MINOR := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')
ifneq ($(shell test "$(GLIBC_MINOR)" -ge 34 2>/dev/null && echo new),new)
PROBE_LIBS := -ldl
PROBE_LDFLAGS := -Wl,-z,lazy -Wl,-z,nodelete -Wl,-z,noseparate-code -Wl,--as-needed
endif
# tracer/ is one folder per stage of the pipeline (tracer/README.md); every
# folder is on the include path, so a header is named by its file name.
TRACER_DIRS := tracer $(patsubst %/,%,$(sort $(wildcard tracer/*/)))
TRACER_INC := $(addprefix -I,$(TRACER_DIRS))
CLI_FLAGS := $(BASEFLAGS) -D_FILE_OFFSET_BITS=64 -Wno-format-truncation -Ipreload $(TRACER_INC) \
	-I$(BUILD)/gen -fno-math-errno
CLI_LIBS := -ldl -lm -lseccomp
# The denytrace binary links libseccomp statically where its archive is
# installed (libseccomp-dev), and loads no libm (-fno-math-errno makes
# sqrt an instruction when optimizing; -lm is there as needed for -O0): every `denytrace run` is one more exec in the
# worker's loop, and each shared library the loader maps and relocates
# costs about 0.1 ms of it (make bench, section 7). libseccomp is LGPL-2.1:
# this source tree and Makefile are what relinking it needs. Not libm.a:
# it would bind the binary to glibc's private errno symbol. Tests link the
# shared libraries.
CLI_STATIC_LIBS := $(CLI_LIBS)
ifneq ($(filter /%,$(shell $(CC) -print-file-name=libseccomp.a)),)
CLI_STATIC_LIBS := -Wl,-Bstatic -lseccomp -Wl,-Bdynamic -ldl -Wl,--as-needed -lm -Wl,--no-as-needed
endif

PROBE_SRC := $(wildcard preload/*.c)
PROBE_HDR := $(wildcard preload/*.h preload/*.def)
CLI_SRC := $(wildcard tracer/*.c tracer/*/*.c) preload/ring.c preload/pathnorm.c preload/secrets.c
CLI_HDR := $(wildcard tracer/*/*.h tracer/*/*.def) preload/ring.h preload/ring_format.h
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))
INTEG_SRC := $(wildcard tests/integration/test_*.c)
INTEG_BINS := $(patsubst tests/integration/%.c,$(BUILD)/integration/%,$(INTEG_SRC))
TESTLIB := tests/testlib.c tests/testlib.h
# Library code the unit tests link against: everything but main.
CLI_LIB_SRC := $(filter-out tracer/main.c,$(CLI_SRC))
# Compiled once into an archive: thirty test binaries link it instead of
# each compiling every module again.
CLI_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC))
CLI_LIB := $(BUILD)/libdtcli.a

.PHONY: all deps test unit integration demo demo-picture bench install uninstall clean \
	test-asan lint man format fuzz fuzz-smoke helpers codex test-as-user deb test-deb \
	test-debian12 test-debian13 cross-aarch64
.DELETE_ON_ERROR:

all: $(BUILD)/libdenytrace.so $(BUILD)/denytrace

$(BUILD)/libdenytrace.so: $(PROBE_SRC) $(PROBE_HDR) Makefile
	@mkdir -p $(@D)
	$(CC) $(PROBE_FLAGS) $(CFLAGS) -shared $(PROBE_LDFLAGS) \
		-o $@ $(PROBE_SRC) $(PROBE_LIBS)

$(BUILD)/obj/%.o: %.c $(CLI_HDR) $(PROBE_HDR) Makefile
	@mkdir -p $(@D)
	$(CC) $(CLI_FLAGS) $(CFLAGS) -c -o $@ $<

# The demo's Python programs (tracer/demo/*.py), embedded in demo.c as
# C strings demo_NAME_py: the demo needs nothing but the binary, its probe
# and python3.
DEMO_PY := $(wildcard tracer/demo/*.py)
$(BUILD)/gen/demo_py.h: $(DEMO_PY) Makefile
	@mkdir -p $(@D)
	@for f in $(DEMO_PY); do echo "static const char demo_$$(basename $$f .py)_py[] ="; \
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $$f; \
		echo "    ;"; done > $@
$(BUILD)/obj/tracer/demo/demo.o: $(BUILD)/gen/demo_py.h
$(BUILD)/obj/tracer/cmd/cli.o: CLI_FLAGS += $(if $(MULTIARCH),-DDT_MULTIARCH='"$(MULTIARCH)"')

$(CLI_LIB): $(filter-out $(BUILD)/obj/tracer/main.o,$(CLI_OBJ))
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/denytrace: $(BUILD)/obj/tracer/main.o $(CLI_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(CLI_STATIC_LIBS)

# The plugin tests/helpers/reload.c loads, in two builds that differ only
# in their frame size.
PLUGINS := $(BUILD)/helpers/plugin-small.so $(BUILD)/helpers/plugin-big.so
helpers: $(HELPERS) $(PLUGINS)
$(BUILD)/helpers/plugin-small.so: tests/helpers/plugins/frame.S | $(BUILD)/helpers
	$(CC) -shared -fPIC -DFRAME=264 -o $@ $<
$(BUILD)/helpers/plugin-big.so: tests/helpers/plugins/frame.S | $(BUILD)/helpers
	$(CC) -shared -fPIC -DFRAME=4104 -o $@ $<

# Helpers are ordinary programs the tests run. A helper that needs special
# flags (static, _FORTIFY_SOURCE, libraries) says so in a first-lines
# comment: "// build-flags: -static -lpthread".
# The sources a helper's build-flags name are prerequisites too: a helper
# built from preload/ring.c is rebuilt when ring.c changes.
helper_sources = $(filter %.c,$(shell sed -n 's|^// build-flags: ||p' $(1)))
.SECONDEXPANSION:
$(BUILD)/helpers/%: tests/helpers/%.c $(PROBE_HDR) $$(call helper_sources,tests/helpers/$$*.c) \
		| $(BUILD)/helpers
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -o $@ $< \
		$(shell sed -n 's|^// build-flags: ||p' $<)
$(BUILD)/helpers:
	@mkdir -p $@

# Criterion suites link the CLI's modules (all but main.c) and the test
# library; unit/ tests modules alone, integration/ runs real processes.
$(BUILD)/obj/tests/testlib.o: $(TESTLIB)
# One rule per folder: a pattern rule with two targets says that one run
# of its recipe makes both (GNU make 4.4, Debian 13, warns of it).
SUITE_DEPS = $(BUILD)/obj/tests/testlib.o $(CLI_LIB) $(CLI_HDR) $(PROBE_HDR) $(TESTLIB)
define link_suite
	@mkdir -p $(@D)
	$(CC) $(CLI_FLAGS) $(CFLAGS) -Wno-format-truncation -Itests -o $@ $< \
		$(BUILD)/obj/tests/testlib.o $(CLI_LIB) \
		$(CLI_LIBS) -lcriterion -lpthread
endef
$(BUILD)/unit/%: tests/unit/%.c $(SUITE_DEPS)
	$(link_suite)
$(BUILD)/integration/%: tests/integration/%.c $(SUITE_DEPS)
	$(link_suite)
$(BUILD)/integration/test_libc_exports: tests/integration/libc_calls.def
# tests/aarch64: native suites that run the aarch64 build under qemu-user
# (make cross-aarch64), not part of make test.
$(BUILD)/aarch64/%: tests/aarch64/%.c $(SUITE_DEPS)
	$(link_suite)

# The README's two commands work on a fresh Debian machine: they install the
# Debian packages first (a no-op when all are there), then build.
deps:
	@./scripts/install-deps.sh

# The README's test command. Criterion prints its synthesis line per binary.
# SUITES="test_behaviour test_landlock" runs only those suites (no fuzzing).
SUITES ?=
test: deps
	@$(MAKE) --no-print-directory all helpers $(UNIT_BINS) $(INTEG_BINS)
	@$(MAKE) --no-print-directory codex
	@DT_SUITES="$(SUITES)" DT_FUZZ=$(if $(SUITES),0,1) ./tests/run-tests.sh $(BUILD)

# The Codex suites need the real Codex CLI (from npm, the only step of make
# test that uses the network). It is installed or found once, before the
# suites, within CODEX_TIMEOUT seconds; the outcome, "codex PATH" or "none
# REASON", goes to $(BUILD)/codex.status, and every Codex test reads it and
# skips at once with that reason.
# CODEX_VERSION=0.169.0 installs the older checked version instead (the
# newest of tracer/roots/codex_versions.def by default).
CODEX_TIMEOUT ?= 120
CODEX_VERSION ?= 0.171.0
codex:
	@mkdir -p $(BUILD) && rm -f $(BUILD)/codex.status
	@CODEX_VERSION=$(CODEX_VERSION) timeout $(CODEX_TIMEOUT) \
		./scripts/install-codex.sh --status $(BUILD)/codex.status \
		$(BUILD)/codex >/dev/null 2>&1 || true
	@[ -s $(BUILD)/codex.status ] || echo "none installing Codex took more than" \
		"$(CODEX_TIMEOUT) s (npm registry slow or unreachable?)" >$(BUILD)/codex.status
	@sed 's/^codex /codex: using /; s/^none /codex: the Codex tests will skip: /' $(BUILD)/codex.status

# make test as an ordinary user over a copy of the tree (CI; run as root),
# on the unit suites, the install and Codex suites, and the suites that
# behave differently for root (they mention geteuid or setpriv): the rest
# would only repeat the root run.
USER_SUITES = $(sort $(notdir $(basename $(UNIT_SRC) $(shell grep -l -e geteuid -e setpriv \
	$(INTEG_SRC)))) test_install test_codex)
test-as-user:
	@./scripts/test-as-user.sh test SUITES="$(USER_SUITES)"

# The scenario is built into the CLI (tracer/demo/demo.c): nothing else to install.
demo: deps
	@$(MAKE) --no-print-directory -s all
	@$(BUILD)/denytrace demo

# The README's picture: the timeline of phase 1 of a real demo run (the
# intermittent one), as `denytrace report --format svg` draws it.
DEMO_PICTURE_RUN := /tmp/denytrace-demo-picture
demo-picture: all
	@rm -rf $(DEMO_PICTURE_RUN)
	@$(BUILD)/denytrace demo --phase 1 --out $(DEMO_PICTURE_RUN) >/dev/null
	@mkdir -p docs
	$(BUILD)/denytrace report --format svg $(DEMO_PICTURE_RUN)/phase1/workspace/denytrace.ring \
		> docs/demo-timeline.svg
	@rm -rf $(DEMO_PICTURE_RUN)

# make bench's floor: the probe with its record left out (DT_BENCH_FLOOR,
# preload/record.c), to measure beside it what a refusal costs before
# anything is recorded. Never installed.
$(BUILD)/bench-floor/libdenytrace.so: $(PROBE_SRC) $(PROBE_HDR) Makefile
	@mkdir -p $(@D)
	$(CC) $(PROBE_FLAGS) $(CFLAGS) -DDT_BENCH_FLOOR=1 -shared $(PROBE_LDFLAGS) \
		-o $@ $(PROBE_SRC) $(PROBE_LIBS)

bench: all helpers $(BUILD)/bench-floor/libdenytrace.so
	@./scripts/bench.sh $(BUILD)

# The CLI and the unit suites under AddressSanitizer and UBSan (the probe
# itself cannot carry ASan into other programs' processes).
test-asan:
	$(MAKE) --no-print-directory BUILD=build-asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		build-asan/denytrace $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ./tests/run-tests.sh build-asan --unit-only

# man/denytrace.1's generated regions (causes, exit statuses, options)
# come from the CLI's own tables through man/mangen.c.
$(BUILD)/mangen: man/mangen.c $(CLI_LIB) $(CLI_HDR) Makefile
	@mkdir -p $(@D)
	$(CC) $(CLI_FLAGS) $(CFLAGS) -o $@ man/mangen.c $(CLI_LIB) $(CLI_LIBS)
man: $(BUILD)/mangen
	$(BUILD)/mangen man/denytrace.1 > $(BUILD)/denytrace.1.new
	mv $(BUILD)/denytrace.1.new man/denytrace.1

lint: $(BUILD)/mangen
	@$(BUILD)/mangen man/denytrace.1 | cmp -s - man/denytrace.1 || \
		{ echo "man/denytrace.1 is stale: its generated regions differ from the tables; run make man"; exit 1; }
	@clang-format --dry-run -Werror $(FORMAT_SRC) || \
		{ echo "C files differ from .clang-format: run make format"; exit 1; }
	PYTHONPYCACHEPREFIX=$(BUILD)/pycache python3 -m py_compile $(DEMO_PY)
	@! grep -n 'TestSuite(' tests/integration/*.c | grep -v '\.timeout' || \
		{ echo "an integration suite above has no .timeout: a hang would stall the run"; exit 1; }
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --suppress=missingIncludeSystem -D__x86_64__ \
		-Ipreload $(TRACER_INC) preload tracer

# libFuzzer targets: tests/fuzz/fuzz_NAME.c, whose "// fuzz-sources:" line
# names what it links, seeded from tests/fuzz/corpus/NAME/. New inputs go
# to a scratch directory, never into the committed corpus.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS := $(patsubst tests/fuzz/fuzz_%.c,build-fuzz/fuzz_%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 300
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(CLI_SRC) $(CLI_HDR) $(PROBE_HDR)
	@mkdir -p $(@D)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
		-Ipreload $(TRACER_INC) -o $@ $< $(shell sed -n 's|^// fuzz-sources: ||p' $<)

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do n=$${f#build-fuzz/fuzz_}; mkdir -p build-fuzz/corpus-$$n; \
		echo "== fuzz $$n for $(FUZZ_SECONDS) s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build-fuzz/ \
			build-fuzz/corpus-$$n tests/fuzz/corpus/$$n 2>&1 | grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' \
			|| true; test -z "$$(ls build-fuzz/crash-* build-fuzz/leak-* build-fuzz/timeout-* 2>/dev/null)" \
			|| { echo "fuzz $$n: finding saved in build-fuzz/"; exit 1; }; done

# Part of make test: each fuzzer for a few seconds (a minute or less in all).
fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=15

# Every C file, in the style of .clang-format; make lint checks it.
FORMAT_SRC := $(wildcard preload/*.c preload/*.h tracer/*.c tracer/*/*.c tracer/*/*.h tests/*.c tests/*.h \
	tests/*/*.c tests/helpers/lib/*.[ch] man/*.c)
format:
	clang-format -i $(FORMAT_SRC)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PROBEDIR) $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/doc/denytrace
	install -m 0755 $(BUILD)/denytrace $(DESTDIR)$(PREFIX)/bin/denytrace
	install -m 0644 $(BUILD)/libdenytrace.so $(DESTDIR)$(PROBEDIR)/libdenytrace.so
	install -m 0644 man/denytrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/denytrace.1
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
	$(BUILD)/denytrace completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/denytrace
	$(BUILD)/denytrace completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_denytrace
	install -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/denytrace/README.md

# The Debian package, build/denytrace_VERSION_ARCH.deb (debian/: control,
# changelog, copyright): the probe in /usr/lib/MULTIARCH/denytrace, the
# man page, the completions. make test-deb lints it and installs it into a
# clean Debian tree.
deb: all
	@./scripts/make-deb.sh $(BUILD) $(MULTIARCH)
# SUITE=trixie: the same in a Debian 13 tree, whose Python 3.13 the
# demo's findings must name lines of (scripts/test-deb.sh).
test-deb: deb
	@./scripts/test-deb.sh $$(ls -t $(BUILD)/denytrace_*.deb | head -n1) $(SUITE)

# The README's two commands on Debian 13 (or 12), in a debootstrap tree
# cached under /var/cache/denytrace (scripts/test-debian.sh).
test-debian13:
	@./scripts/test-debian.sh trixie
test-debian12:
	@./scripts/test-debian.sh bookworm

# The probe, the CLI and the unit suites cross-built for aarch64 into
# build-aarch64, and the probe run under qemu-user: its records, its
# stacks, and rings read across the two architectures
# (scripts/cross-aarch64.sh; install-deps.sh --aarch64 installs what it needs).
cross-aarch64:
	@./scripts/cross-aarch64.sh build-aarch64

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/denytrace $(DESTDIR)$(PROBEDIR)/libdenytrace.so \
		$(DESTDIR)$(PREFIX)/share/man/man1/denytrace.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/denytrace \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_denytrace \
		$(DESTDIR)$(PREFIX)/share/doc/denytrace/README.md
	-rmdir $(DESTDIR)$(PROBEDIR) $(DESTDIR)$(PREFIX)/share/doc/denytrace

clean:
	rm -rf build build-asan build-fuzz
