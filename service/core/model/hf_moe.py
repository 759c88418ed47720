"""Mixture-of-experts families: Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3.

As in ``hf_config_families``, each builder follows one ``transformers`` modeling file and
returns the keyword fields of an ``Architecture``.
"""

from __future__ import annotations

from service.core.model.architecture import MLA, MoE
from service.core.model.hf_families import Fields, llama_fields, qwen_window, window
from service.core.model.hf_reader import ConfigReader


def placement(layers: int, moe_layers: set[int], step: int) -> tuple[int, int]:
    """(dense_layers, layer_step) reproducing which layers are MoE, or at least how many.

    ``Architecture`` puts the dense layers first, then every ``layer_step``-th layer is MoE.
    When a config's pattern is not of that shape (an ``mlp_only_layers`` list in the middle),
    the count, and so every parameter and memory figure, is still exact.
    """
    for dense in range(layers):
        if set(range(dense + step - 1, layers, step)) == moe_layers:
            return dense, step
    return layers - len(moe_layers), 1


def mixtral(r: ConfigReader) -> Fields:
    """Mixtral (``modeling_mixtral.py``): every layer's MLP is ``num_local_experts`` experts of
    ``intermediate_size``, ``num_experts_per_tok`` of them per token; no dense MLP."""
    fields = llama_fields(r, tied=False)
    experts = r.read_int("moe.experts", "num_local_experts")
    moe = MoE(
        experts=experts,
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok"),
        expert_ffn=fields["ffn"],
    )
    r.sources["arch.moe.expert_ffn"] = r.key("intermediate_size")
    return fields | {"ffn": 0, "moe": moe} | window(r, fields["layers"], 1.0)


def _qwen_moe(r: ConfigReader, fields: Fields, shared: bool) -> Fields:
    """Qwen2-MoE/Qwen3-MoE layer choice: layer i is sparse unless listed in ``mlp_only_layers``
    and when (i + 1) is a multiple of ``decoder_sparse_step``; dense layers use
    ``intermediate_size``."""
    layers: int = fields["layers"]
    step = r.read_int("moe.layer_step", "decoder_sparse_step", default=1)
    dense_only = set(r.read_int_list("mlp_only_layers"))
    experts = r.read_int("moe.experts", "num_experts", default=60 if shared else 128, low=0)
    sparse = {i for i in range(layers) if i not in dense_only and (i + 1) % step == 0}
    if experts == 0 or not sparse:
        return fields
    dense, layer_step = placement(layers, sparse, step)
    shared_ffn = (
        r.read_int("moe.shared_expert_ffn", "shared_expert_intermediate_size", default=5632, low=0)
        if shared
        else 0
    )
    moe = MoE(
        experts=experts,
        experts_per_token=r.read_int(
            "moe.experts_per_token", "num_experts_per_tok", default=4 if shared else 8
        ),
        expert_ffn=r.read_int(
            "moe.expert_ffn", "moe_intermediate_size", default=1408 if shared else 768
        ),
        shared_experts=1 if shared_ffn else 0,
        shared_expert_ffn=shared_ffn,
        dense_layers=dense,
        layer_step=layer_step,
        shared_expert_gate=bool(shared_ffn),
    )
    return fields | {"ffn": fields["ffn"] if len(sparse) < layers else 0, "moe": moe}


def qwen2_moe(r: ConfigReader) -> Fields:
    """Qwen1.5-MoE/Qwen2-MoE (``modeling_qwen2_moe.py``): q/k/v bias (``qkv_bias``, default on),
    one shared expert of ``shared_expert_intermediate_size`` behind a sigmoid gate."""
    fields = llama_fields(r, tied=False)
    fields |= {"attn_bias": r.read_bool("attn_bias", "qkv_bias", default=True), "attn_out_bias": False}
    return _qwen_moe(r, fields, shared=True) | qwen_window(r, fields["layers"])


def qwen3_moe(r: ConfigReader) -> Fields:
    """Qwen3-MoE (``modeling_qwen3_moe.py``): Qwen3 attention (q/k norm), experts of
    ``moe_intermediate_size``, no shared expert."""
    fields = llama_fields(r, tied=False, head_dim=128) | {"qk_norm": True}
    return _qwen_moe(r, fields, shared=False) | qwen_window(r, fields["layers"])


def deepseek(r: ConfigReader, version: int) -> Fields:
    """DeepSeek-V2/V3 (``modeling_deepseek_v2.py``, ``modeling_deepseek_v3.py``).

    Multi-head latent attention; the first ``first_k_dense_replace`` layers keep a dense MLP of
    ``intermediate_size``, the rest have ``n_routed_experts`` experts and ``n_shared_experts``
    always-on experts of ``moe_intermediate_size``. ``q_lora_rank`` null: queries come straight
    from the hidden state. ``topk_method`` ``noaux_tc`` (V3) adds the per-expert
    ``e_score_correction_bias``.
    """
    v3 = version == 3
    fields = llama_fields(r, tied=False)
    mla = MLA(
        kv_lora_rank=r.read_int("mla.kv_lora_rank", "kv_lora_rank", default=512),
        qk_nope_head_dim=r.read_int("mla.qk_nope_head_dim", "qk_nope_head_dim", default=128),
        qk_rope_head_dim=r.read_int("mla.qk_rope_head_dim", "qk_rope_head_dim", default=64),
        v_head_dim=r.read_int("mla.v_head_dim", "v_head_dim", default=128),
        q_lora_rank=r.read_int("mla.q_lora_rank", "q_lora_rank", default=0, low=0),
    )
    layers: int = fields["layers"]
    dense = r.read_int(
        "moe.dense_layers", "first_k_dense_replace", default=3 if v3 else 0, low=0
    )
    experts = r.read_int("moe.experts", "n_routed_experts", default=256 if v3 else 64, low=0)
    fields |= {"head_dim": mla.qk_nope_head_dim + mla.qk_rope_head_dim, "mla": mla}
    if experts == 0 or dense >= layers:
        return fields
    expert_ffn = r.read_int("moe.expert_ffn", "moe_intermediate_size", default=2048 if v3 else 1407)
    method = r.read_str("moe.router_bias", "topk_method", default="noaux_tc" if v3 else "greedy")
    moe = MoE(
        experts=experts,
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok"),
        expert_ffn=expert_ffn,
        shared_experts=r.read_int(
            "moe.shared_experts", "n_shared_experts", default=1 if v3 else 2, low=0
        ),
        shared_expert_ffn=expert_ffn,
        dense_layers=dense,
        router_bias=method == "noaux_tc",
    )
    return fields | {"ffn": fields["ffn"] if dense else 0, "moe": moe}
