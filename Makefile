# gotrace: build, test, demo, bench, install.
# Every target that needs packages runs `deps` first; nothing is downloaded.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PYTHON   ?= /usr/bin/python3
B        := build

DEPS_PKGS := clang llvm bpftool libbpf-dev libelf-dev libdw-dev libzstd-dev \
	libcbor-dev libcriterion-dev libzydis-dev libpcre2-dev pkg-config \
	golang-go gccgo python3-pytest python3-cbor2 python3-zstandard zstd \
	libclang-rt-14-dev caddy age binutils bpftrace linux-perf util-linux man-db

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	    -Iformat -Ibpf -Irecord -Ireport -I$(B) -MMD -MP
LDLIBS_FORMAT := -lcbor -lzstd -pthread
LDLIBS_RECORD := -lbpf -lelf -ldw -lZydis $(LDLIBS_FORMAT)
LDLIBS_REPORT := -lpcre2-8 $(LDLIBS_FORMAT) -lm

# libgtr: format/ and the one hash map of lib/ it stands on
FORMAT_SRCS := $(wildcard format/*.c) lib/map.c
RECORD_SRCS := $(filter-out record/main.c,$(wildcard record/*.c))
REPORT_SRCS := $(filter-out report/main.c,$(wildcard report/*.c))
FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(B)/%.o)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(B)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(B)/%.o)
# lib/: helpers under every part (UTF-8, JSON writer, buffers, allocation)
LIB_OBJS    := $(patsubst %.c,$(B)/%.o,$(filter-out lib/map.c,$(wildcard lib/*.c)))
RECORD_OBJS += $(LIB_OBJS)
REPORT_OBJS += $(LIB_OBJS)
CFLAGS      += -Ilib
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

DEPS_STAMP := $(B)/.deps-ok

.PHONY: all deps test unit e2e demo bench fuzz fuzz-short install clean support-table

all: gotrace-record gotrace-report

# Installs what is missing (idempotent). Run by the other targets once per
# build tree; `make deps` always checks again.
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "gotrace: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "gotrace: run 'make deps' as root to install them" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }; \
	fi
	@mkdir -p $(B) && touch $(DEPS_STAMP)

$(DEPS_STAMP):
	@$(MAKE) --no-print-directory deps

# ---- BPF program, compiled once and embedded as a skeleton
# libbpf's target architecture (bpf_tracing.h: x86, arm64...), from the
# build host's; vmlinux.h comes from the same host's BTF.
BPF_ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' -e 's/aarch64/arm64/')
$(B)/vmlinux.h: | $(DEPS_STAMP)
	@mkdir -p $(B)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/gotrace.bpf.o: bpf/gotrace.bpf.c bpf/gotrace.h $(B)/vmlinux.h
	$(CLANG) -O2 -g -Wall -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(B) -Ibpf -c $< -o $@

$(B)/gotrace.skel.h: $(B)/gotrace.bpf.o
	llvm-strip -g $< -o $(B)/gotrace.bpf.stripped.o
	$(BPFTOOL) gen skeleton $(B)/gotrace.bpf.stripped.o name gotrace_bpf > $@.tmp && mv $@.tmp $@

# ---- C objects
$(B)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/record/capture.o: $(B)/gotrace.skel.h
$(B)/record/main.o: $(B)/gotrace.skel.h

gotrace-record: $(B)/record/main.o $(RECORD_OBJS) $(FORMAT_OBJS)
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_RECORD)

gotrace-report: $(B)/report/main.o $(REPORT_OBJS) $(FORMAT_OBJS)
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_REPORT)

# ---- tests
$(B)/tests/%: tests/unit/%.c $(RECORD_OBJS) $(REPORT_OBJS) $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) -lcriterion $(LDLIBS_RECORD) $(LDLIBS_REPORT)

# Go builds of the tests and the demo keep their cache, and a toolchain
# fetched through GOTOOLCHAIN, under build/.
GOENV := GOPATH=$(CURDIR)/$(B)/gopath GOCACHE=$(CURDIR)/$(B)/gocache

# test_gobin builds its fixtures with each Go toolchain of tests/toolchains.
unit: $(UNIT_BINS)
	@set -e; for t in $(filter-out $(B)/tests/test_gobin,$(UNIT_BINS)); do \
	  echo "== $$t"; $$t --jobs 1 --short-filename; done
	@set -e; for tc in $$(tests/gocmd names); do \
	  go=$$($(GOENV) tests/gocmd $$tc); echo "== $(B)/tests/test_gobin with $$tc ($$go)"; \
	  $(GOENV) GOTRACE_GO="$$go" $(B)/tests/test_gobin --jobs 1 --short-filename; done

e2e: all
	$(PYTHON) -m pytest -v -rs -p no:cacheprovider --junitxml=$(B)/e2e.xml tests/e2e

# spec/SUPPORT.md from the results of the last `make e2e`
support-table:
	$(PYTHON) tests/support_table.py $(B)/e2e.xml > spec/SUPPORT.md

# ---- fuzzing the reader (libFuzzer, ASan, UBSan); new inputs go to
# build/fuzz/new, never into the repository's corpus
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=gnu11 -D_GNU_SOURCE -Iformat -Ilib
$(B)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c $(FORMAT_SRCS) $(wildcard format/*.h) | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz/new
	$(CLANG) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_reader.c $(FORMAT_SRCS) $(LDLIBS_FORMAT)

fuzz-short: $(B)/fuzz/fuzz_reader
	$(B)/fuzz/fuzz_reader -runs=20000 -max_len=65536 -rss_limit_mb=2048 -timeout=10 $(B)/fuzz/new tests/fuzz/corpus

fuzz: $(B)/fuzz/fuzz_reader
	$(B)/fuzz/fuzz_reader -max_total_time=$${FUZZ_SECONDS:-600} -max_len=65536 -rss_limit_mb=2048 -timeout=10 $(B)/fuzz/new tests/fuzz/corpus

test: all unit fuzz-short e2e

demo: all
	@sh examples/demo.sh

# Benchmarks print figures; nothing here is a pass/fail timing assertion.
$(B)/report_bench: tests/bench/report_bench.c tests/bench/report_gen.c $(FORMAT_OBJS)
	$(CC) $(CFLAGS) -Itests/bench -o $@ tests/bench/report_bench.c $(FORMAT_OBJS) $(LDLIBS_FORMAT)

$(B)/format_bench: tests/bench/format_bench.c $(FORMAT_OBJS)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS_FORMAT)

bench: all $(B)/report_bench $(B)/format_bench
	$(B)/format_bench
	tests/bench/format_perf.sh 300000
	$(PYTHON) tests/bench/capture_bench.py
	$(PYTHON) tests/bench/record_bench.py
	$(B)/report_bench ./gotrace-report 1000000
	tests/bench/report_perf.sh 1000000

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 gotrace-record gotrace-report $(DESTDIR)$(PREFIX)/bin/
	install -D -m 0644 man/gotrace-report.1 $(DESTDIR)$(PREFIX)/share/man/man1/gotrace-report.1
	install -D -m 0644 man/gotrace-record.1 $(DESTDIR)$(PREFIX)/share/man/man1/gotrace-record.1

clean:
	rm -rf $(B) gotrace-record gotrace-report

-include $(shell find $(B) -name '*.d' 2>/dev/null)
