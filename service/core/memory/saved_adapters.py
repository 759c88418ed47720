"""What LoRA adapters keep for backward, per token (peft ``tuners/lora/layer.py``).

Each adapted linear runs ``lora_B(lora_A(dropout(x)))`` beside the frozen base: the dropout
keeps a 1-byte mask of its input, autocast casts the dropped input to 16-bit for ``lora_A``
(kept for ``lora_A``'s weight gradient), and ``lora_B`` keeps ``lora_A``'s output (r wide).
The frozen base keeps no input. Per adapted linear: (1 + e) x in + e x r bytes. Which linears
are adapted is ``lora.lora_params``'s rule: routed experts stored fused (``MoE.fused_experts``)
are not; shared experts are.
Dropout 0.05, as common recipes (QLoRA, axolotl) set it: peft's own default is 0, which saves
the mask (1 x in).
"""

from __future__ import annotations

from service.core.memory.saved_tensors import LayerSetup, Saved
from service.core.model.architecture import Architecture
from service.core.model.linears import attention_linear_shapes, mlp_linear_shapes

DROPOUT_MASK_BYTES = 1  # CUDA native_dropout keeps a bool mask


def adapter_saved(arch: Architecture, s: LayerSetup, moe_layer: bool) -> list[Saved]:
    """The adapters of one layer: attention projections, and with ``all_linear`` the MLP's
    (for an MoE layer, every routed token copy's expert unless the experts are fused, and each
    shared expert)."""
    e, r = s.elem_bytes, s.adapter_rank
    per_in = DROPOUT_MASK_BYTES + e
    attention = attention_linear_shapes(arch)
    # the output projection reads the attention output, split by tensor parallelism
    items = [Saved("LoRA inputs of the attention projections",
                   sum(per_in * i + e * r for i, _ in attention[:-1]), False),
             Saved("LoRA input of the output projection", per_in * attention[-1][0] + e * r,
                   True)]
    if s.adapter_targets != "all_linear":
        return items
    mlps = [(1, arch.ffn)]  # (token copies through it, ffn width)
    if moe_layer and arch.moe is not None:
        moe = arch.moe
        mlps = [(moe.experts_per_token, moe.expert_ffn)] if not moe.fused_experts else []
        mlps.append((moe.shared_experts, moe.shared_expert_ffn or moe.expert_ffn))
    per_token = sum(copies * sum(per_in * i + e * r for i, _ in mlp_linear_shapes(arch, ffn))
                    for copies, ffn in mlps)
    if per_token:
        items.append(Saved("LoRA inputs of the MLP projections", per_token, True))
    return items
