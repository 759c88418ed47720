"""Mixture-of-experts families: Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3 and Kimi K2,
GLM-4.5, gpt-oss, Llama 4.

As in ``hf_config_families``, each builder follows one ``transformers`` modeling file and
returns the keyword fields of an ``Architecture``.

Routed experts: transformers 5 (5.17 and 5.23 checked, the versions of the project's
measurements) stores them fused in every family here, one ``*Experts`` module holding 3-D
``gate_up_proj`` / ``down_proj`` ``nn.Parameter``s (``MixtralExperts``, ``Qwen2MoeExperts``,
``Qwen3MoeExperts``, ``Qwen3NextExperts``, ``DeepseekV2Experts``, ``DeepseekV3Experts``,
``Glm4MoeExperts``, ``GptOssExperts``, ``Llama4TextExperts``): ``MoE.fused_experts``. Kimi K2 has
no transformers class: its remote ``modeling_deepseek.py`` keeps one ``nn.Linear`` MLP per expert.
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
        fused_experts=True,
    )
    r.sources["arch.moe.expert_ffn"] = r.key("intermediate_size")
    return fields | {"ffn": 0, "moe": moe} | window(r, fields["layers"], 1.0)


# configuration_qwen2_moe / qwen3_moe / qwen3_next defaults:
# (num_experts, num_experts_per_tok, moe_intermediate_size, shared_expert_intermediate_size)
QWEN2_MOE_DEFAULTS = (60, 4, 1408, 5632)
QWEN3_MOE_DEFAULTS = (128, 8, 768, 0)
QWEN3_NEXT_DEFAULTS = (512, 10, 512, 512)


def qwen_moe_layers(r: ConfigReader, fields: Fields, defaults: tuple[int, int, int, int]
                    ) -> Fields:
    """Qwen2-MoE/Qwen3-MoE/Qwen3-Next layer choice: layer i is sparse unless listed in
    ``mlp_only_layers`` and when (i + 1) is a multiple of ``decoder_sparse_step``; dense
    layers use ``intermediate_size``; a shared expert (behind a sigmoid gate) when
    ``shared_expert_intermediate_size`` is not 0."""
    layers: int = fields["layers"]
    step = r.read_int("moe.layer_step", "decoder_sparse_step", default=1)
    dense_only = set(r.read_int_list("mlp_only_layers"))
    experts = r.read_int("moe.experts", "num_experts", default=defaults[0], low=0)
    sparse = {i for i in range(layers) if i not in dense_only and (i + 1) % step == 0}
    if experts == 0 or not sparse:
        return fields
    dense, layer_step = placement(layers, sparse, step)
    shared_ffn = r.read_int("moe.shared_expert_ffn", "shared_expert_intermediate_size",
                            default=defaults[3], low=0)
    moe = MoE(
        experts=experts,
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok",
                                     default=defaults[1]),
        expert_ffn=r.read_int("moe.expert_ffn", "moe_intermediate_size", default=defaults[2]),
        shared_experts=1 if shared_ffn else 0,
        shared_expert_ffn=shared_ffn,
        dense_layers=dense,
        layer_step=layer_step,
        shared_expert_gate=bool(shared_ffn),
        fused_experts=True,
    )
    return fields | {"ffn": fields["ffn"] if len(sparse) < layers else 0, "moe": moe}


def qwen2_moe(r: ConfigReader) -> Fields:
    """Qwen1.5-MoE/Qwen2-MoE (``modeling_qwen2_moe.py``): q/k/v bias (``qkv_bias``, default on),
    one shared expert of ``shared_expert_intermediate_size`` behind a sigmoid gate."""
    fields = llama_fields(r, tied=False)
    fields |= {"attn_bias": r.read_bool("attn_bias", "qkv_bias", default=True), "attn_out_bias": False}
    return qwen_moe_layers(r, fields, QWEN2_MOE_DEFAULTS) | qwen_window(r, fields["layers"])


def qwen3_moe(r: ConfigReader) -> Fields:
    """Qwen3-MoE (``modeling_qwen3_moe.py``): Qwen3 attention (q/k norm), experts of
    ``moe_intermediate_size``, no shared expert (Qwen3-Coder's config states
    ``shared_expert_intermediate_size`` 0)."""
    fields = llama_fields(r, tied=False, head_dim=128) | {"qk_norm": True}
    return qwen_moe_layers(r, fields, QWEN3_MOE_DEFAULTS) | qwen_window(r, fields["layers"])


def deepseek(r: ConfigReader, version: int, fused_experts: bool = True) -> Fields:
    """DeepSeek-V2/V3 (``modeling_deepseek_v2.py``, ``modeling_deepseek_v3.py``).

    Multi-head latent attention; the first ``first_k_dense_replace`` layers keep a dense MLP of
    ``intermediate_size``, the rest have ``n_routed_experts`` experts and ``n_shared_experts``
    always-on experts of ``moe_intermediate_size``. ``q_lora_rank`` null: queries come straight
    from the hidden state. ``topk_method`` ``noaux_tc`` (V3) adds the per-expert
    ``e_score_correction_bias``. ``num_nextn_predict_layers`` multi-token-prediction layers are
    counted apart (``params.mtp_params``). Kimi K2 (``model_type`` kimi_k2) is read as V3, with
    ``fused_experts`` False (its remote code).
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
    fields["mtp_layers"] = r.read_int("mtp_layers", "num_nextn_predict_layers", default=0, low=0)
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
        fused_experts=fused_experts,
    )
    return fields | {"ffn": fields["ffn"] if dense else 0, "moe": moe}


def glm4_moe(r: ConfigReader) -> Fields:
    """GLM-4.5 / GLM-4.5-Air (``modeling_glm4_moe.py``, ``Glm4MoeConfig``).

    GQA with a bias on q, k and v (``attention_bias``; none on o_proj), per-head q/k RMSNorm when
    ``use_qk_norm``, ``partial_rotary_factor`` (0.5) of each head rotated. DeepSeek-V3-style
    MoE: ``first_k_dense_replace`` dense layers of ``intermediate_size``, then
    ``n_routed_experts`` experts and ``n_shared_experts`` shared ones of
    ``moe_intermediate_size``, a router with an ``e_score_correction_bias``;
    ``num_nextn_predict_layers`` MTP layers counted apart.
    """
    fields = llama_fields(r, tied=False, head_dim=128)
    fields |= {
        "attn_out_bias": False,
        "qk_norm": r.read_bool("qk_norm", "use_qk_norm", default=False),
        "rotary_fraction": r.read_float("rotary_fraction", "partial_rotary_factor", default=0.5),
        "mtp_layers": r.read_int("mtp_layers", "num_nextn_predict_layers", default=0, low=0),
    }
    dense = r.read_int("moe.dense_layers", "first_k_dense_replace", default=1, low=0)
    experts = r.read_int("moe.experts", "n_routed_experts", default=128, low=0)
    if experts == 0 or dense >= fields["layers"]:
        return fields
    expert_ffn = r.read_int("moe.expert_ffn", "moe_intermediate_size", default=1408)
    moe = MoE(
        experts=experts,
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok", default=8),
        expert_ffn=expert_ffn,
        shared_experts=r.read_int("moe.shared_experts", "n_shared_experts", default=1, low=0),
        shared_expert_ffn=expert_ffn,
        dense_layers=dense,
        router_bias=True,
        fused_experts=True,
    )
    return fields | {"ffn": fields["ffn"] if dense else 0, "moe": moe}


def gpt_oss(r: ConfigReader) -> Fields:
    """gpt-oss (``modeling_gpt_oss.py``, ``GptOssConfig``).

    Every layer MoE: ``num_local_experts`` experts of ``intermediate_size`` with biases on
    gate_up and down (``GptOssExperts``: fused 3-D parameters), top ``num_experts_per_tok``
    (``experts_per_token`` in OpenAI's own key), a router with a bias; attention with biases on
    q, k, v and o and a learned sink logit per head; ``layer_types`` alternate a
    ``sliding_window`` (128) band and full attention.
    """
    fields = llama_fields(r, tied=False, head_dim=64)
    bias = r.read_bool("attn_bias", "attention_bias", default=True)
    moe = MoE(
        experts=r.read_int("moe.experts", "num_local_experts", default=128),
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok",
                                     "experts_per_token", default=4),
        expert_ffn=fields["ffn"],
        router_bias=True,
        fused_experts=True,
    )
    r.sources["arch.moe.expert_ffn"] = r.key("intermediate_size")
    fields |= {"attn_bias": bias, "attn_out_bias": bias, "mlp_bias": True, "attn_sinks": True,
               "ffn": 0, "moe": moe}
    return fields | window(r, fields["layers"], 0.5, default=128)


def _llama4_chunked_share(r: ConfigReader, layers: int) -> float:
    """Share of layers with chunked (RoPE) attention: ``no_rope_layers`` entries of 1, else
    every layer but each ``no_rope_layer_interval``-th (4), as ``Llama4TextConfig`` derives."""
    flags = r.read_int_list("no_rope_layers")
    if flags:
        return sum(1 for flag in flags[:layers] if flag) / layers
    interval = r.read_int("", "no_rope_layer_interval", default=4)
    return sum(1 for i in range(layers) if (i + 1) % interval) / layers


def llama4(r: ConfigReader) -> Fields:
    """Llama 4 text model (``modeling_llama4.py``, ``Llama4TextConfig``).

    MoE layers (``moe_layers``, else every ``interleave_moe_layer_step``-th) hold
    ``num_local_experts`` experts (``Llama4TextExperts``: fused 3-D parameters) and one shared
    expert (``nn.Linear`` projections), both of ``intermediate_size``, top
    ``num_experts_per_tok`` (1); the other layers a dense MLP of ``intermediate_size_mlp``. RoPE
    layers attend within chunks of ``attention_chunk_size`` (read as a window: at most one chunk
    of KV), every fourth (NoPE) layer globally. ``use_qk_norm`` is a weightless L2 norm.
    """
    fields = llama_fields(r, tied=False, head_dim=128)
    layers: int = fields["layers"]
    step = r.read_int("moe.layer_step", "interleave_moe_layer_step", default=1)
    listed = r.read_int_list("moe_layers")
    sparse = set(listed) if listed else set(range(step - 1, layers, step))
    expert_ffn = fields["ffn"]
    r.sources["arch.moe.expert_ffn"] = r.key("intermediate_size")
    dense, layer_step = placement(layers, sparse, step)
    moe = MoE(
        experts=r.read_int("moe.experts", "num_local_experts", default=16),
        experts_per_token=r.read_int("moe.experts_per_token", "num_experts_per_tok", default=1),
        expert_ffn=expert_ffn, shared_experts=1, shared_expert_ffn=expert_ffn,
        dense_layers=dense, layer_step=layer_step, fused_experts=True,
    )
    dense_ffn = r.read_int("ffn", "intermediate_size_mlp", default=16384)
    fields |= {"ffn": dense_ffn if len(sparse) < layers else 0, "moe": moe}
    chunk = r.read_int("sliding_window", "attention_chunk_size", default=8192, low=0)
    share = _llama4_chunked_share(r, layers)
    if chunk and share:
        fields |= {"sliding_window": chunk, "sliding_window_layers": share}
    return fields
