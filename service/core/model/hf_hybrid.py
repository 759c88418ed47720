"""Hybrid models whose layers mix softmax attention with linear attention: Qwen3-Next.

As in ``hf_families``, the builder follows one ``transformers`` modeling file
(``modeling_qwen3_next.py``) and returns the keyword fields of an ``Architecture``.
"""

from __future__ import annotations

from service.core.errors import InvalidInput
from service.core.model.arch_parts import LinearAttention
from service.core.model.hf_families import Fields, llama_fields
from service.core.model.hf_moe import QWEN3_NEXT_DEFAULTS, qwen_moe_layers
from service.core.model.hf_reader import ConfigReader

# Qwen3NextConfig: layer_types default to a full-attention layer every 4th layer.
DEFAULT_FULL_ATTENTION_INTERVAL = 4
# vLLM qwen3_next_mtp.py: num_mtp_layers = getattr(config, "num_nextn_predict_layers", 1);
# the released configs have no such key and their checkpoints hold one ``mtp`` layer.
DEFAULT_MTP_LAYERS = 1


def _full_attention_interval(r: ConfigReader, layers: int) -> int:
    """Every n-th layer is full attention: from ``layer_types`` when listed (it must follow that
    pattern), else ``full_attention_interval`` (4)."""
    kinds = r.read_str_list("layer_types")
    if kinds is None:
        return r.read_int("linear_attention.full_attention_interval", "full_attention_interval",
                          default=DEFAULT_FULL_ATTENTION_INTERVAL, low=2)
    full = [i for i, kind in enumerate(kinds[:layers]) if kind == "full_attention"]
    for interval in range(2, layers + 1):
        if full == list(range(interval - 1, layers, interval)):
            return interval
    raise InvalidInput(r.key("layer_types"), "full-attention layers are not every n-th layer",
                       "layer_types with full_attention on every n-th layer, as Qwen3-Next has")


def qwen3_next(r: ConfigReader) -> Fields:
    """Qwen3-Next (``modeling_qwen3_next.py``, ``Qwen3NextConfig``).

    Layers are Gated DeltaNet linear attention (``linear_num_key_heads`` /
    ``linear_num_value_heads`` heads of ``linear_key_head_dim`` / ``linear_value_head_dim``, a
    ``linear_conv_kernel_dim`` short convolution) except every ``full_attention_interval``-th,
    which is gated attention: q_proj twice as wide (query and an output gate), q/k RMSNorm,
    ``partial_rotary_factor`` 0.25 of each head rotated. Every layer's MLP is Qwen2-MoE style:
    ``num_experts`` experts of ``moe_intermediate_size`` and a gated shared expert. One
    multi-token-prediction layer, counted apart.
    """
    fields = llama_fields(r, tied=False, head_dim=256)
    layers: int = fields["layers"]
    block = LinearAttention(
        full_attention_interval=_full_attention_interval(r, layers),
        key_heads=r.read_int("linear_attention.key_heads", "linear_num_key_heads", default=16),
        value_heads=r.read_int("linear_attention.value_heads", "linear_num_value_heads",
                               default=32),
        key_head_dim=r.read_int("linear_attention.key_head_dim", "linear_key_head_dim",
                                default=128),
        value_head_dim=r.read_int("linear_attention.value_head_dim", "linear_value_head_dim",
                                  default=128),
        conv_kernel=r.read_int("linear_attention.conv_kernel", "linear_conv_kernel_dim", default=4),
    )
    fields |= {
        "qk_norm": True,
        "attn_output_gate": True,
        "rotary_fraction": r.read_float("rotary_fraction", "partial_rotary_factor", default=0.25),
        "linear_attention": block,
        "mtp_layers": r.read_int("mtp_layers", "num_nextn_predict_layers",
                                 default=DEFAULT_MTP_LAYERS, low=0),
    }
    return qwen_moe_layers(r, fields, QWEN3_NEXT_DEFAULTS)
