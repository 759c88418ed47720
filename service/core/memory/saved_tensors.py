"""The tensors one transformer layer keeps for backward, item by item, per token.

Each ``Saved`` item is one tensor autograd keeps alive between forward and backward, sized in
bytes per token of the micro-batch. Implementation profiles:

- ``hf``: Hugging Face ``transformers`` modules computing in 16-bit on CUDA (what DeepSpeed,
  FSDP mixed precision and accelerate run). Derived from and checked against saved-tensor
  hooks on real models (``bench/measure/FINDINGS.md``): RMSNorm keeps an fp32 copy of its
  input, eager attention an fp32 softmax, SDPA q, k, v, output and an fp32 log-sum-exp.
- ``hf_cpu``: the same modules on CPU, where the measurements ran: dropout keeps a 16-bit
  noise tensor (CUDA: a 1-byte mask), LayerNorm statistics are 16-bit, and SDPA with dropout
  falls back to an fp32 math path.
- ``megatron``: Megatron-LM / Transformer Engine fused kernels. For a GPT with a 4h MLP and
  dropout it is exactly Korthikanti et al. 2022 (arXiv 2205.05198), eq. 2: 34h + 5as per token.

Regimes of the ``hf`` profile (``LayerSetup``), checked against peak memory measured on an H100
(``tests/data/gpu_runs``; ``bench/gpu_accuracy.py``):
- 16-bit modules (DeepSpeed, FSDP, pure bf16): the items above;
- ``autocast``: fp32 parameters under ``torch.autocast`` (HF Trainer ``bf16=True``): the residual
  stream is fp32 (fp32 embeddings plus bf16 linear outputs promote to fp32), norms keep their
  fp32 output, and every linear keeps its own bf16 cast of an fp32 input (autocast caches casts
  of weights only: ``aten/src/ATen/autocast_mode.cpp`` ``cached_cast``);
- ``adapters`` (LoRA, QLoRA): the frozen base keeps no linear inputs and norms keep no output
  (autograd saves an input only for a weight that needs a gradient); each adapted linear keeps
  its adapter's input (``saved_adapters.py``). QLoRA's 4-bit linears return fp32
  (bitsandbytes ``Linear4bit.forward``), so its MLP intermediates are fp32.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.model.architecture import Architecture
from service.core.model.linears import mlp_linear_shapes

GEMMA_FAMILIES = ("gemma", "gemma2", "gemma3_text")
PYTHON_GELUS = ("gelu_new", "gelu_fast")  # transformers' formula activations: 4 saved tensors


@dataclass(frozen=True, slots=True)
class Saved:
    name: str
    bytes_per_token: float
    tp_split: bool  # split by tensor parallelism (always split when sequence parallel)
    core: bool = False  # core-attention tensors that selective recompute drops


@dataclass(frozen=True, slots=True)
class LayerSetup:
    """What changes the saved tensors of a layer besides the architecture."""

    seq_len: int
    elem_bytes: int  # 2 for 16-bit compute, 4 for fp32
    flash: bool  # fused attention (FlashAttention / SDPA): no s x s matrices
    profile: str  # "hf", "hf_cpu" or "megatron"
    linear_input_bytes: int = 0  # fp8 recipes save linear inputs in fp8 (1 B); 0: elem_bytes
    micro_batch: int = 1
    autocast: bool = False  # fp32 parameters and residual stream under torch.autocast
    adapter_rank: int = 0  # LoRA rank when only adapters train (0: every weight trains)
    adapter_targets: str = "all_linear"
    residual_bytes: int = 0  # bytes of a residual-stream element (0: elem_bytes)
    mlp_bytes: int = 0  # bytes of an MLP intermediate element (0: elem_bytes)

    @property
    def rs(self) -> int:
        """Bytes of one residual-stream element (fp32 under autocast and in QLoRA)."""
        return self.residual_bytes or self.elem_bytes

    @property
    def mlp_e(self) -> int:
        return self.mlp_bytes or self.elem_bytes

    @property
    def adapters(self) -> bool:
        return self.adapter_rank > 0

    @property
    def lin(self) -> int:
        """Bytes of one saved linear-layer input element (Transformer Engine fp8: 1)."""
        return self.linear_input_bytes or self.elem_bytes

    @property
    def hf(self) -> bool:
        return self.profile in ("hf", "hf_cpu")

    @property
    def cpu(self) -> bool:
        return self.profile == "hf_cpu"

    @property
    def mask_bytes(self) -> int:
        """One dropout-mask element: CUDA ``native_dropout`` keeps a bool; CPU a 16-bit noise."""
        return self.elem_bytes if self.cpu else 1

    @property
    def layernorm_stats(self) -> int:
        """LayerNorm mean + rstd per token: fp32 on CUDA (8 B), the input dtype on CPU."""
        return 2 * self.elem_bytes if self.cpu else 8


def norm_saved(arch: Architecture, s: LayerSetup, name: str, keeps_input: bool = True,
               width: int = 0) -> list[Saved]:
    """One norm's saved tensors.

    hf RMSNorm (``LlamaRMSNorm``): fp32 input 4w, rsqrt 4, normalized in the input's dtype
    (16-bit e*w; fp32 under autocast, whose residual is fp32), kept only when the norm's weight
    trains. hf Gemma RMSNorm normalizes in fp32: fp32 normalized 4w.
    LayerNorm (``native_layer_norm``, an fp32 op under autocast) and fused TE norms: the input
    (residual dtype) plus mean/rstd; under a parallel residual the second norm reads the same
    input (``keeps_input=False``).
    """
    w = width or arch.hidden
    if s.hf and arch.norm == "rmsnorm":
        out = 4 if (arch.family in GEMMA_FAMILIES or s.autocast) else s.elem_bytes
        kept = 0 if s.adapters else out * w
        return [Saved(f"{name} fp32 input", 4 * w, False),
                Saved(f"{name} normalized + rsqrt", kept + 4, False)]
    stats = s.layernorm_stats if arch.norm == "layernorm" else 4
    return [Saved(f"{name} input + stats", (s.rs * w if keeps_input else 0) + stats, False)]


def mlp_input_copies(arch: Architecture) -> int:
    """Linears reading the MLP's input: gate and up (fused gate_up_proj in Phi-3), or one."""
    return len(mlp_linear_shapes(arch, arch.ffn)) - 1


def dropout_mask(s: LayerSetup, name: str, elements_per_token: float, split: bool) -> Saved:
    return Saved(f"{name} dropout mask", s.mask_bytes * elements_per_token, split)


def mlp_saved(arch: Architecture, ffn: int, s: LayerSetup) -> list[Saved]:
    """One MLP's saved tensors past its input.

    Gated (SwiGLU/GeGLU): gate output, act(gate), up output (3e*f) and their product, the
    down projection's input (8f in 16-bit): HF ``LlamaMLP`` and Megatron's fused fc1 alike.
    Plain: the up output (the activation's input) and the down input (4f); transformers'
    formula GELUs (``gelu_new``: GPT-2) keep x, tanh(.), 0.5x and 1 + tanh(.) (10f in all).
    The down input is a linear input: fp8 under Transformer Engine fp8.
    """
    e = s.mlp_e
    down = [] if s.adapters else [Saved("mlp down-proj input", s.lin * ffn, True)]
    if arch.mlp == "gated":
        return [Saved("mlp gate, up, act", 3 * e * ffn, True), *down]
    if s.hf and arch.activation in PYTHON_GELUS:
        # x, tanh(.), 0.5x and 1 + tanh(.); under autocast pow runs in fp32 (an fp32 autocast
        # op), so x, tanh and 1 + tanh are fp32 copies
        kept = (4 + 4 + 4 + e) if s.autocast else 4 * e
        return [Saved("mlp up and activation intermediates", kept * ffn, True), *down]
    return [Saved("mlp up and activation intermediates", e * ffn, True), *down]


def moe_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """An MoE layer past its input: the router and k routed copies of each token.

    Router: fp32 softmax over E experts, top-k indices (int64) and weights (fp32) and their
    sum: 4E + 12k + 4. Each routed copy (HF ``grouped_mm`` experts): the gathered input and
    the expert output (2 x e*h), the expert MLP, the fp32 routing weight and three int64
    permutation indices (28 B). Shared experts run on every token.
    """
    assert arch.moe is not None
    moe, e, k = arch.moe, s.elem_bytes, arch.moe.experts_per_token
    items = [Saved("router softmax and top-k", 4 * moe.experts + 12 * k + 4, False),
             Saved("routed token copies in/out + indices", k * (2 * e * arch.hidden + 28), True)]
    items += [Saved(f"experts: {x.name}", k * x.bytes_per_token, True)
              for x in mlp_saved(arch, moe.expert_ffn, s)]
    if moe.shared_experts:
        shared = moe.shared_experts * (moe.shared_expert_ffn or moe.expert_ffn)
        items += [Saved(f"shared experts: {x.name}", x.bytes_per_token, True)
                  for x in mlp_saved(arch, shared, s)]
    return items


def ffn_saved(arch: Architecture, s: LayerSetup, moe_layer: bool) -> list[Saved]:
    """The MLP half of a layer: its norm(s), its input, the MLP or MoE, residual dropout."""
    shared_input = arch.parallel_residual
    items: list[Saved] = []
    if arch.norms_per_layer >= 2:
        items += norm_saved(arch, s, "mlp norm", keeps_input=not shared_input)
    if (arch.norms_per_layer >= 2 or not shared_input) and not s.adapters:
        copies = mlp_input_copies(arch) if s.autocast else 1
        items.append(Saved("mlp input", copies * s.lin * arch.hidden, False))
    if arch.norms_per_layer == 4:  # Gemma: post-attention and post-MLP norms
        items += norm_saved(arch, s, "post-attention norm")
        items += norm_saved(arch, s, "post-mlp norm")
    items += moe_saved(arch, s) if (moe_layer and arch.moe is not None) \
        else mlp_saved(arch, arch.ffn, s)
    if arch.dropout > 0:
        items.append(dropout_mask(s, "mlp residual", arch.hidden, False))
    return items
