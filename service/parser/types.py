"""The parser's plain data: what one scan of the text found, and what it understood."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INTENTS: tuple[str, ...] = ("train", "finetune", "infer", "time_cost", "compare", "help", "invalid")


@dataclass(frozen=True, slots=True)
class Finding:
    """One value read from the text: the request field, its value and where it was written."""

    field: str
    value: Any
    start: int = 0
    end: int = 0
    note: str = ""  # how it was read, when that is a choice ("16k = 16,384 tokens")


@dataclass(frozen=True, slots=True)
class Unknown:
    """A model or GPU name that matched nothing, with the closest known ids."""

    kind: str  # "model" | "gpu"
    name: str  # as written, already made safe to echo
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scope:
    """What the job named that the answer does not size: a word for the headline, a line under
    it."""

    headline: str  # "the policy model only"
    line: str


@dataclass(frozen=True, slots=True)
class Variant:
    """One side of a comparison: a label and the fields that differ from the base request."""

    label: str
    changes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Parsed:
    """Everything understood from one message (and the thread's previous request)."""

    intent: str
    fields: dict[str, Any]  # understood from this text alone
    merged: dict[str, Any]  # fields merged over ``previous``: the answer's ``parsed``
    notes: tuple[str, ...] = ()  # readings the parser chose, said back in the reply
    compare_field: str | None = None
    compare: tuple[Variant, ...] = ()
    problem: str | None = None  # why the text cannot be answered (intent "invalid")
    unknown: Unknown | None = None
    clarify: str | None = None
    how_many: bool = False  # "how many GPUs": the planner's fewest count
    maximize: str | None = None  # "max context", "biggest batch": the field whose limit is asked
    ignored: tuple[str, ...] = ()  # stated numbers no field took, as written ("3 epochs"): said back
    deadline_hours: float | None = None  # "in 7 days": the GPUs that finish in time are asked
    # the problem is the hardware (a Mac, a TPU, CPUs), not the job: the job's own memory can
    # still be said, as what a GPU would need
    hardware_problem: bool = False
    cheapest: bool = False  # "cheaper option?": the job on every GPU type, cheapest per hour first
    cloud: str | None = None  # "what instance on AWS?": the cheapest list on that cloud's GPUs
    defaulted: tuple[str, ...] = ()  # request fields the parser filled in (not the user's words)
    launch_asked: str | None = None  # "and the vllm command?": the tool named, "" for any
    draft: str | None = None  # speculative decoding's draft model (``draft_model.py``)
    cheaper: bool = False  # "cheapest setup on h100s": cheaper weight formats are asked
    kv_asked: bool = False  # "what's the kv cache per token": the KV figure leads
    hourly: bool = False  # "for how much per hour": the price of the answer's GPUs is asked
    observed_gb: float | None = None  # memory seen in use, to explain ("73GB used ... leak?")
    # what the job named that the answer does not size (PPO's critic and reward models): said
    # right under the headline, so a "Fits" is read as the part that was sized
    scope: Scope | None = None
