"""Users: how many at once is what sizes a server (``concurrent``). "40 users" (``_users``) is
read as 40 at once unless a number says how many at a time ("300 users, peak 25 concurrent": 25);
daily, monthly or total users (``_users_total``) are used only when nothing else counts users:
"200 daily users but maybe 10 at a time" is 10 at once; "20k DAU" alone is a day's traffic, not
a concurrency (as 20,000 at once it had sized 192 H100s): the answer is how many sequences fit,
and the reply asks for the peak. Numbers not used are said back."""

from __future__ import annotations

from typing import Any

from service.parser.scan import Scan
from service.parser.token_counts import written_as
from service.parser.types import Finding


def user_counts(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    """Apply the reading above to ``ordered`` in place; return what stays unused."""
    users = [int(u) for u in ordered.pop("_users", []) if isinstance(u, int | float)]
    totals = [t for t in ordered.pop("_users_total", []) if isinstance(t, int | float)]
    at_once = ordered.get("concurrent")
    if at_once:
        unused = [] if not users or users[0] in at_once else written_as(scan, "_users")
        return unused + (written_as(scan, "_users_total") if totals else [])
    if users:
        ordered["concurrent"] = users
        return written_as(scan, "_users_total") if totals else []
    if not totals:
        return []
    notes.append(f"{int(totals[0]):,} users over a day or in all is traffic, not how many at once: "
                 "sized for how many sequences the GPUs hold; say the peak at a time "
                 "(e.g. `peak 50 concurrent`)")
    return written_as(scan, "_users_total")
