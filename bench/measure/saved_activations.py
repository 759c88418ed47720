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
import datetime as dt
import gc
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
import transformers
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grid import ARCHS, Arch, Point, points_for
from recorder import USE_REENTRANT, measure

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
