"""Dense model families: how each ``transformers`` modeling file reads its ``config.json``.

Each builder takes a ``ConfigReader`` over the (text) config and returns the ``Architecture``
the named ``transformers`` module would instantiate. Defaults for absent keys are those of the
family's ``configuration_*.py``; the core shape keys (layers, width, heads, vocab, MLP width)
are required, since a config without them describes no real checkpoint.
"""

from __future__ import annotations

from typing import Any

from service.core.model.architecture import Architecture
from service.core.model.hf_reader import ConfigReader

Fields = dict[str, Any]


def llama_fields(r: ConfigReader, *, tied: bool, head_dim: int = 0, act: str = "silu") -> Fields:
    """The keys every Llama-descended config shares (``configuration_llama.py``).

    ``num_key_value_heads`` missing means multi-head attention; ``head_dim`` missing means
    hidden // heads; ``attention_bias`` puts a bias on q, k, v and o; ``mlp_bias`` on all three
    MLP projections (``modeling_llama.py``).
    """
    attn_bias = r.read_bool("attn_bias", "attention_bias", default=False)
    return {
        "layers": r.read_int("layers", "num_hidden_layers"),
        "hidden": r.read_int("hidden", "hidden_size"),
        "heads": r.read_int("heads", "num_attention_heads"),
        "kv_heads": r.read_int("kv_heads", "num_key_value_heads", default=0),
        "head_dim": r.read_int("head_dim", "head_dim", default=head_dim),
        "vocab": r.read_int("vocab", "vocab_size"),
        "ffn": r.read_int("ffn", "intermediate_size"),
        "activation": r.read_str("activation", "hidden_act", default=act),
        "attn_bias": attn_bias,
        "attn_out_bias": attn_bias,
        "mlp_bias": r.read_bool("mlp_bias", "mlp_bias", default=False),
        "tied_embeddings": r.read_bool("tied_embeddings", "tie_word_embeddings", default=tied),
        "dropout": r.read_float("dropout", "attention_dropout", default=0.0),
    }


def dropout(r: ConfigReader, *keys: str, default: float = 0.0) -> float:
    """The largest of several dropout probabilities (residual, attention, hidden)."""
    return max(r.read_float("dropout", key, default=default) for key in keys)


def _layer_types_fraction(r: ConfigReader, layers: int) -> float | None:
    """Newer configs list ``layer_types``; the share of ``sliding_attention`` entries."""
    kinds = r.read_str_list("layer_types")
    if not kinds:
        return None
    return min(1.0, sum(kind == "sliding_attention" for kind in kinds) / layers)


def window(r: ConfigReader, layers: int, fraction: float, default: int = 0) -> Fields:
    """``sliding_window`` on the given fraction of the layers: null means none, absent means
    the family's default (4096 for Mistral, Qwen and Gemma 2/3, none for the others)."""
    if "sliding_window" in r.config and r.config["sliding_window"] is None:
        return {}
    size = r.read_int("sliding_window", "sliding_window", default=default, low=0)
    if size == 0:
        return {}
    share = _layer_types_fraction(r, layers)
    share = fraction if share is None else share
    if share == 0.0:
        return {}
    return {"sliding_window": size, "sliding_window_layers": share}


def qwen_window(r: ConfigReader, layers: int) -> Fields:
    """Qwen2/Qwen3 (``modeling_qwen2.py``): only with ``use_sliding_window``, and then only on
    the layers from ``max_window_layers`` on."""
    if not r.read_bool("", "use_sliding_window", default=False):
        return {}
    first = r.read_int("", "max_window_layers", default=28, low=0)
    return window(r, layers, max(0, layers - first) / layers, default=4096)


def llama(r: ConfigReader) -> Fields:
    """Llama 1-3 (``modeling_llama.py``); also the reading used for unknown model types."""
    return llama_fields(r, tied=False)


def mistral(r: ConfigReader) -> Fields:
    """Mistral (``modeling_mistral.py``): Llama plus a window on every layer when set."""
    fields = llama_fields(r, tied=False)
    return fields | window(r, fields["layers"], 1.0, default=4096)


def qwen2(r: ConfigReader) -> Fields:
    """Qwen2/2.5 (``modeling_qwen2.py``): bias on q, k, v but not on the output projection."""
    fields = llama_fields(r, tied=False) | {"attn_bias": True, "attn_out_bias": False}
    return fields | qwen_window(r, fields["layers"])


def qwen3(r: ConfigReader) -> Fields:
    """Qwen3 (``modeling_qwen3.py``): per-head RMSNorm on queries and keys, head_dim from config."""
    fields = llama_fields(r, tied=False, head_dim=128) | {"qk_norm": True}
    return fields | qwen_window(r, fields["layers"])


def _gemma_fields(r: ConfigReader) -> Fields:
    fields = llama_fields(r, tied=True, head_dim=256, act="gelu_pytorch_tanh")
    fields["activation"] = r.read_str(
        "activation", "hidden_activation", "hidden_act", default="gelu_pytorch_tanh"
    )
    if fields["activation"] == "gelu":  # configuration_gemma.py: a legacy name for the tanh GELU
        fields["activation"] = "gelu_pytorch_tanh"
    return fields


def gemma(r: ConfigReader) -> Fields:
    """Gemma (``modeling_gemma.py``): tied embeddings, head_dim 256 unless set."""
    return _gemma_fields(r)


def gemma2(r: ConfigReader) -> Fields:
    """Gemma 2 (``modeling_gemma2.py``): norms before and after attention and MLP (4 a layer);
    layers 0, 2, 4, ... use the sliding window (default 4096)."""
    fields = _gemma_fields(r) | {"norms_per_layer": 4}
    fields["attn_softcap"] = r.config.get("attn_logit_softcapping", 50.0) is not None
    fields["final_softcap"] = r.config.get("final_logit_softcapping", 30.0) is not None
    layers = fields["layers"]
    return fields | window(r, layers, ((layers + 1) // 2) / layers, default=4096)


def gemma3_text(r: ConfigReader) -> Fields:
    """Gemma 3 text model (``modeling_gemma3.py``, ``Gemma3TextConfig``): Gemma 2 plus q/k norms;
    every ``sliding_window_pattern``-th layer (default 6) is global, the others local."""
    defaulted = _Defaulted(r, vocab_size=262_208, num_attention_heads=8, num_key_value_heads=4)
    fields = _gemma_fields(defaulted) | {"norms_per_layer": 4, "qk_norm": True}
    layers = fields["layers"]
    pattern = r.read_int("", "sliding_window_pattern", default=6)
    global_layers = layers // pattern
    return fields | window(r, layers, (layers - global_layers) / layers, default=4096)


class _Defaulted(ConfigReader):
    """A reader that falls back to fixed values for some keys (Gemma3TextConfig defaults)."""

    def __init__(self, r: ConfigReader, **defaults: int) -> None:
        present = {key: value for key, value in r.config.items() if value is not None}
        super().__init__(defaults | present, r.prefix)
        self.sources = r.sources


def phi3(r: ConfigReader) -> Fields:
    """Phi-3/Phi-4 (``modeling_phi3.py``): fused qkv and gate_up projections hold the same
    weights as Llama's separate ones; no biases; window on every layer when set."""
    fields = llama_fields(r, tied=False) | {"attn_bias": False, "attn_out_bias": False}
    fields["dropout"] = dropout(r, "resid_pdrop", "attention_dropout")
    fields["rotary_fraction"] = r.read_float("rotary_fraction", "partial_rotary_factor",
                                             default=1.0)
    return fields | window(r, fields["layers"], 1.0)


def phi(r: ConfigReader) -> Fields:
    """Phi-1/1.5/2 (``modeling_phi.py``): one LayerNorm, attention and MLP in parallel, biases
    everywhere. (Its lm_head bias, vocab floats, is not modelled.)"""
    fields = llama_fields(r, tied=False, act="gelu_new")
    return fields | {
        "mlp": "plain",
        "norm": "layernorm",
        "norms_per_layer": 1,
        "parallel_residual": True,
        "attn_bias": True,
        "attn_out_bias": True,
        "mlp_bias": True,
        "qk_norm": r.read_bool("qk_norm", "qk_layernorm", default=False),
        "dropout": dropout(r, "resid_pdrop", "attention_dropout"),
        "rotary_fraction": r.read_float("rotary_fraction", "partial_rotary_factor", default=0.5),
    }


def olmo2(r: ConfigReader) -> Fields:
    """OLMo 2 (``modeling_olmo2.py``): norms after attention and after the MLP, and RMSNorm on
    queries and keys over the full q and k width."""
    return llama_fields(r, tied=False) | {"qk_norm": True, "qk_norm_full": True}


def starcoder2(r: ConfigReader) -> Fields:
    """StarCoder2 (``modeling_starcoder2.py``): plain MLP, LayerNorm, ``use_bias`` everywhere,
    tied embeddings, window on every layer."""
    bias = r.read_bool("attn_bias", "use_bias", default=True)
    fields = llama_fields(r, tied=True, act="gelu_pytorch_tanh") | {
        "mlp": "plain",
        "norm": "layernorm",
        "attn_bias": bias,
        "attn_out_bias": bias,
        "mlp_bias": bias,
        "dropout": dropout(r, "residual_dropout", "attention_dropout", "embedding_dropout"),
    }
    return fields | window(r, fields["layers"], 1.0)


def gpt2(r: ConfigReader) -> Fields:
    """GPT-2 (``modeling_gpt2.py``): learned positions, plain MLP of ``n_inner`` (None: 4x),
    biases everywhere, tied embeddings."""
    hidden = r.read_int("hidden", "n_embd", "hidden_size")
    return {
        "layers": r.read_int("layers", "n_layer", "num_hidden_layers"),
        "hidden": hidden,
        "heads": r.read_int("heads", "n_head", "num_attention_heads"),
        "vocab": r.read_int("vocab", "vocab_size"),
        "ffn": r.read_int("ffn", "n_inner", default=4 * hidden),
        "mlp": "plain",
        "activation": r.read_str("activation", "activation_function", default="gelu_new"),
        "norm": "layernorm",
        "attn_bias": True,
        "attn_out_bias": True,
        "mlp_bias": True,
        "tied_embeddings": r.read_bool("tied_embeddings", "tie_word_embeddings", default=True),
        "positions": "learned",
        "max_positions": r.read_int("max_positions", "n_positions", "max_position_embeddings",
                                    default=1024),
        "dropout": dropout(r, "resid_pdrop", "attn_pdrop", default=0.1),
    }


def gpt_neox(r: ConfigReader) -> Fields:
    """GPT-NeoX / Pythia (``modeling_gpt_neox.py``): plain MLP with bias, LayerNorm,
    ``use_parallel_residual`` (default true), ``attention_bias`` (default true)."""
    fields = llama_fields(r, tied=False, act="gelu")
    bias = r.read_bool("attn_bias", "attention_bias", default=True)
    return fields | {
        "kv_heads": 0,
        "mlp": "plain",
        "norm": "layernorm",
        "attn_bias": bias,
        "attn_out_bias": bias,
        "mlp_bias": True,
        "parallel_residual": r.read_bool(
            "parallel_residual", "use_parallel_residual", default=True
        ),
        "dropout": dropout(r, "hidden_dropout", "attention_dropout"),
        "rotary_fraction": r.read_float("rotary_fraction", "rotary_pct", default=0.25),
    }


def falcon(r: ConfigReader, refined_web: str = "") -> Fields:
    """Falcon (``modeling_falcon.py``) and the original ``RefinedWeb``/``RefinedWebModel`` configs.

    New decoder architecture (40B/180B): ``num_kv_heads`` K/V heads, two LayerNorms
    (``num_ln_in_parallel_attn``, default 2). Old (7B): one K/V head if ``multi_query``, one
    LayerNorm when ``parallel_attn``. ``bias`` covers every linear layer; embeddings are tied.
    """
    heads = r.read_int("heads", "num_attention_heads", "n_head")
    hidden = r.read_int("hidden", "hidden_size", "n_embed")
    new = r.read_bool("", "new_decoder_architecture", default=refined_web == "refinedweb")
    parallel = r.read_bool("parallel_residual", "parallel_attn", default=True)
    if new:
        kv_heads = r.read_int("kv_heads", "num_kv_heads", "n_head_kv", default=heads)
        lns = r.read_int("norms_per_layer", "num_ln_in_parallel_attn", default=2)
    else:
        multi_query = r.read_bool("kv_heads", "multi_query", default=True)
        kv_heads = 1 if multi_query else heads
        lns = 1
    bias = r.read_bool("attn_bias", "bias", default=False)
    alibi = r.read_bool("positions", "alibi", default=False)
    return {
        "layers": r.read_int("layers", "num_hidden_layers", "n_layer"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "vocab": r.read_int("vocab", "vocab_size"),
        "ffn": r.read_int("ffn", "ffn_hidden_size", default=4 * hidden),
        "mlp": "plain",
        "activation": r.read_str("activation", "activation", default="gelu"),
        "norm": "layernorm",
        "norms_per_layer": lns if parallel else 2,
        "attn_bias": bias,
        "attn_out_bias": bias,
        "mlp_bias": bias,
        "tied_embeddings": r.read_bool("tied_embeddings", "tie_word_embeddings", default=True),
        "positions": "alibi" if alibi else "rotary",
        "parallel_residual": new or parallel,
        "dropout": dropout(r, "hidden_dropout", "attention_dropout"),
    }


def make(r: ConfigReader, fields: Fields, name: str) -> Architecture:
    """Construct the Architecture, reporting its validation errors under the config keys."""
    return r.build(lambda: Architecture(**fields, name=name))
