"""Users: how many at once is what sizes a server (``concurrent``); daily, monthly or total users
(``_users_total``) are not, and are used only when nothing says how many at a time: "200 daily
users but maybe 10 at a time" is 10 at once; "200 daily users" alone is read as 200 at once, an
upper bound, and said so."""

from __future__ import annotations

from typing import Any

from service.parser.scan import Scan
from service.parser.token_counts import written_as
from service.parser.types import Finding


def user_counts(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    """Apply the reading above to ``ordered`` in place; return what stays unused."""
    totals = [t for t in ordered.pop("_users_total", []) if isinstance(t, int | float)]
    if not totals:
        return []
    if ordered.get("concurrent"):
        return written_as(scan, "_users_total")
    ordered["concurrent"] = [int(totals[0])]
    notes.append(f"{int(totals[0]):,} users in all read as {int(totals[0]):,} at once, an upper "
                 "bound: say how many at a time (e.g. `20 concurrent`)")
    return []
