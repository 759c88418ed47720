"""Adapters that run one open-source peer estimator on the measured jobs of ``bench/peers.py``.

Each ``peer_*.py`` module runs inside that peer's own virtualenv (``python3 bench/peers.py --setup``),
so it imports only the standard library, ``_protocol`` and the peer itself: the peers' dependencies
never mix with fitcheck's. ``bench/peers.py`` starts it as ``python -m bench.peers_adapters.peer_X``
with JSON on stdin and reads JSON from its stdout (see ``_protocol``). Each adapter's docstring says
how a measured job is mapped onto the peer's settings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Peer:
    name: str  # the PyPI distribution, also the venv's folder name
    version: str  # the pinned release the bench compares against
    module: str  # the adapter module in this package
    scope: str  # what the peer estimates, for the table's footnote


PEERS: tuple[Peer, ...] = (
    Peer("fitcheck-llm", "0.3.1", "peer_fitcheck_llm",
         "training, LoRA, QLoRA and serving (weights + KV cache) of Llama-shaped decoders"),
    Peer("llm-analysis", "0.2.2", "peer_llm_analysis",
         "full training and inference (Megatron-style formulas); no LoRA / QLoRA"),
    Peer("canifinetune", "0.4.1", "peer_canifinetune",
         "full, LoRA and QLoRA fine-tuning on one GPU; no serving"),
)
