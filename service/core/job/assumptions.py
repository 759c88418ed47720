"""Assumptions as data: which setting, the value used, whether the user stated it, why, and where
the value comes from. Each front end says them in its own words; nothing parses them again."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Origin = Literal["stated", "default", "derived"]
Value = str | int | float | bool


@dataclass(frozen=True, slots=True)
class Assumption:
    """One setting behind an answer.

    ``field``: a request field (``seq_len``) or an engine setting (``cuda_context_bytes``,
    ``plan.headroom``); ``origin``: ``stated`` (the user gave it), ``default`` (not stated: the
    usual value), ``derived`` (not stated: worked out from what was, e.g. fp16 on a GPU without
    bf16); ``why``: one short clause; ``source``: the document, code or measurement behind the
    value; ``minor``: true for settings that rarely change the answer (front ends may hide them).
    """

    field: str
    value: Value
    origin: Origin
    why: str = ""
    source: str = ""
    minor: bool = False


# Records are immutable: the same record is handed out again for the same arguments (``typed``:
# True, 1 and 1.0 stay three records), as every request repeats most of them.
@lru_cache(maxsize=4096, typed=True)
def stated(field: str, value: Value) -> Assumption:
    return Assumption(field, value, "stated")


@lru_cache(maxsize=1024, typed=True)
def default(field: str, value: Value, why: str, source: str = "",
            minor: bool = False) -> Assumption:
    return Assumption(field, value, "default", why, source, minor)


@lru_cache(maxsize=1024, typed=True)
def derived(field: str, value: Value, why: str, source: str = "",
            minor: bool = False) -> Assumption:
    return Assumption(field, value, "derived", why, source, minor)


def said_or_default(field: str, value: Value, said: bool, why: str, source: str = "",
                    minor: bool = False) -> Assumption:
    """``default``, or the stated value with the same why (a setting the user gave that the
    engine still explains, such as the memory budget it turns into)."""
    if said:
        return Assumption(field, value, "stated", why, source, minor)
    return default(field, value, why, source, minor)


def merge_assumptions(*groups: tuple[Assumption, ...]) -> tuple[Assumption, ...]:
    """One record per field, the later group's record winning, in first-seen order."""
    by_field: dict[str, Assumption] = {}
    for group in groups:
        for item in group:
            by_field[item.field] = item
    return tuple(by_field.values())
