/* SPDX-License-Identifier: MIT */
/*
 * report_bench: events per second of gotrace-report on a million-event
 * file written with libgtr's writer (report_gen.c's "flat" trace: main.add
 * entry/return pairs with two integers and a string):
 *
 *   filter+count   gotrace-report --count -f 'goarg1 == 42 && name == "n2"'
 *   text           gotrace-report FILE > /dev/null
 *   jsonl          gotrace-report --format jsonl FILE > /dev/null
 *
 * USAGE: report_bench [GOTRACE_REPORT [EVENTS]]   (defaults ./gotrace-report 1000000)
 * Each is run 3 times; the best wall time counts.
 */
#define REPORT_GEN_LIB
#include "report_gen.c"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs argv with stdout to /dev/null (or into out[outlen]); seconds taken. */
static double run(char *const argv[], char *out, size_t outlen)
{
	int fd[2];
	const double t = now();

	if (pipe(fd))
		return -1;
	const pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (!out) {
			FILE *n = freopen("/dev/null", "w", stdout);
			(void)n;
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t got;
	char sink[65536];
	while ((got = read(fd[0], out ? out + n : sink, out ? outlen - 1 - n : sizeof(sink))) > 0)
		if (out)
			n += (size_t)got;
	if (out)
		out[n] = '\0';
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "report_bench: %s failed\n", argv[0]);
		exit(1);
	}
	return now() - t;
}

static double best(char *const argv[], char *out, size_t outlen)
{
	double b = 1e30;

	for (int i = 0; i < 3; i++) {
		const double t = run(argv, out, outlen);
		if (t < b)
			b = t;
	}
	return b;
}

int main(int argc, char **argv)
{
	char *report = argc > 1 ? argv[1] : (char *)"./gotrace-report";
	char *events = argc > 2 ? argv[2] : (char *)"1000000";
	char dir[] = "/tmp/gotrace-bench-XXXXXX";
	char path[64], out[64];

	if (!mkdtemp(dir)) {
		perror("report_bench: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/flat.gtr", dir);
	char *gen[] = { (char *)"report_gen", (char *)"flat", path, events, NULL };
	const double tg = now();
	if (report_gen_main(4, gen))
		return 1;
	const double n = strtod(events, NULL);
	printf("gotrace-report bench: %.0f events written in %.2fs\n", n, now() - tg);

	char *count[] = { report, (char *)"--no-progress", (char *)"--count", (char *)"-f",
			  (char *)"goarg1 == 42 && name == \"n2\"", path, NULL };
	const double tc = best(count, out, sizeof(out));
	printf("  filter+count: %8.2f M events/s (%.3fs, %ld matched)\n", n / tc / 1e6, tc,
	       strtol(out, NULL, 10));
	char *text[] = { report, (char *)"--no-progress", path, NULL };
	const double tt = best(text, NULL, 0);
	printf("  text output:  %8.2f M events/s (%.3fs)\n", n / tt / 1e6, tt);
	char *jsonl[] = { report, (char *)"--no-progress", (char *)"--format", (char *)"jsonl", path, NULL };
	const double tj = best(jsonl, NULL, 0);
	printf("  jsonl output: %8.2f M events/s (%.3fs)\n", n / tj / 1e6, tj);
	unlink(path);

	/* Report time against the number of probes, written all first or
	 * between event frames: the time per probe should stay flat. Up to
	 * 64,000 probes: the reader keeps at most 65,536 (GTR_MAX_PROBES) and
	 * counts a block of more as damaged. */
	static const unsigned long funcs[] = { 1000, 4000, 16000, 32000 };
	printf("gotrace-report bench: time against probes (each called once; "
	       "stats, best of 3; the reader keeps at most 65,536)\n");
	for (int m = 0; m < 2; m++) {
		for (size_t f = 0; f < sizeof(funcs) / sizeof(funcs[0]); f++) {
			const unsigned long k = funcs[f];
			char num[32];

			snprintf(num, sizeof(num), "%lu", k);
			char *pgen[] = { (char *)"report_gen", (char *)(m ? "interleaved" : "upfront"),
					 path, num, NULL };
			if (report_gen_main(4, pgen))
				return 1;
			char *st[] = { report, (char *)"stats", (char *)"--no-progress", path, NULL };
			const double ts = best(st, NULL, 0);
			printf("  %-11s %6lu probes: %7.3fs, %6.2f us per probe\n",
			       m ? "interleaved" : "upfront", 2 * k, ts, ts / (2.0 * k) * 1e6);
			unlink(path);
		}
	}
	rmdir(dir);
	return 0;
}
