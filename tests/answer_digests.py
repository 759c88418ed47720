"""The answers of a broad set of requests, as digests of their JSON, so that speed work can
prove it changed no answer (``fixtures/answer_digests.json``, checked by
``test_answer_digests.py``).

Every preset x a few training, fine-tuning and serving jobs x GPUs with and without counts,
some with the fits-on table, and a set of odd requests (custom and Hugging Face
architectures, stated layouts, offload, the seed's method). An answer is
``answer_dict(compute_answer(...).answer)`` dumped with sorted keys; a request the engine
refuses has the error's text instead.

Regenerate after a deliberate change to the figures or the advice:
``python3 tests/answer_digests.py`` (``--dump DIR`` also writes every answer's JSON there, to
diff two versions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from service.answer_json import answer_dict  # noqa: E402
from service.answers import compute_answer  # noqa: E402
from service.core.errors import InvalidInput, UnknownName  # noqa: E402
from service.core.job.request import EstimateRequest  # noqa: E402
from service.core.model.presets import all_presets  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "answer_digests.json"
Case = tuple[dict[str, Any], bool]  # the request's fields, fits_on

PER_PRESET: tuple[dict[str, Any], ...] = (
    {"seq_len": 4096},
    {"seq_len": 4096, "global_batch": 256, "gpu": "h100-80gb"},
    {"seq_len": 8192, "global_batch": 512, "zero_stage": 3, "gpu": "a100-40gb", "gpu_count": 8},
    {"task": "finetune", "lora_rank": 16, "seq_len": 2048, "gpu": "rtx4090-24gb", "gpu_count": 1},
    {"task": "finetune", "quantization": "nf4", "seq_len": 2048, "gpu": "a100-80gb"},
    {"task": "infer", "seq_len": 8192, "batch": 8, "gpu": "h100-80gb"},
    {"task": "infer", "seq_len": 32768, "concurrent": 16, "quantization": "awq",
     "gpu": "l40s-48gb", "gpu_count": 2},
)
FITS_ON_EVERY = 6  # every sixth preset also gets the fits-on table for a job
FITS_ON_JOBS: tuple[dict[str, Any], ...] = (
    {"seq_len": 4096, "global_batch": 256, "gpu": "h100-80gb"},
    {"seq_len": 8192},
    {"task": "infer", "seq_len": 16384, "concurrent": 50},
)
CUSTOM_ARCH = {"layers": 48, "hidden": 6144, "heads": 48, "kv_heads": 8, "ffn": 16384,
               "vocab": 100_000}
HF_CONFIG = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
             "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
             "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192}
SPECIAL: tuple[Case, ...] = (
    ({"model": "llama-3.1-405b", "seq_len": 8192, "global_batch": 2048, "gpu": "h100-80gb"}, True),
    ({"model": "llama-3.1-405b", "seq_len": 8192, "global_batch": 2048}, True),
    ({"model": "llama-3.1-70b", "seq_len": 8192, "global_batch": 512, "gpu": "h100-80gb",
      "tokens": 2e12}, False),
    ({"model": "llama-3.1-70b", "seq_len": 8192, "gpu": "h100-80gb"}, False),
    ({"model": "llama-3.1-70b", "seq_len": 8192, "global_batch": 512, "gpu": "h100-80gb",
      "gpu_count": 8}, True),
    ({"model": "llama-3.1-70b", "seq_len": 8192, "tp": 8, "pp": 4, "gpu_count": 64,
      "global_batch": 256, "recompute": "full", "gpu": "h100-80gb"}, False),
    ({"model": "llama-3.1-70b", "seq_len": 131072, "gpu": "h100-80gb", "nodes": 4}, False),
    ({"model": "llama-3-8b", "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb",
      "gpu_count": 8}, True),
    ({"model": "llama-3-8b", "offload": "optimizer", "zero_stage": 3, "gpu": "rtx4090-24gb"},
     False),
    ({"model": "llama-3-8b", "precision": "fp8", "optimizer": "adamw_8bit",
      "framework": "megatron", "gpu": "h100-80gb", "gpu_count": 16}, False),
    ({"model": "llama-3-8b", "optimizer": "paged_adamw_8bit", "micro_batch": 4,
      "global_batch": 64, "recompute": "selective", "gpu": "a10g-24gb", "gpu_count": 8}, False),
    ({"model": "llama-3-8b", "flash_attn": False, "seq_len": 2048, "micro_batch": 2}, False),
    ({"model": "llama-3-8b", "chunked_loss": True, "gpu": "l4-24gb", "gpu_count": 4}, False),
    ({"model": "llama-3-8b", "framework": "fsdp", "shard_group": 8, "gpu": "h100-80gb",
      "nodes": 2}, False),
    ({"model": "mixtral-8x7b", "ep": 8, "zero_stage": 1, "gpu": "h100-80gb",
      "gpu_count": 16}, False),
    ({"model": "deepseek-v3", "seq_len": 4096, "global_batch": 1024, "gpu": "h200-141gb"}, True),
    ({"model": "qwen2.5-72b", "task": "infer", "seq_len": 32768, "batch": 16,
      "gpu": "h100-80gb", "gpu_count": 4}, False),
    ({"model": "qwen2.5-72b", "task": "infer", "kv_cache_dtype": "fp8",
      "quantization": "fp8", "gpu": "h100-80gb", "gpu_count": 1}, False),
    ({"params_b": 7, "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb"}, True),
    ({"params_b": 30, "tokens": 3e12, "gpu": "h200-141gb", "gpu_count": 1024}, False),
    ({"params_b": 7, "tokens": 1e12, "gpu": "h100-80gb", "gpu_count": 256, "mfu": 0.4,
      "price_per_gpu_hour": 2.5}, False),
    ({"arch": CUSTOM_ARCH, "seq_len": 4096, "gpu": "h100-80gb"}, True),
    ({"arch": HF_CONFIG, "params_b": 8, "global_batch": 128, "precision": "fp16_mixed",
      "gpu": "a100-40gb", "method": "seed_even_split"}, False),
    ({"arch": HF_CONFIG, "task": "infer", "seq_len": 8192, "concurrent": 32}, True),
    ({"model": "gpt-3-175b", "activation_model": "korthikanti", "overhead_model": "flat_10pct",
      "seq_len": 2048, "tp": 8, "pp": 8, "gpu_count": 512, "global_batch": 1536,
      "gpu": "a100-80gb"}, False),
    ({"model": "llama-2-7b", "pp": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
      "global_batch": 64, "gpu": "v100-32gb", "gpu_count": 8}, False),
    ({"model": "llama-2-7b", "memory_headroom": 0.8, "gpu": "t4-16gb"}, False),
    ({"model": "qwen3-30b-a3b", "task": "finetune", "finetune_method": "lora",
      "lora_targets": "attention", "gpu": "h100-80gb"}, False),
    ({"model": "no-such-model", "gpu": "h100-80gb"}, False),
    ({"model": "llama-3-8b", "tp": 3, "gpu": "h100-80gb", "gpu_count": 3}, False),
)


def cases() -> list[Case]:
    out: list[Case] = []
    for i, preset in enumerate(all_presets()):
        out += [({"model": preset.id, **job}, False) for job in PER_PRESET]
        if i % FITS_ON_EVERY == 0:
            out += [({"model": preset.id, **job}, True) for job in FITS_ON_JOBS]
    return out + list(SPECIAL)


def case_key(fields: dict[str, Any], fits_on: bool) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":")) + ("|fits_on" if fits_on
                                                                        else "")


def answer_text(fields: dict[str, Any], fits_on: bool) -> str:
    try:
        answer = compute_answer(EstimateRequest(**fields), fits_on=fits_on).answer
    except (InvalidInput, UnknownName) as exc:
        return f"{type(exc).__name__}: {exc}"
    return json.dumps(answer_dict(answer), sort_keys=True, separators=(",", ":"))


def digests(dump: Path | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for fields, fits_on in cases():
        key = case_key(fields, fits_on)
        text = answer_text(fields, fits_on)
        out[key] = hashlib.sha256(text.encode()).hexdigest()[:24]
        if dump is not None:
            name = hashlib.sha256(key.encode()).hexdigest()[:16]
            (dump / f"{name}.json").write_text(key + "\n" + text + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, help="also write every answer's JSON here")
    args = parser.parse_args()
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(digests(args.dump), indent=0, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
