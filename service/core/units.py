"""Byte units. Inside the engine everything is an ``int`` of bytes; these only format.

GB is decimal (10^9 bytes), GiB is binary (2^30 bytes). Every printed figure names its unit.
"""

from __future__ import annotations

GB = 10**9
GiB = 2**30
MiB = 2**20


def gb(n_bytes: float) -> str:
    """'16.1 GB' (decimal gigabytes)."""
    return f"{n_bytes / GB:,.1f} GB"


def gib(n_bytes: float) -> str:
    """'15.0 GiB' (binary gibibytes)."""
    return f"{n_bytes / GiB:,.1f} GiB"


def gb_and_gib(n_bytes: float) -> str:
    """'16.1 GB (15.0 GiB)': for places where people compare with nvidia-smi (MiB/GiB)."""
    return f"{gb(n_bytes)} ({gib(n_bytes)})"


def human_count(n: float) -> str:
    """8030261248 -> '8.03B'; 124439808 -> '124.4M'."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= scale:
            digits = 2 if scale >= 1e9 else 1
            return f"{n / scale:.{digits}f}{suffix}"
    return str(int(n))


def counted(n: int, noun: str) -> str:
    """'1 sequence', '12 sequences', '1,024 GPUs': a count with its noun in the right number."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
