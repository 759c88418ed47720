"""The pipeline: one message (and the thread's previous request) -> ``Parsed``.

1. ``normalize``: Slack markup, Unicode, length.
2. names and switches, each claiming what it read: pasted settings whose value is a word
   (``training_args``), a pasted ``config.json``, model names, switches in words (``knobs``:
   "zero stage 2" is read before "2 h100" could be), follow-ups that scale ("2x the context"),
   data given as examples x length ("1M samples of 512 tokens"),
   GPU names with their counts (``hardware``), hardware that is not covered (Apple, CPU).
3. ``readings``: the rest as tokens (``tokens``), numbers bound to attributes by type
   (``binding``), findings, and the numbers nothing could read.
4. ``assemble``: task, intent, comparisons, follow-up merge, questions back.
"""

from __future__ import annotations

from service.parser.assemble import assemble
from service.parser.badinput import problem
from service.parser.compare import expand
from service.parser.custom_shape import find_pasted_config
from service.parser.dataset_size import find_dataset_size
from service.parser.deadline import find_deadline
from service.parser.followup import sanitize
from service.parser.hardware import find_hardware
from service.parser.knobs import find_knobs
from service.parser.model_names import find_models
from service.parser.normalize import clean
from service.parser.not_covered import find_not_covered
from service.parser.observed_usage import find_observed_usage
from service.parser.oom_message import capacity_as_memory
from service.parser.readings import read_quantities
from service.parser.recipes import find_recipes
from service.parser.scaling import find_scaling
from service.parser.scan import Scan
from service.parser.training_args import find_training_args
from service.parser.types import Parsed
from service.parser.unmodelled import find_unmodelled

_NAMES_AND_SWITCHES = (find_training_args, find_pasted_config, find_recipes, find_unmodelled,
                       find_observed_usage,
                       find_models, find_knobs,
                       find_scaling, find_dataset_size, find_deadline, find_hardware,
                       find_not_covered)
CRASH = "Sorry, I couldn't read that one."


def scan_text(text: str) -> Scan:
    """The findings of every step (numbers no step could read are ``_unread`` findings)."""
    scan = Scan(text)
    for extract in _NAMES_AND_SWITCHES:
        extract(scan)
    read_quantities(scan)
    return scan


def parse(text: object, previous: object = None) -> Parsed:
    """Everything understood from ``text`` (see the package docstring); never raises."""
    prev = sanitize(previous)
    try:
        cleaned = clean(text)
        bad = problem(text, cleaned)
        if bad is not None:
            return Parsed("invalid", {}, prev, problem=bad)
        return assemble(scan_text(expand(capacity_as_memory(cleaned.text))), prev)
    except Exception:  # a bug must not take the bot down: say so kindly, the tests find the bug
        return Parsed("invalid", {}, prev, problem=CRASH)
