/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the whole reading path of gotrace-report: the
 * reader (format/), pairing, filters, stats and every output printer,
 * through report_run() as `gotrace-report print|stats` calls it.
 * Built with clang -fsanitize=fuzzer,address,undefined (Makefile:
 * `make fuzz`); run with -close_fd_mask=3, as the report writes its
 * output to stdout and its warnings to stderr.
 *
 * The first two input bytes pick the options (command, --format, --calls,
 * -t, --count, a filter, --by, --since, --limit, pairing limits); the rest
 * is the .gtr file, written to a file the report reads by path (open_input()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output.h"
#include "run.h"

/* Filters that read each kind of field, and --by fields. */
static const char *const filters[] = {
	"latency > 1us",
	"goarg1 == 1 || len(goarg2) > 3",
	"glob(func, \"main.*\") && comm != \"x\"",
	"name =~ \"a.*b\" || binary == \"/x\"",
	"pid > 0 && goid != 7 && kind == \"return\"",
	"goret1 >= 0 || ts > 1ms",
	"cpu == 0 || tid < 100",
	"!(n == 2) && ts < 10s",
};
static const char *const bys[] = { "pid", "goid", "comm", "goarg1", "name", "tid" };

/*
 * The reader allocates a window of 1 MiB or more per file: ASan would clear
 * the shadow of each such block by mapping it anew, a third of the time of
 * a small input; memset is cheaper. Detection is the same. ASAN_OPTIONS
 * still overrides it.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "clear_shadow_mmap_threshold=1073741824";
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* in case -close_fd_mask was not given: the report's output */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

/*
 * The file the report reads, by path: one on tmpfs (/dev/shm), removed at
 * exit, else a memfd through /proc/self/fd. The report stats the path
 * three times and opens it twice a run: through /proc each of those looks
 * up the process and its descriptor, about 2.5 times the cost of a tmpfs
 * path (70 us against 26 us for a stat, an open and a close, on a busy
 * 2-core machine).
 */
static char path[64];
static int fd = -1;

static void remove_input(void)
{
	unlink(path);
}

/*
 * Removes the input files of fuzzer processes that are gone without
 * their exit handlers (a crash, libFuzzer's minimising and merging
 * children): a file whose pid no longer runs.
 */
static void remove_stale_inputs(void)
{
	static const char prefix[] = "gotrace-fuzz-report.";
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1))
			continue;
		pid = strtol(e->d_name + sizeof(prefix) - 1, &end, 10);
		if (!*end && pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
}

static void open_input(void)
{
	remove_stale_inputs();
	snprintf(path, sizeof(path), "/dev/shm/gotrace-fuzz-report.%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		atexit(remove_input);
		return;
	}
	fd = memfd_create("gtr", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fd < 0)
		open_input();
	if (size < 2)
		return 0;
	const uint8_t a = data[0], b = data[1];
	if (pwrite(fd, data + 2, size - 2, 0) != (ssize_t)(size - 2) ||
	    ftruncate(fd, (off_t)(size - 2)))
		return 0;

	static const struct output_format *const fmts[] = {
		&out_text, &out_jsonl, &out_csv, &out_chrome, &out_folded,
	};
	struct report_opts o = {
		.path = path, .name = "fuzz.gtr", .hist = true, .progress = -1,
		.format = fmts[a % 5],
	};
	if ((a >> 3) % 8 == 7) {
		o.stats = true;
		o.hist = b & 1;
		if (b & 2)
			o.by = bys[(b >> 2) % 6];
	} else {
		o.calls = (a >> 3) & 1;
		o.time_rel = (a >> 4) & 1;
		o.count = ((a >> 3) % 8) == 6;
	}
	if (a & 0x40)
		o.filters[o.nfilters++] = filters[(b >> 5) % 8];
	if (a & 0x80) {
		o.since = "+1us";
		o.limit = 1 + (b & 0xf);
	}
	if ((b & 0x18) == 0x18) {
		o.lim.max_depth = 2;
		o.lim.max_goroutines = 2;
		o.lim.keep_str = 4;
	}
	(void)report_run(&o);
	fflush(stdout);
	return 0;
}
