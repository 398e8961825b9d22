#!/usr/bin/python3
"""Median wall time of a command, in ns, over RUNS runs.

    walltime.py RUNS CMD [ARG...]

The command is started with posix_spawn and waited for directly (output to
/dev/null), so that the figure holds the command's own start-up and work and
little of the harness's. Exits non-zero when a run fails.
"""
import os
import statistics
import sys
import time


def main():
    runs = int(sys.argv[1])
    cmd = sys.argv[2:]
    devnull = os.open(os.devnull, os.O_WRONLY)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        pid = os.posix_spawnp(cmd[0], cmd, os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                            (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        times.append(time.perf_counter_ns() - t0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"walltime: {' '.join(cmd)} failed ({status})")
    print(int(statistics.median(times)))


if __name__ == "__main__":
    main()
