#!/usr/bin/env python3
"""gpu_peaks.py -- measured end-to-end GPU memory of real jobs on one GPU.

Full-size public architectures (config values typed in from the published config.json files),
random init directly on the GPU (nothing is downloaded), then what a person really runs:

  train   HF-Trainer-style step: forward with labels (transformers' own loss), backward,
          optimizer step, zero_grad; 3 steps; peak over all steps and over steps 2-3.
          precision 'bf16_mixed' = fp32 params + torch.autocast(bfloat16) (HF Trainer bf16=True);
          precision 'bf16' = bf16 params, optimizer states in bf16.
          lora / qlora through peft (qlora: bitsandbytes nf4 + double quant, then
          prepare_model_for_kbit_training, which casts the non-4-bit parameters to fp32).
  infer   HF generate-style: prefill batch x (ctx - 16) tokens into a DynamicCache with
          logits_to_keep=1, then 16 greedy decode steps; peak, KV bytes.

Each record: torch.cuda max_memory_allocated / max_memory_reserved, the non-PyTorch memory the
driver reports (NVML used - reserved), parameter counts, step time and achieved model TFLOP/s,
and the fitcheck request that describes the same job.

Usage (on the GPU machine):  python3 gpu_peaks.py --out results.jsonl [--from-file runs.jsonl] [--only train|infer] [--ids a,b]
QLoRA and 8-bit Adam need bitsandbytes; LoRA and QLoRA need peft.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

transformers.logging.set_verbosity_error()

CFG = {
    "qwen2.5-0.5b": ("qwen2", dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                   num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                   max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1e6,
                                   tie_word_embeddings=True)),
    "qwen2.5-1.5b": ("qwen2", dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                                   num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                                   max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1e6,
                                   tie_word_embeddings=True)),
    "qwen2.5-3b": ("qwen2", dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                                 num_attention_heads=16, num_key_value_heads=2, vocab_size=151936,
                                 max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1e6,
                                 tie_word_embeddings=True)),
    "qwen2.5-7b": ("qwen2", dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                 num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                                 max_position_embeddings=131072, rms_norm_eps=1e-6, rope_theta=1e6,
                                 tie_word_embeddings=False)),
    "qwen2.5-14b": ("qwen2", dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=48,
                                  num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
                                  max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=1e6,
                                  tie_word_embeddings=False)),
    "qwen2.5-32b": ("qwen2", dict(hidden_size=5120, intermediate_size=27648, num_hidden_layers=64,
                                  num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
                                  max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=1e6,
                                  tie_word_embeddings=False)),
    "llama-3.2-1b": ("llama", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                   num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                                   vocab_size=128256, max_position_embeddings=131072,
                                   rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True)),
    "llama-3.2-3b": ("llama", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                                   num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                                   vocab_size=128256, max_position_embeddings=131072,
                                   rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True)),
    "llama-3.1-8b": ("llama", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                   num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                                   max_position_embeddings=131072, rms_norm_eps=1e-5,
                                   rope_theta=500000.0, tie_word_embeddings=False)),
    "mistral-7b-v0.1": ("mistral", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                        num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
                                        max_position_embeddings=32768, sliding_window=4096,
                                        rms_norm_eps=1e-5, tie_word_embeddings=False)),
    "gemma-2-2b": ("gemma2", dict(hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                                  num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                                  vocab_size=256000, query_pre_attn_scalar=256, sliding_window=4096,
                                  tie_word_embeddings=True)),
    "gemma-2-9b": ("gemma2", dict(hidden_size=3584, intermediate_size=14336, num_hidden_layers=42,
                                  num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                                  vocab_size=256000, query_pre_attn_scalar=256, sliding_window=4096,
                                  tie_word_embeddings=True)),
    "phi-3-mini": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                                num_attention_heads=32, num_key_value_heads=32, vocab_size=32064,
                                max_position_embeddings=4096, original_max_position_embeddings=4096,
                                sliding_window=2047, rms_norm_eps=1e-5, tie_word_embeddings=False)),
}

CFG.update({
    "tinyllama-1.1b": ("llama", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
                                     num_attention_heads=32, num_key_value_heads=4, vocab_size=32000,
                                     max_position_embeddings=2048, rms_norm_eps=1e-5,
                                     tie_word_embeddings=False)),
    "gpt2-xl": ("gpt2", dict(n_embd=1600, n_layer=48, n_head=25, n_positions=1024, vocab_size=50257)),
})


def T(id_, model, seq, mb, ckpt, precision="bf16_mixed", optim="adamw_fused", method="full", rank=16,
      targets="all_linear", attn="sdpa"):
    return dict(id=id_, kind="train", model=model, seq=seq, mb=mb, ckpt=ckpt, precision=precision,
                optim=optim, method=method, rank=rank, targets=targets, attn=attn)


def I(id_, model, batch, ctx, attn="sdpa"):
    return dict(id=id_, kind="infer", model=model, batch=batch, ctx=ctx, attn=attn)


SCENARIOS = [
    T("t01", "qwen2.5-0.5b", 2048, 8, False),
    T("t02", "qwen2.5-0.5b", 2048, 8, False, optim="adamw_foreach"),
    T("t03", "llama-3.2-1b", 4096, 2, False),
    T("t04", "llama-3.2-1b", 4096, 2, True),
    T("t05", "qwen2.5-1.5b", 2048, 4, True),
    T("t06", "llama-3.2-3b", 2048, 2, True),
    T("t07", "gemma-2-2b", 2048, 2, True, attn="eager"),
    T("t08", "qwen2.5-3b", 4096, 1, False, precision="bf16"),
    T("t09", "llama-3.1-8b", 2048, 1, True, precision="bf16"),
    T("t10", "phi-3-mini", 4096, 1, True, precision="bf16", optim="adamw_8bit"),
    T("t11", "llama-3.1-8b", 2048, 4, True, method="lora", rank=16),
    T("t12", "llama-3.1-8b", 4096, 1, False, method="lora", rank=16),
    T("t13", "qwen2.5-7b", 2048, 2, True, method="lora", rank=16, targets="attention"),
    T("t14", "mistral-7b-v0.1", 4096, 2, True, method="lora", rank=64),
    T("t15", "llama-3.1-8b", 2048, 2, True, method="qlora", rank=16),
    T("t16", "qwen2.5-14b", 4096, 1, True, method="qlora", rank=64),
    T("t17", "llama-3.2-1b", 8192, 4, True),
    T("t18", "qwen2.5-1.5b", 1024, 16, False, optim="adamw_foreach"),
    I("i01", "llama-3.1-8b", 8, 8192),
    I("i02", "qwen2.5-7b", 32, 4096),
    I("i03", "qwen2.5-14b", 4, 16384),
    I("i04", "qwen2.5-32b", 1, 8192),
    I("i05", "mistral-7b-v0.1", 16, 4096),
    I("i06", "gemma-2-9b", 8, 4096),
    I("i08", "llama-3.2-3b", 64, 2048),
]



def fitcheck_request(sc: dict) -> dict:
    """The fitcheck request that describes the same job (one H100 80GB)."""
    req = {"model": sc["model"], "gpu": "h100-80gb", "gpu_count": 1}
    if sc["kind"] == "infer":
        return req | {"task": "infer", "seq_len": sc["ctx"], "batch": sc["batch"]}
    req |= {"seq_len": sc["seq"], "micro_batch": sc["mb"], "recompute": "full" if sc["ckpt"] else "none",
            "flash_attn": sc["attn"] != "eager", "framework": "hf"}
    req["precision"] = "bf16_mixed" if sc["precision"] == "bf16_mixed" else "bf16"
    req["optimizer"] = "adamw_8bit" if sc["optim"] == "adamw_8bit" else "adamw"
    if sc["method"] == "full":
        req["task"] = "train"
    else:
        req |= {"task": "finetune", "finetune_method": sc["method"], "lora_rank": sc["rank"],
                "lora_targets": sc["targets"]}
        if sc["method"] == "qlora":
            req["quantization"] = "nf4"
    return req


def nvml_used() -> int | None:
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return int(pynvml.nvmlDeviceGetMemoryInfo(h).used)
    except Exception:
        return None


def sync_mem() -> dict:
    torch.cuda.synchronize()
    return {"allocated": torch.cuda.memory_allocated(), "max_allocated": torch.cuda.max_memory_allocated(),
            "reserved": torch.cuda.memory_reserved(), "max_reserved": torch.cuda.max_memory_reserved()}


def clean() -> None:
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def build(model_id: str, dtype: torch.dtype, attn: str):
    mtype, kw = CFG[model_id]
    cfg = AutoConfig.for_model(mtype, **kw)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attn)
    return model


def to_nf4(model) -> int:
    """Replace every nn.Linear inside the decoder layers by a bitsandbytes nf4 Linear4bit."""
    import bitsandbytes as bnb
    n = 0
    for name, mod in list(model.model.layers.named_modules()):
        for cname, child in list(mod.named_children()):
            if isinstance(child, torch.nn.Linear):
                q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                      compute_dtype=torch.bfloat16, compress_statistics=True,
                                      quant_type="nf4", device="meta")
                w = bnb.nn.Params4bit(data=child.weight.data, requires_grad=False, compress_statistics=True,
                                      quant_type="nf4")
                q.weight = w.to("cuda")
                if child.bias is not None:
                    q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
                setattr(mod, cname, q)
                del child
                n += 1
    model.is_loaded_in_4bit = True
    gc.collect()
    torch.cuda.empty_cache()
    return n


def count(model) -> tuple[int, int]:
    seen, total, train = set(), 0, 0
    for p in model.parameters():
        if p.data_ptr() in seen:
            continue
        seen.add(p.data_ptr())
        n = p.numel() * (2 if p.__class__.__name__ == "Params4bit" else 1)  # 4-bit packs 2 per byte
        total += n
        train += n if p.requires_grad else 0
    return total, train


def run_train(sc: dict) -> dict:
    rec: dict = {}
    dtype = torch.float32 if (sc["precision"] == "bf16_mixed" and sc["method"] == "full") else torch.bfloat16
    model = build(sc["model"], dtype, sc["attn"])
    if sc["method"] == "qlora":
        rec["nf4_linears"] = to_nf4(model)
    if sc["method"] in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
        if sc["method"] == "qlora":
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=sc["ckpt"],
                                                    gradient_checkpointing_kwargs={"use_reentrant": False})
        else:
            for p in model.parameters():
                p.requires_grad_(False)
        tm = "all-linear" if sc["targets"] == "all_linear" else ["q_proj", "k_proj", "v_proj", "o_proj"]
        model = get_peft_model(model, LoraConfig(r=sc["rank"], lora_alpha=2 * sc["rank"], lora_dropout=0.05,
                                                 target_modules=tm, task_type="CAUSAL_LM"))
    if sc["ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if sc["method"] != "full" and hasattr(model, "enable_input_require_grads"):
            model.enable_input_require_grads()
    model.config.use_cache = False
    model.train()
    rec["params_total"], rec["params_trainable"] = count(model)
    params = [p for p in model.parameters() if p.requires_grad]
    if sc["optim"] == "adamw_8bit":
        import bitsandbytes as bnb
        opt = bnb.optim.AdamW8bit(params, lr=1e-5)
    else:
        opt = torch.optim.AdamW(params, lr=1e-5, fused=sc["optim"] == "adamw_fused",
                                foreach=sc["optim"] == "adamw_foreach")
    rec["after_load"] = sync_mem()
    vocab = CFG[sc["model"]][1]["vocab_size"]
    ids = torch.randint(3, vocab, (sc["mb"], sc["seq"]), device="cuda")
    autocast = sc["precision"] == "bf16_mixed"
    torch.cuda.reset_peak_memory_stats()
    steps, times, peaks = 3, [], []
    for step in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            out = model(input_ids=ids, labels=ids)
        loss = out.loss
        del out
        if step == steps - 1:
            rec["after_forward_last"] = sync_mem()
        loss.backward()
        del loss
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        peaks.append(torch.cuda.max_memory_allocated())
        if step == 0:
            rec["peak_step1"] = sync_mem()
            rec["nvml_minus_reserved_step1"] = (nvml_used() or 0) - torch.cuda.memory_reserved()
            torch.cuda.reset_peak_memory_stats()
    rec["peak_steps_2_3"] = sync_mem()
    rec["peak_allocated"] = max(rec["peak_step1"]["max_allocated"], rec["peak_steps_2_3"]["max_allocated"])
    rec["peak_reserved"] = max(rec["peak_step1"]["max_reserved"], rec["peak_steps_2_3"]["max_reserved"])
    rec["nvml_used_end"] = nvml_used()
    rec["reserved_end"] = torch.cuda.memory_reserved()
    rec["after_steps_allocated"] = torch.cuda.memory_allocated()
    rec["step_s"] = times
    tokens = sc["seq"] * sc["mb"]
    n_active = rec["params_total"]
    mult = 6 if sc["method"] == "full" else 4  # frozen base: no weight-gradient matmuls
    if sc["ckpt"]:
        mult += 2
    rec["model_tflops_per_s"] = mult * n_active * tokens / min(times[1:]) / 1e12
    del opt, model, ids
    return rec


def cache_bytes(cache) -> int:
    seen = {}
    for layer in getattr(cache, "layers", []):
        for v in vars(layer).values():
            if isinstance(v, torch.Tensor):
                seen[v.untyped_storage().data_ptr()] = v.untyped_storage().nbytes()
    if not seen:
        for lst in (getattr(cache, "key_cache", []), getattr(cache, "value_cache", [])):
            for v in lst:
                seen[v.untyped_storage().data_ptr()] = v.untyped_storage().nbytes()
    return sum(seen.values())


def run_infer(sc: dict) -> dict:
    rec: dict = {}
    model = build(sc["model"], torch.bfloat16, sc["attn"])
    model.eval()
    rec["params_total"], _ = count(model)
    rec["after_load"] = sync_mem()
    vocab = CFG[sc["model"]][1]["vocab_size"]
    decode = 16
    ids = torch.randint(3, vocab, (sc["batch"], sc["ctx"] - decode), device="cuda")
    torch.cuda.reset_peak_memory_stats()
    with torch.inference_mode():
        t0 = time.perf_counter()
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        cache = out.past_key_values
        nxt = out.logits[:, -1:].argmax(-1)
        del out
        torch.cuda.synchronize()
        rec["prefill_s"] = time.perf_counter() - t0
        rec["after_prefill"] = sync_mem()
        t0 = time.perf_counter()
        for _ in range(decode):
            out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
            nxt = out.logits[:, -1:].argmax(-1)
            del out
        torch.cuda.synchronize()
        rec["decode_s_per_token"] = (time.perf_counter() - t0) / decode
    rec["peak"] = sync_mem()
    rec["peak_allocated"] = rec["peak"]["max_allocated"]
    rec["peak_reserved"] = rec["peak"]["max_reserved"]
    rec["kv_cache_bytes"] = cache_bytes(cache)
    rec["nvml_used_end"] = nvml_used()
    rec["reserved_end"] = torch.cuda.memory_reserved()
    del model, cache, ids
    return rec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=["train", "infer"])
    ap.add_argument("--ids")
    ap.add_argument("--from-file", help="a runs.jsonl whose scenarios to re-run")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.zeros(1, device="cuda")
    base = {"gpu": torch.cuda.get_device_name(0), "total_memory": torch.cuda.get_device_properties(0).total_memory,
            "torch": torch.__version__, "transformers": transformers.__version__, "cuda": torch.version.cuda,
            "nvml_used_after_init": nvml_used(), "reserved_after_init": torch.cuda.memory_reserved()}
    try:
        import peft
        base["peft"] = peft.__version__
    except Exception:
        pass
    try:
        import bitsandbytes
        base["bitsandbytes"] = bitsandbytes.__version__
    except Exception as e:
        base["bitsandbytes"] = f"missing: {e!r}"[:100]
    with open(a.out, "a") as f:
        f.write(json.dumps({"header": base}) + "\n")
    print(json.dumps(base), flush=True)
    ids = set(a.ids.split(",")) if a.ids else None
    scenarios = SCENARIOS
    if a.from_file:  # re-run the scenarios of a runs.jsonl (its "scenario" objects)
        scenarios = [json.loads(x)["scenario"] for x in open(a.from_file) if '"scenario"' in x]
    for sc in scenarios:
        if (a.only and sc["kind"] != a.only) or (ids and sc["id"] not in ids):
            continue
        clean()
        t0 = time.time()
        rec = {"scenario": sc, "fitcheck_request": fitcheck_request(sc), "tag": a.tag,
               "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
        try:
            rec |= run_train(sc) if sc["kind"] == "train" else run_infer(sc)
        except torch.OutOfMemoryError as e:
            rec |= {"oom": True, "error": str(e)[:400]}
        except Exception as e:
            rec |= {"error": repr(e)[:600], "trace": traceback.format_exc()[-1500:]}
        rec["wall_s"] = round(time.time() - t0, 1)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        short = {k: rec.get(k) for k in ("peak_allocated", "peak_reserved", "params_total", "kv_cache_bytes",
                                          "model_tflops_per_s", "oom", "error", "wall_s")}
        print(sc["id"], sc["model"], short, flush=True)
        clean()
    return 0


if __name__ == "__main__":
    sys.exit(main())
