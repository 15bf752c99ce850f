#!/usr/bin/env python3
"""bench/startup.py - what a small input costs: gpumerge against `LC_ALL=C sort -n`
and cat on 3 and 1000 lines, timed paired and interleaved.

Each round runs every command once, in an order rotated from round to round, so
that a neighbour's load falls on all of them alike. Each command's line gives the
median of its wall times, their interquartile range and their range, and the
median (and interquartile range) over the rounds of its time divided by sort's in
the same round. A run is started with posix_spawn (vfork), so the timer's own
start costs little and the same for every command.

Usage: bench/startup.py [ROUNDS]   (default 200) environment: GPUMERGE (default
       ./gpumerge), CUDA_GPUMERGE (a CUDA build's program, timed beside it, e.g.
       build-cuda/gpumerge from `make BUILD=build-cuda PROG=build-cuda/gpumerge`),
       BEFORE (another gpumerge, e.g. an earlier release's, timed beside it)
"""
import datetime
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def run_once(argv, devnull):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
    os.waitpid(pid, 0)
    return (time.perf_counter_ns() - t0) / 1e6


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    os.environ["LC_ALL"] = "C"
    gm = os.path.abspath(os.environ.get("GPUMERGE", "./gpumerge"))
    progs = [("LC_ALL=C sort -n", [shutil.which("sort"), "-n"]),
             ("cat", [shutil.which("cat")]),
             ("gpumerge --device=cpu", [gm, "--device=cpu"]),
             ("gpumerge (auto)", [gm])]
    for var, name in (("CUDA_GPUMERGE", "CUDA build"), ("BEFORE", "before")):
        if os.environ.get(var):
            p = os.path.abspath(os.environ[var])
            progs += [(name + " --device=cpu", [p, "--device=cpu"]), (name + " (auto)", [p])]
    devnull = os.open(os.devnull, os.O_WRONLY)
    sort_version = subprocess.run(["sort", "--version"], capture_output=True,
                                  text=True).stdout.splitlines()[0]
    print(f"machine: {os.cpu_count()} cores; {rounds} rounds, paired and interleaved; "
          f"{sort_version}; {datetime.date.today()}")
    with tempfile.TemporaryDirectory(prefix="gpumerge-startup.") as d:
        lines = list(range(1, 1001))
        random.Random(1).shuffle(lines)
        inputs = {3: "3\n1\n2\n", 1000: "".join(f"{x}\n" for x in lines)}
        for size, text in inputs.items():
            path = os.path.join(d, str(size))
            with open(path, "w") as f:
                f.write(text)
            cmds = [(name, argv + [path]) for name, argv in progs]
            for _, argv in cmds:  # the page cache and the loader warmed
                run_once(argv, devnull), run_once(argv, devnull)
            times = [[0.0] * rounds for _ in cmds]
            for r in range(rounds):
                for k in range(len(cmds)):
                    i = (r + k) % len(cmds)
                    times[i][r] = run_once(cmds[i][1], devnull)
            print(f"\n{size} lines{'':19s} median ms        IQR ms       range ms   "
                  "time / sort's, same round: median (IQR)")
            for i, (name, _) in enumerate(cmds):
                lo, med, hi = quartiles(times[i])
                rlo, rmed, rhi = quartiles([a / b for a, b in zip(times[i], times[0])])
                print(f"{name:28s} {med:8.3f} {lo:7.3f}-{hi:<7.3f} {min(times[i]):6.3f}-"
                      f"{max(times[i]):<7.3f} {rmed:.2f} ({rlo:.2f}-{rhi:.2f})")


if __name__ == "__main__":
    main()
