"""Measure the bytes autograd keeps for backward in real Hugging Face causal LMs.

Each record builds a randomly initialised model from a config object (nothing is downloaded),
puts it in train mode, runs ``model(input_ids, labels=input_ids)`` under
``torch.autograd.graph.saved_tensors_hooks`` and adds up the distinct storages that the
autograd graph keeps for backward, leaving out the model's parameters and buffers.

With gradient checkpointing (``use_reentrant=False``) torch replaces the tensors saved inside a
checkpointed layer by its own holders (so our pack hook never sees them) and keeps the layer's
inputs alive in the recompute closure instead. Those inputs are caught by wrapping each layer's
``_gradient_checkpointing_func`` and are counted as ``checkpoint_held_bytes``.

A second, independent number, ``graph_freed_bytes``, is read from glibc's allocator: the heap
bytes released when the loss, its graph and every saved tensor are dropped. It includes a few
kB of autograd nodes and, with checkpointing, the CPU RNG state that checkpoint keeps per layer.

Run ``python bench/measure/saved_activations.py --out bench/measure/results/cpu_activations.json``.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import gc
import json
import platform
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import torch
import transformers
from torch import nn

LAYER_RE = re.compile(r"\.(?:layers|h)\.(\d+)(?:\.|$)")
USE_REENTRANT = False


# --------------------------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    experts: int = 0
    top_k: int = 0


@dataclass(frozen=True)
class Point:
    name: str
    shape: Shape
    seq: int
    batch: int


@dataclass(frozen=True)
class Arch:
    name: str
    model_type: str
    base: Shape
    free_head_dim: bool  # head_dim is a config field, not hidden // heads
    supports_gqa: bool
    build: Callable[[Shape, int], Any]
    extra: dict[str, Any]


def _llama_like(cls_name: str, **extra: Any) -> Callable[[Shape, int], Any]:
    def build(s: Shape, layers: int) -> Any:
        cls = getattr(transformers, cls_name)
        return cls(
            hidden_size=s.hidden,
            intermediate_size=s.ffn,
            num_hidden_layers=layers,
            num_attention_heads=s.heads,
            num_key_value_heads=s.kv_heads,
            head_dim=s.head_dim,
            vocab_size=s.vocab,
            max_position_embeddings=4096,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            **extra,
        )

    return build


def _gemma2(s: Shape, layers: int) -> Any:
    return transformers.Gemma2Config(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        head_dim=s.head_dim,
        query_pre_attn_scalar=s.head_dim,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
    )


def _phi3(s: Shape, layers: int) -> Any:
    return transformers.Phi3Config(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
        original_max_position_embeddings=4096,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )


def _gpt2(dropout: float) -> Callable[[Shape, int], Any]:
    def build(s: Shape, layers: int) -> Any:
        return transformers.GPT2Config(
            n_embd=s.hidden,
            n_head=s.heads,
            n_inner=s.ffn,
            n_layer=layers,
            vocab_size=s.vocab,
            n_positions=4096,
            resid_pdrop=dropout,
            embd_pdrop=dropout,
            attn_pdrop=dropout,
            bos_token_id=0,
            eos_token_id=0,
        )

    return build


def _gpt_neox(s: Shape, layers: int) -> Any:
    return transformers.GPTNeoXConfig(
        hidden_size=s.hidden,
        num_attention_heads=s.heads,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
    )


def _mixtral(s: Shape, layers: int) -> Any:
    return transformers.MixtralConfig(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        head_dim=s.head_dim,
        vocab_size=s.vocab,
        num_local_experts=s.experts,
        num_experts_per_tok=s.top_k,
        max_position_embeddings=4096,
        pad_token_id=0,
    )


GQA_BASE = Shape(hidden=512, heads=8, kv_heads=2, head_dim=64, ffn=1408, vocab=8000)
MHA_BASE = Shape(hidden=512, heads=8, kv_heads=8, head_dim=64, ffn=2048, vocab=8000)
MOE_BASE = replace(GQA_BASE, ffn=704, experts=8, top_k=2)

ARCHS: dict[str, Arch] = {
    a.name: a
    for a in [
        Arch("llama", "llama", GQA_BASE, True, True, _llama_like("LlamaConfig"), {}),
        Arch("mistral", "mistral", GQA_BASE, True, True, _llama_like("MistralConfig"), {}),
        Arch("qwen2", "qwen2", GQA_BASE, True, True, _llama_like("Qwen2Config"), {}),
        Arch("qwen3", "qwen3", GQA_BASE, True, True, _llama_like("Qwen3Config"), {}),
        Arch("gemma2", "gemma2", GQA_BASE, True, True, _gemma2, {}),
        Arch("phi3", "phi3", replace(GQA_BASE, kv_heads=8), False, True, _phi3, {}),
        Arch("gpt2", "gpt2", MHA_BASE, False, False, _gpt2(0.1), {}),
        Arch("gpt2_nodrop", "gpt2", MHA_BASE, False, False, _gpt2(0.0), {}),
        Arch("gpt_neox", "gpt_neox", MHA_BASE, False, False, _gpt_neox, {}),
        Arch("mixtral", "mixtral", MOE_BASE, True, True, _mixtral, {}),
        Arch(
            "mixtral_eager_experts",
            "mixtral",
            MOE_BASE,
            True,
            True,
            _mixtral,
            {"experts_implementation": "eager"},
        ),
    ]
}


def points_for(arch: Arch) -> list[Point]:
    """Base point plus one-factor-at-a-time variations (so each dependence can be separated)."""
    b = arch.base
    pts = [
        Point("base", b, 256, 1),
        Point("seq128", b, 128, 1),
        Point("seq512", b, 512, 1),
        Point("batch2", b, 256, 2),
        Point("vocab1000", replace(b, vocab=1000), 256, 1),
        Point("ffn_x2", replace(b, ffn=b.ffn * 2), 256, 1),
    ]
    if arch.free_head_dim:
        # hidden changes alone; q/kv widths stay at heads*head_dim.
        pts.append(Point("hidden256", replace(b, hidden=256), 256, 1))
        # fewer, wider heads: q width and kv width (kv_heads*head_dim) unchanged.
        pts.append(
            Point("heads4", replace(b, heads=4, head_dim=128, kv_heads=max(1, b.kv_heads // 2)), 256, 1)
        )
    else:
        pts.append(Point("hidden256", replace(b, hidden=256, head_dim=32), 256, 1))
        kv4 = 4 if b.kv_heads == b.heads else max(1, b.kv_heads // 2)
        pts.append(Point("heads4", replace(b, heads=4, head_dim=128, kv_heads=kv4), 256, 1))
    if arch.supports_gqa:
        other_kv = b.heads if b.kv_heads != b.heads else 2
        pts.append(Point("mha" if other_kv == b.heads else "gqa", replace(b, kv_heads=other_kv), 256, 1))
    if b.experts:
        pts.append(Point("experts4_top1", replace(b, experts=4, top_k=1), 256, 1))
    return pts


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            *["arena", "ordblks", "smblks", "hblks", "hblkhd"],
            *["usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"],
        )
    ]


def _heap_reader() -> Callable[[], int] | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = _MallInfo2

    def read() -> int:
        info = fn()
        return int(info.uordblks + info.hblkhd)

    return read


HEAP_IN_USE = _heap_reader()


@dataclass
class _Saved:
    tensor: torch.Tensor
    scope: str
    source: str  # "autograd" or "checkpoint_input"


class SavedTensorRecorder:
    """Pack hook that keeps every saved tensor and the module it was saved in."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.items: list[_Saved] = []
        self.unpacked: list[int] = []
        self._scope: list[str] = []
        self._handles: list[Any] = []
        self._wrapped: list[tuple[nn.Module, Callable[..., Any]]] = []

    # scope tracking --------------------------------------------------------------------------
    def _push(self, name: str) -> Callable[..., None]:
        def pre(_m: nn.Module, _args: Any) -> None:
            self._scope.append(name)

        return pre

    def _pop(self, _m: nn.Module, _args: Any, _out: Any) -> None:
        if self._scope:
            self._scope.pop()

    def __enter__(self) -> SavedTensorRecorder:
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._push(name or "<root>")))
            self._handles.append(module.register_forward_hook(self._pop))
        for module in self.model.modules():
            func = getattr(module, "_gradient_checkpointing_func", None)
            if func is not None and getattr(module, "gradient_checkpointing", False):
                self._wrapped.append((module, func))
                module._gradient_checkpointing_func = self._wrap_checkpoint(func)
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(None, None, None)
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for module, func in self._wrapped:
            module._gradient_checkpointing_func = func
        self._wrapped.clear()

    # hooks -----------------------------------------------------------------------------------
    def _pack(self, t: torch.Tensor) -> int:
        self.items.append(_Saved(t, self._scope[-1] if self._scope else "<top>", "autograd"))
        return len(self.items) - 1

    def _unpack(self, i: int) -> torch.Tensor:
        self.unpacked.append(i)
        return self.items[i].tensor

    def _wrap_checkpoint(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(fn: Any, *args: Any, **kwargs: Any) -> Any:
            scope = self._scope[-1] if self._scope else "<top>"
            held = list(args) + list(kwargs.values()) + list(getattr(fn, "keywords", {}).values())
            for t in _iter_tensors(held):
                self.items.append(_Saved(t, scope, "checkpoint_input"))
            return func(fn, *args, **kwargs)

        return wrapped

    # names from the graph --------------------------------------------------------------------
    def grad_fn_names(self, root: Any) -> dict[int, list[str]]:
        """Walk the graph from ``root`` and name, for each saved index, the node fields holding it.

        Reading a ``_saved_*`` field calls our unpack hook, which logs the index. Only safe
        without checkpointing (a checkpoint holder would recompute its layer when unpacked).
        """
        names: dict[int, list[str]] = {}
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            fields = [a for a in dir(node) if a.startswith("_saved_")]
            if hasattr(node, "saved_tensors") and not fields:
                fields = ["saved_tensors"]
            for attr in fields:
                self.unpacked.clear()
                try:
                    getattr(node, attr)
                except RuntimeError:
                    continue
                for i in self.unpacked:
                    names.setdefault(i, []).append(f"{node.name()}.{attr}")
            stack.extend(nxt for nxt, _ in node.next_functions)
        return names


def _iter_tensors(obj: Any) -> Iterator[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(o)


def _layer_of(scope: str) -> str:
    m = LAYER_RE.search("." + scope)
    return m.group(1) if m else "other"


def _summarise(
    items: list[_Saved],
    names: dict[int, list[str]],
    param_ptrs: set[int],
    buffer_ptrs: set[int],
    verbose: bool,
) -> dict[str, Any]:
    """Deduplicate saved tensors by storage; returns plain data only (no tensor references)."""
    storage_ids: dict[int, int] = {}
    first_scope: dict[int, str] = {}
    storage_bytes: dict[int, int] = {}
    storage_layers: dict[int, set[str]] = {}
    autograd_ptrs: set[int] = set()
    tensors: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        t = item.tensor
        st = t.untyped_storage()
        ptr, nbytes = st.data_ptr(), st.nbytes()
        if ptr in param_ptrs:
            status = "parameter"
        elif ptr in buffer_ptrs:
            status = "buffer"
        elif ptr == 0 or nbytes == 0:
            status = "empty"
        elif ptr in first_scope:
            status = "duplicate"
        else:
            status = "new"
            storage_ids[ptr] = len(storage_ids)
            first_scope[ptr] = item.scope
            storage_bytes[ptr] = nbytes
        if status in ("new", "duplicate"):
            storage_layers.setdefault(ptr, set()).add(_layer_of(item.scope))
            if item.source == "autograd":
                autograd_ptrs.add(ptr)
        if verbose:
            tensors.append(
                {
                    "i": i,
                    "scope": item.scope,
                    "source": item.source,
                    "grad_fn": names.get(i, []),
                    "shape": list(t.shape),
                    "dtype": str(t.dtype).removeprefix("torch."),
                    "storage": storage_ids.get(ptr),
                    "storage_nbytes": nbytes,
                    "status": status,
                }
            )

    by_layer: dict[str, int] = {}
    for ptr, scope in first_scope.items():
        key = _layer_of(scope)
        by_layer[key] = by_layer.get(key, 0) + storage_bytes[ptr]
    autograd_bytes = sum(n for p, n in storage_bytes.items() if p in autograd_ptrs)
    return {
        "saved_bytes": sum(storage_bytes.values()),
        "autograd_saved_bytes": autograd_bytes,
        "checkpoint_held_bytes": sum(storage_bytes.values()) - autograd_bytes,
        "saved_bytes_by_layer": dict(sorted(by_layer.items())),
        "bytes_in_storages_shared_across_layers": sum(
            storage_bytes[p] for p, ls in storage_layers.items() if len(ls) > 1
        ),
        "n_storages": len(storage_bytes),
        "tensors": tensors,
    }


def measure(
    model: nn.Module,
    input_ids: torch.Tensor,
    verbose: bool,
    memory_in_use: Callable[[], int] | None = HEAP_IN_USE,
) -> dict[str, Any]:
    """Saved-tensor bytes of one forward with loss; ``memory_in_use`` gives the freed cross-check
    (glibc heap on CPU; pass ``torch.cuda.memory_allocated`` on a GPU)."""
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    buffer_ptrs = {b.untyped_storage().data_ptr() for b in model.buffers()}
    checkpointing = any(getattr(m, "gradient_checkpointing", False) for m in model.modules())

    gc.collect()
    rec = SavedTensorRecorder(model)
    t0 = time.perf_counter()
    with rec:
        out = model(input_ids=input_ids, labels=input_ids)
    forward_s = time.perf_counter() - t0
    loss = out.loss
    del out

    names = rec.grad_fn_names(loss.grad_fn) if verbose and not checkpointing else {}
    stats = _summarise(rec.items, names, param_ptrs, buffer_ptrs, verbose)

    # Independent check: heap bytes released when the graph and the saved tensors go.
    freed: int | None = None
    if memory_in_use is not None:
        gc.collect()
        before = memory_in_use()
        del loss
        # The graph keeps our unpack hook (so the recorder) alive and the recorder keeps the
        # saved tensors (so the graph) alive: break that cycle by hand.
        rec.items.clear()
        del rec
        gc.collect()
        freed = before - memory_in_use()
    else:
        rec.items.clear()
    result: dict[str, Any] = {k: v for k, v in stats.items() if k != "tensors"}
    result["graph_freed_bytes"] = freed
    result["forward_s"] = round(forward_s, 3)
    if verbose:
        result["tensors"] = stats["tensors"]
    return result


# --------------------------------------------------------------------------------------------
# Running one record
# --------------------------------------------------------------------------------------------


def _head_dim_of(model: nn.Module) -> int | None:
    for m in model.modules():
        for attr in ("head_dim", "head_size"):
            v = getattr(m, attr, None)
            if isinstance(v, int) and "Attention" in type(m).__name__:
                return v
    return None


def config_summary(cfg: Any, model: nn.Module) -> dict[str, Any]:
    keys = [
        "model_type",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "intermediate_size",
        "vocab_size",
        "tie_word_embeddings",
        "hidden_act",
        "activation_function",
        "hidden_activation",
        "attention_dropout",
        "hidden_dropout",
        "resid_pdrop",
        "embd_pdrop",
        "attn_pdrop",
        "attention_bias",
        "mlp_bias",
        "attn_logit_softcapping",
        "final_logit_softcapping",
        "num_local_experts",
        "num_experts_per_tok",
        "sliding_window",
        "use_parallel_residual",
        "rope_parameters",
        "n_inner",
    ]
    out: dict[str, Any] = {k: getattr(cfg, k) for k in keys if hasattr(cfg, k)}
    if out.get("num_key_value_heads") is None:
        out["num_key_value_heads"] = cfg.num_attention_heads
    if out.get("intermediate_size") is None and hasattr(cfg, "n_inner"):
        out["intermediate_size"] = cfg.n_inner or 4 * cfg.hidden_size
    out["head_dim"] = _head_dim_of(model)
    impl = getattr(cfg, "_experts_implementation_internal", None)
    if impl is not None and out.get("num_local_experts"):
        out["experts_implementation"] = impl
    return out


def run_record(arch: Arch, point: Point, layers: int, attn: str, ckpt: bool, verbose: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    cfg = arch.build(point.shape, layers)
    kwargs: dict[str, Any] = {"dtype": torch.bfloat16, "attn_implementation": attn}
    kwargs.update(arch.extra)
    model = transformers.AutoModelForCausalLM.from_config(cfg, **kwargs)
    model.train()
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": USE_REENTRANT})
    ids = torch.randint(3, point.shape.vocab, (point.batch, point.seq))
    res = measure(model, ids, verbose)
    rec: dict[str, Any] = {
        "arch": arch.name,
        "point": point.name,
        "config": config_summary(model.config, model),
        "config_diff": json.loads(json.dumps(cfg.to_diff_dict(), default=str)),
        "seq": point.seq,
        "batch": point.batch,
        "tokens": point.seq * point.batch,
        "attn_implementation": model.config._attn_implementation,
        "gradient_checkpointing": ckpt,
        "use_reentrant": USE_REENTRANT if ckpt else None,
        "dtype": "bfloat16",
        "n_params": sum(p.numel() for p in model.parameters()),
    }
    rec.update(res)
    del model
    gc.collect()
    return rec


def header() -> dict[str, Any]:
    try:
        import peft

        peft_version: str | None = peft.__version__
    except ImportError:
        peft_version = None
    return {
        "what": "bytes autograd keeps for backward after model(input_ids, labels=input_ids)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": "cpu",
        "torch_threads": torch.get_num_threads(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "dedup": "distinct untyped_storage().data_ptr(), each counted once at its nbytes()",
        "excluded": "storages of model parameters and buffers",
        "gradient_checkpointing_kwargs": {"use_reentrant": USE_REENTRANT},
        "saved_bytes": "autograd-saved storages plus tensors held by non-reentrant checkpoint",
        "graph_freed_bytes": "glibc heap bytes released when loss, graph and saved tensors go",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--archs", nargs="*", default=list(ARCHS), choices=list(ARCHS))
    p.add_argument("--points", nargs="*", default=None, help="point names (default: all)")
    p.add_argument("--attn", nargs="*", default=["eager", "sdpa"])
    p.add_argument("--layers", nargs="*", type=int, default=[1, 2])
    p.add_argument("--ckpt", nargs="*", default=["off", "on"], choices=["off", "on"])
    p.add_argument(
        "--verbose-points",
        nargs="*",
        default=["base"],
        help="points whose records carry the per-tensor list ('all' for every point)",
    )
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()

    records: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    unsupported: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for arch_name in args.archs:
        arch = ARCHS[arch_name]
        for point in points_for(arch):
            if args.points and point.name not in args.points:
                continue
            verbose = "all" in args.verbose_points or point.name in args.verbose_points
            for attn in args.attn:
                for ckpt in args.ckpt:
                    for layers in args.layers:
                        tag = f"{arch.name}/{point.name}/{attn}/ckpt={ckpt}/L={layers}"
                        try:
                            rec = run_record(arch, point, layers, attn, ckpt == "on", verbose)
                        except ValueError as e:
                            if "does not support an attention implementation" not in str(e):
                                raise
                            unsupported.append({"record": tag, "error": str(e)[:200]})
                            print(f"UNSUPPORTED {tag}", file=sys.stderr, flush=True)
                            continue
                        except Exception as e:  # keep the grid going; report at the end
                            failures.append({"record": tag, "error": repr(e)})
                            print(f"FAIL {tag}: {e!r}", file=sys.stderr, flush=True)
                            continue
                        records.append(rec)
                        print(
                            f"{time.perf_counter() - t_start:7.1f}s {tag}: "
                            f"saved={rec['saved_bytes']} freed={rec['graph_freed_bytes']}",
                            file=sys.stderr,
                            flush=True,
                        )
    doc = {
        "header": header(),
        "records": records,
        "unsupported": unsupported,
        "failures": failures,
    }
    doc["header"]["wall_s"] = round(time.perf_counter() - t_start, 1)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {len(records)} records ({len(failures)} failures) to {args.out}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
