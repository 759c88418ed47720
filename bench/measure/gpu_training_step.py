"""Real training steps and serving prefill on a GPU, at Llama-3-8B width, with memory per phase.

Training: a bf16 model with Llama-3-8B widths (hidden 4096, 32 heads, 8 KV heads, ffn 14336,
vocab 128256) and 2-4 layers runs forward (with loss), backward and an AdamW step twice; after
each phase we record torch.cuda memory_allocated / max_memory_allocated / max_memory_reserved.
``retained_for_backward`` (allocated after forward minus before it, outputs other than the loss
dropped) is the GPU counterpart of saved_activations.py's ``saved_bytes``; ``--saved-tensors``
also runs that script's hook-based measurement on the GPU for the per-tensor list.

Serving: weights plus a real DynamicCache / StaticCache filled by a prefill of batch x context
tokens (``logits_to_keep=1`` as generate() does); we record the prefill peak and the cache bytes.

``--dry-run`` runs a tiny model on CPU (peaks then come from the glibc heap) to test the code.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib.util
import itertools
import json
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recorder import HEAP_IN_USE, measure

LLAMA3_8B = {
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}
TINY = {
    **LLAMA3_8B,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": 896,
    "vocab_size": 1000,
}


def mem(device: torch.device) -> dict[str, int]:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return {
            "allocated": torch.cuda.memory_allocated(device),
            "max_allocated": torch.cuda.max_memory_allocated(device),
            "max_reserved": torch.cuda.max_memory_reserved(device),
        }
    heap = HEAP_IN_USE() if HEAP_IN_USE else 0
    return {"allocated": heap, "max_allocated": heap, "max_reserved": heap}


def reset_peak(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def build(widths: dict[str, Any], layers: int, attn: str, device: torch.device) -> Any:
    cfg = transformers.LlamaConfig(num_hidden_layers=layers, **widths)
    torch.manual_seed(0)
    with device:
        model = transformers.AutoModelForCausalLM.from_config(
            cfg, dtype=torch.bfloat16, attn_implementation=attn
        )
    return model


def train_case(
    a: argparse.Namespace, widths: dict[str, Any], rec: dict[str, Any], device: torch.device
) -> dict[str, Any]:
    layers, seq, mbs = rec["layers"], rec["seq"], rec["micro_batch"]
    attn, ckpt = rec["attn_implementation"], rec["gradient_checkpointing"]
    rec["phases"] = []
    reset_peak(device)
    model = build(widths, layers, attn, device)
    model.train()
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    rec["n_params"] = sum(p.numel() for p in model.parameters())
    rec["phases"].append({"phase": "weights", **mem(device)})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    ids = torch.randint(3, widths["vocab_size"], (mbs, seq), device=device)
    for step in range(a.steps):
        reset_peak(device)
        before = mem(device)
        out = model(input_ids=ids, labels=ids)
        loss = out.loss
        del out  # keep only what backward needs (a Trainer also drops the logits)
        fwd = mem(device)
        rec["phases"].append(
            {
                "phase": "forward",
                "step": step,
                **fwd,
                "retained_for_backward": fwd["allocated"] - before["allocated"],
            }
        )
        loss.backward()
        del loss
        rec["phases"].append({"phase": "backward", "step": step, **mem(device)})
        opt.step()
        rec["phases"].append({"phase": "optimizer_step", "step": step, **mem(device)})
        opt.zero_grad(set_to_none=True)
        rec["phases"].append({"phase": "zero_grad", "step": step, **mem(device)})
    if a.saved_tensors:
        reader = (lambda: torch.cuda.memory_allocated(device)) if device.type == "cuda" else HEAP_IN_USE
        rec["saved_tensors"] = measure(model, ids, verbose=a.verbose, memory_in_use=reader)
    del model, opt
    return rec


def cache_bytes(cache: Any) -> int:
    seen: dict[int, int] = {}
    for layer in getattr(cache, "layers", []):
        for v in vars(layer).values():
            if isinstance(v, torch.Tensor):
                seen[v.untyped_storage().data_ptr()] = v.untyped_storage().nbytes()
    return sum(seen.values())


def serve_case(widths: dict[str, Any], rec: dict[str, Any], device: torch.device) -> dict[str, Any]:
    layers, batch, ctx = rec["layers"], rec["batch"], rec["context"]
    attn, cache_kind = rec["attn_implementation"], rec["cache"]
    rec["phases"] = []
    reset_peak(device)
    model = build(widths, layers, attn, device)
    model.eval()
    rec["phases"].append({"phase": "weights", **mem(device)})
    ids = torch.randint(3, widths["vocab_size"], (batch, ctx), device=device)
    with torch.no_grad():
        if cache_kind == "static":
            cache: Any = transformers.StaticCache(config=model.config, max_cache_len=ctx + 16)
        else:
            cache = transformers.DynamicCache(config=model.config)
        reset_peak(device)
        out = model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        rec["phases"].append({"phase": "prefill", **mem(device)})
        nxt = out.logits[:, -1:].argmax(-1)
        del out
        for _ in range(4):
            out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
            nxt = out.logits[:, -1:].argmax(-1)
            del out
        rec["phases"].append({"phase": "decode4", **mem(device)})
    kv = 2 * layers * batch * widths["num_key_value_heads"] * widths["head_dim"] * 2
    rec["kv_cache_bytes"] = cache_bytes(cache)
    rec["kv_cache_bytes_per_position"] = kv  # 2 (K,V) x layers x batch x kv width x 2 B
    del model, cache
    return rec


def header(device: torch.device) -> dict[str, Any]:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "device": device.type,
        "device_name": name,
        "total_memory": torch.cuda.get_device_properties(device).total_memory
        if device.type == "cuda"
        else None,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--mode", choices=["train", "serve", "both"], default="both")
    p.add_argument("--layers", nargs="*", type=int, default=[2, 4])
    p.add_argument("--seq", nargs="*", type=int, default=[2048, 4096, 8192])
    p.add_argument("--micro-batch", nargs="*", type=int, default=[1, 2, 4])
    p.add_argument("--ckpt", nargs="*", choices=["off", "on"], default=["off", "on"])
    p.add_argument("--attn", nargs="*", default=None, help="default: sdpa (+flash_attention_2)")
    p.add_argument("--serve-batch", nargs="*", type=int, default=[1, 8, 32])
    p.add_argument("--serve-context", nargs="*", type=int, default=[2048, 8192, 32768])
    p.add_argument("--cache", nargs="*", choices=["dynamic", "static"], default=["dynamic", "static"])
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--saved-tensors", action="store_true", help="also run the saved-tensor hooks")
    p.add_argument("--verbose", action="store_true", help="with --saved-tensors: per-tensor list")
    p.add_argument("--dry-run", action="store_true", help="tiny widths on CPU, to test the code")
    a = p.parse_args(argv)
    device = torch.device("cpu" if a.dry_run else "cuda")
    widths = TINY if a.dry_run else LLAMA3_8B
    attns = a.attn or (["sdpa"] + (["flash_attention_2"] if importlib.util.find_spec("flash_attn") else []))
    transformers.logging.set_verbosity_error()
    doc: dict[str, Any] = {"header": header(device), "widths": widths, "records": []}

    def run(tag: str, fn: Callable[[], dict[str, Any]]) -> None:
        try:
            rec = fn()
        except torch.OutOfMemoryError as e:
            rec = {"tag": tag, "oom": True, "error": str(e)[:300]}
        except Exception as e:  # record and keep going
            rec = {"tag": tag, "error": repr(e)[:300]}
        rec["tag"] = tag
        doc["records"].append(rec)
        print(tag, {k: v for k, v in rec.items() if k not in ("phases", "saved_tensors")}, flush=True)
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)

    if a.mode in ("train", "both"):
        for L, s, b, at, ck in itertools.product(a.layers, a.seq, a.micro_batch, attns, a.ckpt):
            rec = {"mode": "train", "layers": L, "seq": s, "micro_batch": b}
            rec |= {"attn_implementation": at, "gradient_checkpointing": ck == "on"}
            rec["use_reentrant"] = False if ck == "on" else None
            run(f"train/L{L}/s{s}/b{b}/{at}/ckpt={ck}", lambda r=rec: train_case(a, widths, r, device))
    if a.mode in ("serve", "both"):
        for L, b, c, at, ck in itertools.product(a.layers, a.serve_batch, a.serve_context, attns, a.cache):
            rec = {"mode": "serve", "layers": L, "batch": b, "context": c}
            rec |= {"attn_implementation": at, "cache": ck}
            run(f"serve/L{L}/b{b}/ctx{c}/{at}/{ck}", lambda r=rec: serve_case(widths, r, device))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
