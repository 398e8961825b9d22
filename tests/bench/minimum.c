/* SPDX-License-Identifier: MIT */
/*
 * bench_minimum: loads tests/bench/minimum.bpf.c, attaches it to FUNC of
 * BINARY, runs COMMAND, drains the ring buffer while it runs, and prints
 * the program's kernel run statistics to stderr in gotrace-record's
 * GOTRACE_BPF_STATS form ("bpf_stats: N runs, T ns, T/N ns per run"), so
 * that tests/bench/capture_bench.py reads both alike. COMMAND's stdout is
 * passed through.
 *   bench_minimum BPF_OBJECT BINARY FUNC GOID_OFF [PARTS] -- COMMAND...
 * PARTS: the program's parts to run, the sum of 1 (bpf_ktime_get_ns()),
 * 2 (the goid read) and 4 (the record); 7, all, by default.
 * Exit status: COMMAND's, or 2 when the program cannot be loaded or
 * attached (with the reason).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(unsigned long long *)ctx;
	return 0;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "bench_minimum: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 2;
}

/* Runs argv to its end while draining rb; returns its exit status. */
static int run_draining(char **argv, struct ring_buffer *rb)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return fail("fork", errno);
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "bench_minimum: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* the program asks for no wakeup: drained every millisecond */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		ring_buffer__consume(rb);
		usleep(1000);
	}
	ring_buffer__consume(rb);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct bpf_prog_info info;
	unsigned long long records = 0;
	uint32_t len = sizeof(info);
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	struct ring_buffer *rb;
	int err, rc, cmd = 6;
	uint32_t parts = 7;

	if (argc > 7 && strcmp(argv[5], "--"))
		parts = (uint32_t)atoi(argv[5]), cmd = 7;
	if (argc <= cmd || strcmp(argv[cmd - 1], "--") || parts < 1 || parts > 7)
		return fprintf(stderr, "usage: bench_minimum BPF_OBJECT BINARY FUNC GOID_OFF [PARTS 1-7] -- COMMAND...\n"), 2;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return fail(argv[1], errno);
	{
		struct bpf_map *ro = bpf_object__find_map_by_name(obj, ".rodata");
		size_t sz = 0;
		/* minimum.bpf.c's cfg: { __s32 goid_off; __u32 parts; } */
		int32_t *cfg = ro ? (int32_t *)bpf_map__initial_value(ro, &sz) : NULL;

		if (!cfg || sz < 2 * sizeof(*cfg))
			return fail("no cfg in the object's .rodata", EINVAL);
		cfg[0] = atoi(argv[4]);
		cfg[1] = (int32_t)parts;
	}
	err = bpf_object__load(obj);
	if (err)
		return fail("load", err);
	prog = bpf_object__find_program_by_name(obj, "minimum_probe");
	uo.func_name = argv[3];
	link = bpf_program__attach_uprobe_opts(prog, -1, argv[2], 0, &uo);
	if (!link)
		return fail(argv[3], errno);
	rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "minimum_events"),
			      count_record, &records, NULL);
	if (!rb)
		return fail("ring buffer", errno);
	rc = run_draining(argv + cmd, rb);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return fail("bpf_obj_get_info_by_fd", errno);
	fprintf(stderr, "bench_minimum: bpf_stats: %llu runs, %llu ns, %.1f ns per run (%llu records)\n",
		(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
		info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0, records);
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return rc;
}
