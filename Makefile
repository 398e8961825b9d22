# gotrace: build, test, demo, bench, install; asan and lint for developers.
# Every target that needs packages runs `deps` first; nothing is downloaded.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PYTHON   ?= /usr/bin/python3
B        := build
# where gotrace-record and gotrace-report go: the root, or build/asan/
TOOLS    ?=

DEPS_PKGS := clang llvm bpftool libbpf-dev libelf-dev libdw-dev libzstd-dev \
	libcbor-dev libsodium-dev libcriterion-dev libzydis-dev libpcre2-dev zlib1g-dev pkg-config \
	golang-go gccgo python3-pytest python3-cbor2 python3-zstandard python3-scipy zstd \
	python3-protobuf protobuf-compiler \
	libclang-rt-14-dev caddy age binutils bpftrace linux-perf util-linux man-db

# CFLAGS, CPPFLAGS and LDFLAGS are the user's (make CFLAGS=-O0); the flags
# the build needs are kept apart, in GT_CFLAGS, and always given first.
CFLAGS   ?= -O2 -g
GT_INCLUDES = -Iformat -Ibpf -Ilang -Irecord -Ireport -Ilib -I$(B)
GT_CFLAGS = -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	    $(GT_INCLUDES) -MMD -MP
ALL_CFLAGS = $(GT_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LDLIBS_FORMAT := -lcbor -lzstd -lsodium -pthread
LDLIBS_RECORD := -lbpf -lelf -ldw -lZydis $(LDLIBS_FORMAT)
LDLIBS_REPORT := -lpcre2-8 $(LDLIBS_FORMAT) -lz -lm

# libgtr: format/ and the helpers of lib/ it stands on (the hash map, UTF-8)
LIBGTR_LIB_SRCS := lib/map.c lib/utf8.c
FORMAT_SRCS := $(wildcard format/*.c) $(LIBGTR_LIB_SRCS)
# lang/: the predicate language (spec/FILTER.md) both programs parse
LANG_SRCS   := $(wildcard lang/*.c)
RECORD_SRCS := $(filter-out record/main.c,$(wildcard record/*.c))
REPORT_SRCS := $(filter-out report/main.c,$(wildcard report/*.c))
FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(B)/%.o)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(B)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(B)/%.o)
# lib/: the other helpers under every part (JSON writer, buffers, allocation)
LIB_OBJS    := $(patsubst %.c,$(B)/%.o,$(filter-out $(LIBGTR_LIB_SRCS),$(wildcard lib/*.c)))
LANG_OBJS   := $(LANG_SRCS:%.c=$(B)/%.o)
RECORD_OBJS += $(LANG_OBJS) $(LIB_OBJS)
REPORT_OBJS += $(LANG_OBJS) $(LIB_OBJS)
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

# Packages are the machine's: one stamp per machine's build/ serves every
# build tree (build/asan too), so they are checked once, not on each build.
DEPS_STAMP := build/.deps-ok
# Extra packages of the developer targets that `make test` does not run.
LINT_PKGS  := cppcheck pmccabe
ASAN_PKGS  := libasan8 libubsan1

.PHONY: all deps test unit e2e demo bench fuzz fuzz-short fuzz-runs install clean support-table \
	asan asan-run lint

all: $(TOOLS)gotrace-record $(TOOLS)gotrace-report $(B)/libgtr.a

# $(call install_pkgs,PACKAGES,TARGET): installs those of PACKAGES that are
# not installed (one dpkg-query for all; idempotent).
define install_pkgs
	@pkgs="$(strip $(1))"; \
	ok=" $$(dpkg-query -W -f='$${Package}:$${db:Status-Abbrev} ' $$pkgs 2>/dev/null) "; \
	missing=""; for p in $$pkgs; do \
	  case "$$ok" in *" $$p:ii "*) ;; *) missing="$$missing $$p";; esac; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "gotrace: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "gotrace: run 'make $(2)' as root to install them" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }; \
	fi
endef

# Installs what is missing. Run by the other targets once (DEPS_STAMP);
# `make deps` always checks again.
deps:
	$(call install_pkgs,$(DEPS_PKGS),deps)
	@mkdir -p build && touch $(DEPS_STAMP)

$(DEPS_STAMP):
	@$(MAKE) --no-print-directory deps

build/.lint-deps-ok: | $(DEPS_STAMP)
	$(call install_pkgs,$(LINT_PKGS),lint)
	@touch $@

build/.asan-deps-ok: | $(DEPS_STAMP)
	$(call install_pkgs,$(ASAN_PKGS),asan)
	@touch $@

# ---- BPF program, compiled once and embedded as a skeleton
# libbpf's target architecture (bpf_tracing.h: x86, arm64...), from the
# build host's; vmlinux.h comes from the same host's BTF.
BPF_ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' -e 's/aarch64/arm64/')
$(B)/vmlinux.h: | $(DEPS_STAMP)
	@mkdir -p $(B)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/gotrace.bpf.o: bpf/gotrace.bpf.c bpf/calls.bpf.h bpf/process.bpf.h bpf/gotrace.h $(B)/vmlinux.h
	$(CLANG) -O2 -g -Wall -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(B) -Ibpf -c $< -o $@

$(B)/gotrace.skel.h: $(B)/gotrace.bpf.o
	llvm-strip -g $< -o $(B)/gotrace.bpf.stripped.o
	$(BPFTOOL) gen skeleton $(B)/gotrace.bpf.stripped.o name gotrace_bpf > $@.tmp && mv $@.tmp $@

# ---- C objects
$(B)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(B)/record/capture.o: $(B)/gotrace.skel.h
$(B)/record/main.o: $(B)/gotrace.skel.h

$(TOOLS)gotrace-record: $(B)/record/main.o $(RECORD_OBJS) $(FORMAT_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_RECORD)

$(TOOLS)gotrace-report: $(B)/report/main.o $(REPORT_OBJS) $(FORMAT_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_REPORT)

# libgtr in one archive, for the C programs the end-to-end tests build
# (tests/e2e/conftest.py: build_with_libgtr)
$(B)/libgtr.a: $(FORMAT_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# ---- tests
$(B)/tests/%: tests/unit/%.c $(RECORD_OBJS) $(REPORT_OBJS) $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) -lcriterion $(LDLIBS_RECORD) $(LDLIBS_REPORT)

# Go builds of the tests and the demo keep their cache, and a toolchain
# fetched through GOTOOLCHAIN, under build/.
GOENV := GOPATH=$(CURDIR)/$(B)/gopath GOCACHE=$(CURDIR)/$(B)/gocache

# the tests of record/gobin (test_gobin_*, their fixtures in
# tests/unit/gobin_fixture.h) and test_typedesc build their fixtures with
# each Go toolchain of tests/toolchains.
GO_UNIT_BINS := $(filter $(B)/tests/test_gobin_%,$(UNIT_BINS)) $(B)/tests/test_typedesc
unit: $(UNIT_BINS)
	@set -e; for t in $(filter-out $(GO_UNIT_BINS),$(UNIT_BINS)); do \
	  echo "== $$t"; $$t --jobs 1 --short-filename; done
	@for tc in $$(tests/gocmd names gccgo); do echo "== $(B)/tests/test_gobin_* skip $$tc:" \
	  "their fixtures are gc builds (GOARCH=386 and arm64, -ldflags, external linking);" \
	  "every run checks a gccgo build of its own (args_gccgo)"; done
	@set -e; for tc in $$(tests/gocmd names gc); do \
	  go=$$($(GOENV) tests/gocmd $$tc); for t in $(GO_UNIT_BINS); do \
	  echo "== $$t with $$tc ($$go)"; \
	  $(GOENV) GOTRACE_GO="$$go" $$t --jobs 1 --short-filename; done; done

e2e: all
	$(PYTHON) -m pytest -v -rs -p no:cacheprovider --junitxml=$(B)/e2e.xml tests/e2e

# spec/SUPPORT.md from the results of the last `make e2e`
support-table:
	$(PYTHON) tests/support_table.py $(B)/e2e.xml > spec/SUPPORT.md

# ---- fuzzing the reader (libFuzzer, ASan, UBSan); new inputs go to
# build/fuzz/new, never into the repository's corpus
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=gnu11 -D_GNU_SOURCE -Iformat -Ilib
$(B)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c $(FORMAT_SRCS) $(wildcard format/*.h) \
		$(LIBGTR_LIB_SRCS:.c=.h) | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz/new
	$(CLANG) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_reader.c $(FORMAT_SRCS) $(LDLIBS_FORMAT)

# the report's whole reading path, its filters, and gotrace-record's probe
# and predicate parsers; fuzz_gen writes valid files with many interleaved
# blocks of every kind (seeds in build/fuzz/seeds, never in the repository)
FUZZ_LIB_SRCS := $(filter-out $(LIBGTR_LIB_SRCS),$(wildcard lib/*.c))
FUZZ_REPORT_SRCS := $(REPORT_SRCS) $(LANG_SRCS) $(FUZZ_LIB_SRCS) $(FORMAT_SRCS)
FUZZ_REPORT_DEPS := $(FUZZ_REPORT_SRCS) $(wildcard format/*.h lang/*.h report/*.h lib/*.h)
$(B)/fuzz/fuzz_report: tests/fuzz/fuzz_report.c $(FUZZ_REPORT_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz/new-report
	$(CLANG) $(FUZZ_FLAGS) -Ilang -Ireport -o $@ $< $(FUZZ_REPORT_SRCS) $(LDLIBS_REPORT)
$(B)/fuzz/fuzz_filter: tests/fuzz/fuzz_filter.c $(FUZZ_REPORT_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz/new-filter
	$(CLANG) $(FUZZ_FLAGS) -Ilang -Ireport -o $@ $< $(FUZZ_REPORT_SRCS) $(LDLIBS_REPORT)
FUZZ_PROBE_SRCS := record/probe.c record/pred.c $(LANG_SRCS) lib/xalloc.c lib/buf.c lib/utf8.c
$(B)/fuzz/fuzz_probe: tests/fuzz/fuzz_probe.c $(FUZZ_PROBE_SRCS) record/probe.h record/pred.h \
		$(wildcard lang/*.h) | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz/new-probe
	$(CLANG) $(FUZZ_FLAGS) -Ilang -Irecord -Ibpf -o $@ $< $(FUZZ_PROBE_SRCS)
$(B)/fuzz/fuzz_gen: tests/fuzz/fuzz_gen.c $(FORMAT_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(FORMAT_OBJS) $(LDLIBS_FORMAT)
$(B)/fuzz/seeds/.done: $(B)/fuzz/fuzz_gen
	@rm -rf $(B)/fuzz/seeds && mkdir -p $(B)/fuzz/seeds
	$(B)/fuzz/fuzz_gen $(B)/fuzz/seeds 64 8192 && touch $@

FUZZ_TARGETS := $(addprefix $(B)/fuzz/,fuzz_reader fuzz_report fuzz_filter fuzz_probe)
FUZZ_LIMITS := -rss_limit_mb=2048 -timeout=10 -artifact_prefix=$(B)/fuzz/
FUZZ_OPTS := -max_len=65536 $(FUZZ_LIMITS)
# the report's cost grows with the events an input holds: seeds of 8 KiB
# and inputs of at most 16 KiB run it 7 times as often as seeds of 60 KiB
# in 64 KiB did, and reach more of it in the same time
FUZZ_REPORT_OPTS := -max_len=16384 -close_fd_mask=3 $(FUZZ_LIMITS)
# corpora: new inputs go into build/fuzz/new*, then the
# repository's corpus and the generated seeds
FUZZ_READ_CORPUS   := $(B)/fuzz/new tests/fuzz/corpus
FUZZ_REPORT_CORPUS := $(B)/fuzz/new-report tests/fuzz/corpus-report $(B)/fuzz/seeds
FUZZ_FILTER_CORPUS := $(B)/fuzz/new-filter tests/fuzz/corpus-filter
FUZZ_PROBE_CORPUS  := $(B)/fuzz/new-probe tests/fuzz/corpus-probe

# fuzz-short: a fixed number of runs of each target (about a minute in all);
# the report's run starts from the corpus and seeds only, so that it does
# not slow down as build/fuzz/new-report grows
fuzz-short: $(FUZZ_TARGETS) $(B)/fuzz/seeds/.done
	$(B)/fuzz/fuzz_reader -runs=20000 $(FUZZ_OPTS) $(FUZZ_READ_CORPUS)
	@rm -rf $(B)/fuzz/short-report && mkdir -p $(B)/fuzz/short-report
	$(B)/fuzz/fuzz_report -runs=5000 $(FUZZ_REPORT_OPTS) $(B)/fuzz/short-report \
	  $(filter-out $(B)/fuzz/new-report,$(FUZZ_REPORT_CORPUS))
	$(B)/fuzz/fuzz_filter -runs=20000 $(FUZZ_OPTS) $(FUZZ_FILTER_CORPUS)
	$(B)/fuzz/fuzz_probe -runs=20000 $(FUZZ_OPTS) $(FUZZ_PROBE_CORPUS)

# fuzz-runs: FUZZ_RUNS (default 10 million) runs of each target, one at a
# time at nice 19, fastest first, each logged in build/fuzz/TARGET.log; the
# reader's and the report's runs start from their committed corpus (and
# the seeds): the many large inputs earlier runs found would slow them
# several times
FUZZ_RUNS ?= 10000000
fuzz-runs: $(FUZZ_TARGETS) $(B)/fuzz/seeds/.done
	@mkdir -p $(B)/fuzz/new-reader-runs $(B)/fuzz/new-report-runs
	nice -n 19 $(B)/fuzz/fuzz_filter -runs=$(FUZZ_RUNS) $(FUZZ_OPTS) $(FUZZ_FILTER_CORPUS) > $(B)/fuzz/filter.log 2>&1
	nice -n 19 $(B)/fuzz/fuzz_probe -runs=$(FUZZ_RUNS) $(FUZZ_OPTS) $(FUZZ_PROBE_CORPUS) > $(B)/fuzz/probe.log 2>&1
	nice -n 19 $(B)/fuzz/fuzz_reader -runs=$(FUZZ_RUNS) $(FUZZ_OPTS) $(B)/fuzz/new-reader-runs \
	  tests/fuzz/corpus > $(B)/fuzz/reader.log 2>&1
	nice -n 19 $(B)/fuzz/fuzz_report -runs=$(FUZZ_RUNS) $(FUZZ_REPORT_OPTS) \
	  $(B)/fuzz/new-report-runs $(filter-out $(B)/fuzz/new-report,$(FUZZ_REPORT_CORPUS)) \
	  > $(B)/fuzz/report.log 2>&1

# fuzz: FUZZ_SECONDS (default 600) for each target, one after the other
fuzz: $(FUZZ_TARGETS) $(B)/fuzz/seeds/.done
	$(B)/fuzz/fuzz_reader -max_total_time=$${FUZZ_SECONDS:-600} $(FUZZ_OPTS) $(FUZZ_READ_CORPUS)
	$(B)/fuzz/fuzz_report -max_total_time=$${FUZZ_SECONDS:-600} $(FUZZ_REPORT_OPTS) $(FUZZ_REPORT_CORPUS)
	$(B)/fuzz/fuzz_filter -max_total_time=$${FUZZ_SECONDS:-600} $(FUZZ_OPTS) $(FUZZ_FILTER_CORPUS)
	$(B)/fuzz/fuzz_probe -max_total_time=$${FUZZ_SECONDS:-600} $(FUZZ_OPTS) $(FUZZ_PROBE_CORPUS)

test: all unit fuzz-short e2e

demo: all
	@sh examples/demo.sh

# Benchmarks print figures; nothing here is a pass/fail timing assertion.
$(B)/report_bench: tests/bench/report_bench.c tests/bench/report_gen.c $(FORMAT_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/bench -o $@ tests/bench/report_bench.c $(FORMAT_OBJS) $(LDLIBS_FORMAT)

$(B)/format_bench: tests/bench/format_bench.c $(FORMAT_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS_FORMAT)

# the capture bench's minimum program: a uprobe program of what every event needs
$(B)/minimum.bpf.o: tests/bench/minimum.bpf.c bpf/gotrace.h $(B)/vmlinux.h
	$(CLANG) -O2 -g -Wall -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(B) -Ibpf -c $< -o $@

$(B)/bench_minimum: tests/bench/minimum.c | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -lbpf -lelf

bench: all $(B)/report_bench $(B)/format_bench $(B)/minimum.bpf.o $(B)/bench_minimum
	$(B)/format_bench
	tests/bench/format_perf.sh 300000
	$(PYTHON) tests/bench/capture_bench.py
	$(PYTHON) tests/bench/record_bench.py
	$(PYTHON) tests/bench/live_bench.py
	$(B)/report_bench ./gotrace-report 1000000
	tests/bench/report_perf.sh 1000000
	tests/bench/diff_bench.sh 5000000
	tests/bench/perfetto_bench.sh 10000000

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 gotrace-record gotrace-report $(DESTDIR)$(PREFIX)/bin/
	install -D -m 0644 man/gotrace-report.1 $(DESTDIR)$(PREFIX)/share/man/man1/gotrace-report.1
	install -D -m 0644 man/gotrace-record.1 $(DESTDIR)$(PREFIX)/share/man/man1/gotrace-record.1

# ---- AddressSanitizer and UBSan: the tools and the unit tests built apart
# in build/asan/; every unit test, and the end-to-end tests that need no
# BPF, run against them (tests/e2e/conftest.py: GOTRACE_BIN_DIR, ...).
ASAN_B     := build/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
E2E_NO_BPF := tests/e2e/test_report_synthetic.py tests/e2e/test_report_unfinished_stacks.py \
	tests/e2e/test_format_python.py tests/e2e/test_errors.py tests/e2e/test_diff.py

asan: build/.asan-deps-ok
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(MAKE) --no-print-directory B=$(ASAN_B) TOOLS=$(ASAN_B)/ \
	  CFLAGS="$(CFLAGS) $(ASAN_FLAGS)" asan-run

# (run by `make asan`, inside the ASan build)
asan-run: all unit
	GOTRACE_BIN_DIR=$(B) GOTRACE_OBJ_DIR=$(B) GOTRACE_CFLAGS="$(ASAN_FLAGS)" \
	  $(PYTHON) -m pytest -q -rs -p no:cacheprovider -m "not bpf" $(E2E_NO_BPF)

# ---- static checks, each of which must find nothing: cppcheck (documented
# suppressions in tests/lint/), clang's analyzer (models of what libraries
# free in tests/lint/), and pmccabe (no function over complexity 40 or 120
# lines).
LINT_SRCS := $(sort $(wildcard lib/*.c) $(FORMAT_SRCS) $(LANG_SRCS) $(RECORD_SRCS) record/main.c \
	$(REPORT_SRCS) report/main.c)
LINT_HDRS := $(wildcard lib/*.h format/*.h lang/*.h record/*.h report/*.h bpf/gotrace.h)
MCCABE_MAX := 40
LINES_MAX  := 120

lint: build/.lint-deps-ok $(B)/gotrace.skel.h $(LINT_SRCS:%.c=$(B)/lint/%.analyzer)
	@echo "== cppcheck"
	@cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
	  -j2 -D__x86_64__ -D_GNU_SOURCE $(GT_INCLUDES) \
	  --library=tests/lint/libbpf.cfg --suppress-xml=tests/lint/cppcheck-suppressions.xml \
	  --template='{file}:{line}: {severity}: {message} [{id}]' $(LINT_SRCS)
	@echo "== clang --analyze"
	@cat $(filter %.analyzer,$^) | grep -E ': (warning|error|fatal error): ' | sort -u || true
	@n=$$(cat $(filter %.analyzer,$^) | grep -E ': (warning|error|fatal error): ' | sort -u | wc -l); \
	  echo "$$n finding(s)"; test $$n -eq 0
	@echo "== functions of McCabe complexity over $(MCCABE_MAX) or over $(LINES_MAX) lines (pmccabe)"
	@pmccabe $(LINT_SRCS) | awk '$$2 > $(MCCABE_MAX) || $$5 > $(LINES_MAX) \
	  { printf "%s: complexity %d, %d lines\n", $$6 " " $$7, $$2, $$5; n++ } \
	  END { printf "%d function(s)\n", n; exit n > 0 }'

# record/ is read with a model of what libbpf frees (tests/lint/analyzer_libbpf.h)
$(B)/lint/record/%.analyzer: ANALYZER_MODELS = -include tests/lint/analyzer_libbpf.h
$(B)/lint/%.analyzer: %.c $(LINT_HDRS) tests/lint/analyzer_libbpf.h | build/.lint-deps-ok $(B)/gotrace.skel.h
	@mkdir -p $(dir $@)
	@$(CLANG) --analyze -std=gnu11 -D_GNU_SOURCE $(GT_INCLUDES) $(ANALYZER_MODELS) \
	  -o /dev/null $< > $@.tmp 2>&1; mv $@.tmp $@

clean:
	rm -rf $(B) gotrace-record gotrace-report

# Header dependencies of this build tree's objects and programs.
-include $(wildcard $(patsubst %.o,%.d,$(FORMAT_OBJS) $(RECORD_OBJS) $(REPORT_OBJS) \
	$(B)/record/main.o $(B)/report/main.o) $(UNIT_BINS:=.d) $(B)/report_bench.d $(B)/format_bench.d)
