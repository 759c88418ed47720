"""CPU time and resident memory of a process and everything it started, read from /proc.

CPU per request is the server's own CPU time (user + system, every thread, and every live
child process: a worker pool's processes count), divided by the requests it answered. Unlike
wall time it does not grow when the machine is busy with something else, so ratios between
two kinds of request measured on the same server stay steady on a shared machine.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """The process and every live process below it."""
    out = [pid]
    i = 0
    while i < len(out):
        for task in (PROC / str(out[i]) / "task").glob("*/children"):
            try:
                out += [int(p) for p in task.read_text().split()]
            except OSError:
                continue
        i += 1
    return out


def _cpu_ticks(pid: int) -> int:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return 0
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def cpu_seconds(pid: int, children: bool = True) -> float:
    """User + system CPU seconds of the process (every thread) and, with ``children``, of its
    live descendants."""
    pids = descendants(pid) if children else [pid]
    return sum(_cpu_ticks(p) for p in pids) / TICKS


def _rss_bytes(pid: int) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def rss_bytes(pid: int) -> int:
    """Resident memory of the process and its live descendants."""
    return sum(_rss_bytes(p) for p in descendants(pid))
