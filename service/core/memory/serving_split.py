"""How a tensor-parallel serving engine splits weights, heads and the KV cache over GPUs.

vLLM ``QKVParallelLinear``: query heads must divide by tp; KV heads are split when there are
at least tp of them (kv_heads % tp == 0), else each GPU keeps one KV head, replicated tp /
kv_heads times (tp % kv_heads == 0). MLA caches one latent per token, not split by heads.
A hybrid's linear-attention (Gated DeltaNet) state is split by tp whatever the KV heads do:
``MambaStateShapeCalculator.gated_delta_net_state_shape`` divides the value heads and the
convolution channels by the TP size, and ``Qwen3NextGatedDeltaNet`` gives each GPU
key_heads / tp head groups (so tp must divide the key heads).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.spec import Job, Parallelism
from service.core.memory.formula import Component, component, component_of
from service.core.memory.hf_serving import hf_serving_components
from service.core.memory.model_state import rank_params
from service.core.memory.serving import (
    ServingBudget,
    attention_kv_bytes_per_token,
    forward_workspace_bytes,
    linear_state_bytes,
    serving_weights,
    weight_terms,
)
from service.core.model.adapter_params import lora_params
from service.core.model.architecture import Architecture
from service.core.model.linears import expert_weight_params
from service.core.model.params import parameter_breakdown


def kv_share(arch: Architecture, tp: int) -> float:
    """Share of one sequence's attention KV cache that each tensor-parallel GPU holds."""
    if arch.mla is not None:
        return 1.0
    kv = arch.kv_heads_resolved
    return max(1, kv // tp) / kv


def state_share(tp: int) -> float:
    """Share of one sequence's linear-attention state that each tensor-parallel GPU holds."""
    return 1 / tp


def kv_cache_share(job: Job, tp: int, pp: int, budget: ServingBudget,
                   sequences: int | None = None) -> Component:
    """This GPU's KV cache: the attention layers' K and V x ``kv_share``, plus a hybrid's
    linear-attention state x ``state_share``, over pp stages, for every sequence (the job's,
    or ``sequences``); a sliding-window layer holds its window and the engine's prefill chunk
    (``serving.window_tokens``)."""
    arch = job.arch
    per_token = attention_kv_bytes_per_token(arch, job.kv_cache_dtype, job.seq_len,
                                             budget.batched_tokens(job.gpu), budget.block_tokens)
    terms: dict[str, float] = {
        "kv_bytes_per_token": per_token,
        "context": job.seq_len, "kv_share": kv_share(arch, tp), "pp": pp,
        "sequences": job.batch if sequences is None else sequences}
    expression = "kv_bytes_per_token * context * kv_share / pp * sequences"
    source = "Ainslie et al. 2023 (GQA); DeepSeek-V2 sec. 2.1.2 (MLA latent cache)"
    if arch.linear_attention is not None:
        terms |= {"linear_state": linear_state_bytes(arch), "state_share": state_share(tp)}
        expression = ("(kv_bytes_per_token * context * kv_share + linear_state * state_share) "
                      "/ pp * sequences")
        source += "; vLLM gated_delta_net_state_shape (Gated DeltaNet state)"
    return component_of("kv_cache", expression, terms, source, f"{job.kv_cache_dtype} KV cache")


@dataclass(frozen=True, slots=True)
class ServingShare:
    """One GPU's part of a serving job on tp x pp GPUs, component by component, and how its
    memory grows with the number of sequences."""

    components: tuple[Component, ...]  # with the job's sequences
    weights_bytes: int
    workspace_bytes: int  # the forward pass's working set with the job's sequences
    kv_per_sequence: int  # this GPU's share of one sequence's KV cache at the context length
    per_sequence_bytes: int  # what one more sequence adds (HF: its prefill working set too)
    fixed_bytes: int  # besides the weights, what does not grow with the sequences
    memory_fraction: float  # the share of usable memory the server may fill

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.components)

    def room(self, capacity: int) -> int:
        """Memory left for sequences: fraction x capacity - weights - the fixed part."""
        return round(capacity * self.memory_fraction) - self.weights_bytes - self.fixed_bytes

    def max_sequences(self, capacity: int) -> int:
        room = self.room(capacity)
        return 0 if room <= 0 or self.per_sequence_bytes <= 0 else room // self.per_sequence_bytes


def busiest_share(arch: Architecture, tp: int, pp: int) -> float:
    """The busiest GPU's share of the model's parameters under tp x pp (its pipeline stage's
    layers, the larger end, / tp)."""
    rank = rank_params(arch, Parallelism(tp=tp, pp=pp))
    b = parameter_breakdown(arch)
    return (rank.dense + rank.experts) / (b.attention + b.mlp + b.norms + b.embedding + b.lm_head)


def expert_parallel_weights(arch: Architecture, quantization: str, scale: float,
                            ep: int) -> Component:
    """Data-parallel attention with expert parallelism (vLLM ``--data-parallel-size N
    --enable-expert-parallel``, SGLang ``--attn-dp-size``): every GPU holds the attention, the
    dense layers, the shared experts and the embeddings whole, and 1/ep of the routed experts
    (which are inside the format's quantized parameters in every format: ``quantized_params``)."""
    terms = weight_terms(arch, quantization)
    experts = expert_weight_params(arch)
    return component_of(
        "weights", "((quantized_params - expert_params + expert_params / ep) * bits "
        "+ other_params * other_bits) / 8 * scale",
        {**terms, "expert_params": experts, "ep": ep, "scale": scale},
        "vLLM data-parallel deployment (expert parallelism: experts split over the DP ranks)",
        f"{quantization} weights; attention and dense layers on every GPU, routed experts / {ep}")


def serving_share(job: Job, tp: int, pp: int, budget: ServingBudget, ep: int = 1
                  ) -> ServingShare:
    """vLLM/SGLang: weights / (tp x pp), KV cache per sequence x ``kv_share`` / pp, the
    workspace of a forward pass over min(max_batched_tokens, context x sequences) tokens,
    non-torch memory and CUDA graphs. Hugging Face ``generate``: ``hf_serving.py``. ``ep``:
    data-parallel attention over ep ranks with the routed experts split over them
    (``expert_parallel_weights``: the dense layers whole on every GPU, an upper bound where a
    stated TP splits them; ``job.batch`` is one rank's sequences). EP over the tensor-parallel
    ranks themselves (``ep == tp``: SGLang ``--tp 16 --ep 16``) splits every weight tp ways, as
    tensor parallelism does."""
    arch = job.arch
    if ep > 1 and arch.moe is not None and ep != tp:
        weights = expert_parallel_weights(arch, job.quantization, job.param_scale, ep)
    else:
        weights = serving_weights(arch, job.quantization, job.param_scale, tp * pp,
                                  busiest_share(arch, tp, pp) if pp > 1 else None)
    if job.framework == "hf":
        return _hf_share(job, weights, tp, pp, budget)
    kv = kv_cache_share(job, tp, pp, budget)
    per_seq = kv_cache_share(job, tp, pp, budget, sequences=1).bytes
    chunk = min(budget.batched_tokens(job.gpu), job.seq_len * job.batch)
    if job.framework == "llamacpp":  # ggml's compute buffer holds f32 intermediates
        workspace = component(
            "activations", "workspace_16bit * 2", "llama.cpp compute buffer (ggml, f32)",
            f"one layer's intermediates over n_ubatch = {chunk:,} tokens, in f32",
            workspace_16bit=forward_workspace_bytes(arch, chunk, job.batch, tp))
        fixed = component("overhead", "non_torch + cuda_graphs", "llama.cpp: the CUDA context "
                          "and cuBLAS, no CUDA graph pool", non_torch=budget.non_torch_bytes,
                          cuda_graphs=budget.cuda_graph_bytes)
    else:
        workspace = component("activations", "workspace", "vLLM profile run",
                              f"forward workspace of one layer over {chunk:,} tokens + fp32 "
                              "sampling logits",
                              workspace=forward_workspace_bytes(arch, chunk, job.batch, tp))
        fixed = component("overhead", "non_torch + cuda_graphs", "vLLM worker memory profiling",
                          non_torch=budget.non_torch_bytes, cuda_graphs=budget.cuda_graph_bytes)
    parts: tuple[Component, ...] = (weights, kv, workspace, fixed)
    adapters = lora_slots(job, tp)
    if adapters is not None:  # allocated up front, like the weights: no room for sequences
        parts, fixed_bytes = (*parts, adapters), workspace.bytes + fixed.bytes + adapters.bytes
    else:
        fixed_bytes = workspace.bytes + fixed.bytes
    return ServingShare(parts, weights.bytes, workspace.bytes, per_seq, per_seq, fixed_bytes,
                        budget.memory_fraction)


def lora_slots(job: Job, tp: int) -> Component | None:
    """vLLM ``--enable-lora``: buffers for ``--max-loras`` adapters of ``--max-lora-rank`` on
    every supported linear, allocated at start in the model's 16-bit dtype (``lora_dtype``
    auto), whatever adapters are loaded; under TP each GPU holds its share (one side of each
    adapter, rank x hidden, is not split: a lower bound there)."""
    if not job.lora_slots:
        return None
    return component("weights", "slots * adapter_params * bytes / tp",
                     "vLLM LoRA (lora/punica: stacked lora_a / lora_b buffers per slot)",
                     f"{job.lora_slots} LoRA slots of rank {job.lora_rank}",
                     slots=job.lora_slots,
                     adapter_params=lora_params(job.arch, job.lora_rank, "all_linear"),
                     bytes=2, tp=tp)


def _hf_share(job: Job, weights: Component, tp: int, pp: int,
              budget: ServingBudget) -> ServingShare:
    kv, working, reserve, workspace = hf_serving_components(job, tp, pp)
    mask = working.term_map["mask"]
    growing = kv.bytes + working.bytes - mask + reserve.bytes - reserve.term_map["outside_pytorch"]
    per_seq = -(-round(growing) // max(1, job.batch))
    fixed = round(mask + reserve.term_map["outside_pytorch"]) + workspace.bytes
    return ServingShare((weights, kv, working, reserve, workspace), weights.bytes, working.bytes,
                        -(-kv.bytes // max(1, job.batch)), per_seq, fixed,
                        budget.memory_fraction)
