"""What one layer keeps under torchtitan's op-level selective activation checkpointing.

torchtitan (``torchtitan/distributed/activation_checkpoint.py``, ``[activation_checkpoint]
mode = "selective"``, ``selective_ac_option = "op"``) wraps each transformer block in a
selective-checkpoint context whose policy saves the outputs of the ops on its save list (the
matmuls, SDPA's flash/efficient/cuDNN kernels, the tensor-parallel reduce-scatter, fp8's
abs/max) and recomputes every other op (norms, rotary, activations, products) in backward,
except that it counts the layer's ``aten.mm`` calls and recomputes every second one. So a dense
layer keeps:

- its input (the checkpoint region's input: a residual-stream element per hidden unit);
- the outputs of its 1st, 3rd, 5th... matmuls, in torchtitan's Llama order q, k, v, o, then
  w1, w3, w2 (gated) or w1, w2: q, v, w1 and w2;
- SDPA's output and its fp32 log-sum-exp (one per head per token).

Layers this profile does not describe (latent attention, routed experts, whose grouped
matmuls are not ``aten.mm``) keep every saved tensor (an upper bound) and say so.
"""

from __future__ import annotations

from service.core.memory.saved_tensors import LayerSetup, Saved
from service.core.model.architecture import Architecture


def op_sac_applies(arch: Architecture, moe_layer: bool) -> bool:
    return arch.mla is None and not (moe_layer and arch.moe is not None)


def _matmuls(arch: Architecture) -> list[tuple[str, int, int]]:
    """(name, in, out) of a dense layer's matmuls in torchtitan's order."""
    h, q, kv, f = arch.hidden, arch.q_width, arch.kv_width, arch.ffn
    mlp = [("w1", h, f), ("w3", h, f), ("w2", f, h)] if arch.mlp == "gated" \
        else [("w1", h, f), ("w2", f, h)]
    return [("q", h, q), ("k", h, kv), ("v", h, kv), ("o", q, h), *mlp]


def op_sac_recompute_share(arch: Architecture) -> float:
    """The share of a dense layer's forward matmul FLOPs that backward runs again (every second
    matmul; SDPA's output is kept): Llama 3.1 8B 0.37, so the step (forward 1 + backward 2)
    takes x (1 + 0.37 / 3) = 1.12, against x 4/3 for full recompute."""
    flops = [i * o for _, i, o in _matmuls(arch)]
    return sum(flops[1::2]) / sum(flops)


def op_sac_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """A dense layer's kept tensors, bytes per token (tensor-parallel shards where they split)."""
    e = s.elem_bytes
    kept = [Saved(f"{name} output (matmul {i})", e * width, True)
            for i, (name, _, width) in enumerate(_matmuls(arch), start=1) if i % 2 == 1]
    return [Saved("layer input", s.rs * arch.hidden, False), *kept,
            Saved("SDPA output", e * arch.q_width, True),
            Saved("SDPA fp32 log-sum-exp", 4 * arch.heads, True)]
