"""Serving with Hugging Face transformers (``generate``): the prefill's working set.

``generate`` runs the whole prompt of every sequence through the model at once into a
``DynamicCache`` (``logits_to_keep=1``: logits of the last token only). Its peak is the prefill
of the last layer's MLP (measured: every run of ``tests/data/gpu_runs``), holding:
- the weights, cuBLAS's workspaces and the KV cache of the whole prompt (``DynamicLayer.update``
  concatenates into the cache; a sliding-window layer keeps a view of the full prefill K/V until
  the first decode step, so it holds the whole prompt too);
- per prompt token: four hidden-size tensors (``inputs_embeds``, still referenced by the model's
  forward; the layer input; the post-attention residual; the normed MLP input) and three
  MLP-wide ones (act(gate), up and their product; Phi-3's fused gate_up output is twice as wide);
- with a sliding-window mask, the (prompt x prompt) bool mask.
A hybrid (Qwen3-Next) caches K and V in its attention layers only; each linear-attention layer
holds its state instead (``cache_utils.LinearAttentionLayer``): the convolution state keeps the
last ``conv_kernel`` inputs in the model dtype, and the recurrent state is what
``torch_chunk_gated_delta_rule`` (or the fla kernel it stands for) returns, fp32. Transformers'
TP plan gathers the Gated DeltaNet projections' outputs (``colwise_gather_output``), so every
GPU keeps the whole state.
The caching allocator then holds two MLP-wide blocks it cannot reuse (measured: the reserve at
the peak is two of them, 0.9-1.0x on the runs).
Sources: transformers ``modeling_llama.py`` (``LlamaModel.forward``, ``LlamaMLP``),
``cache_utils.py`` (``DynamicLayer``, ``DynamicSlidingWindowLayer``, ``LinearAttentionLayer``),
``modeling_qwen3_next.py`` and ``Qwen3NextConfig.base_model_tp_plan`` (transformers 5.23).
"""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory.formula import Component, component, component_of
from service.core.memory.overhead import context_bytes, cublas_workspace
from service.core.memory.saved_attention import sdpa_mask_needed
from service.core.memory.serving import StateLayout, linear_state_bytes
from service.core.model.formats import KV_DTYPE_BYTES
from service.core.model.linears import FUSED_GATE_UP

HIDDEN_TENSORS = 4  # inputs_embeds, layer input, post-attention residual, normed MLP input
MLP_TENSORS = 3  # act(gate), up, their product
STRANDED_MLP_BLOCKS = 2
SOURCE = "transformers generate: prefill into a DynamicCache (modeling_llama.py, cache_utils.py)"
HF_STATE = StateLayout(recurrent_bytes=4, conv_bytes=2, conv_keeps_kernel=True)


def _mlp_width(job: Job, tp: int) -> float:
    arch = job.arch
    ffn = arch.ffn if arch.moe is None else arch.moe.experts_per_token * arch.moe.expert_ffn
    return ffn * (2 if arch.family in FUSED_GATE_UP else 1) / tp


def prefill_kv(job: Job, tp: int, pp: int) -> Component:
    """The whole prompt's K and V in every attention layer (sliding layers included) during
    prefill, and a hybrid's linear-attention state (whole on every GPU)."""
    arch = job.arch
    per_token_layer = (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim if arch.mla is not None
                       else 2 * arch.kv_width / tp)
    terms: dict[str, float] = {
        "layers": arch.attention_layers, "pp": pp, "per_token_layer": per_token_layer,
        "kv_bytes": KV_DTYPE_BYTES[job.kv_cache_dtype], "prompt": job.seq_len,
        "sequences": job.batch}
    expression = "layers / pp * per_token_layer * kv_bytes * prompt * sequences"
    if arch.linear_attention is not None:
        terms["linear_state"] = linear_state_bytes(arch, HF_STATE)
        expression = ("(layers * per_token_layer * kv_bytes * prompt + linear_state) / pp "
                      "* sequences")
    return component_of("kv_cache", expression, terms, SOURCE,
                        "the KV cache of the whole prompt during prefill")


def prefill_working_set(job: Job, tp: int) -> Component:
    arch = job.arch
    mask = job.seq_len ** 2 if sdpa_mask_needed(arch, job.seq_len) else 0
    return component(
        "activations", "tokens * 2 * (hidden_tensors * hidden + mlp_tensors * mlp_width) + mask",
        SOURCE, "the last layer's MLP in the prefill", tokens=job.seq_len * job.batch,
        hidden_tensors=HIDDEN_TENSORS, hidden=arch.hidden, mlp_tensors=MLP_TENSORS,
        mlp_width=_mlp_width(job, tp), mask=mask)


def hf_overhead(job: Job, tp: int) -> Component:
    """Outside PyTorch, and the two MLP-wide blocks the allocator holds at the peak."""
    return component(
        "overhead", "outside_pytorch + stranded_blocks * tokens * 2 * mlp_width",
        "measured on H100 runs (service/data/calibration.json); PyTorch CUDACachingAllocator",
        "CUDA context and the allocator's reserve", outside_pytorch=context_bytes(job),
        stranded_blocks=STRANDED_MLP_BLOCKS, tokens=job.seq_len * job.batch,
        mlp_width=_mlp_width(job, tp))


def hf_serving_components(job: Job, tp: int, pp: int
                          ) -> tuple[Component, Component, Component, Component]:
    """(KV cache, working set, outside PyTorch + allocator reserve, cuBLAS workspaces) of one
    GPU at the prefill's peak."""
    return (prefill_kv(job, tp, pp), prefill_working_set(job, tp), hf_overhead(job, tp),
            cublas_workspace(job))
