"""Speculative decoding with a draft model: "llama 3.2 1b draft for llama 3.1 70b". The model
written next to the word "draft" is the draft; the other is the model served (held-out set 28:
the 1B draft had been sized as the model, and the 70B target was gone). The draft is answered
apart (``asking/draft_cost.py``)."""

from __future__ import annotations

import re
from typing import Any

from service.parser.scan import Scan

_DRAFT = re.compile(r"\bdraft(?:[\s\-_]*model)?\b")
# the unread readings the draft's answer covers ("speculative decoding", "draft model")
DRAFT_WORDS = re.compile(r"\bspec(?:ulative)?[\s\-_]*decod|\bdraft\b")
# characters between a model's name and "draft" for the name to be the draft's: a few words,
# as in "llama 3.2 1b as the draft", not a name at the other end of a sentence
NEAR = 24


def split_draft(scan: Scan, ordered: dict[str, list[Any]]) -> str | None:
    """The draft model's id, taken out of ``ordered["model"]`` (None: no draft named beside
    a second model)."""
    models = ordered.get("model", [])
    if len(models) < 2:
        return None
    named = [f for f in scan.findings if f.field == "model" and f.value in models]
    for m in _DRAFT.finditer(scan.low):
        # "draft: llama 3.2 1b" names the model after it; otherwise, at an equal distance,
        # the one before ("llama 3.2 1b draft for llama 3.1 70b")
        labels = bool(re.match(r"\s*[:=]", scan.low[m.end():]))
        gaps = [(max(f.start - m.end(), m.start() - f.end, 0),
                 (f.start < m.end()) if labels else (f.start >= m.end()), f.value) for f in named]
        gap, _, draft = min(gaps, key=lambda g: (g[0], g[1]), default=(NEAR + 1, False, None))
        if draft is not None and gap <= NEAR:
            ordered["model"] = [v for v in models if v != draft]
            return str(draft)
    return None
