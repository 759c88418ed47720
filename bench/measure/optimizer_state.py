"""Measure optimizer-state bytes after one real ``step()`` on a small Hugging Face model.

For each case the model is built from a config (random init, nothing downloaded), one forward
and backward with loss runs, then ``optimizer.step()``. The state bytes are the sum of
``nbytes`` of every tensor in ``optimizer.state`` (split into per-element state, whose size
grows with the parameter, and per-tensor scalars such as Adam's ``step``). Gradient bytes are
the sum of ``p.grad.nbytes`` over trainable parameters.

LoRA cases wrap a bf16 base model with ``peft`` and count only the trainable (adapter) params.

Run ``python bench/measure/optimizer_state.py --out bench/measure/results/cpu_optimizer.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import transformers
from torch import nn

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB, LAYERS = 256, 4, 2, 64, 688, 1000, 2
SEQ, BATCH = 64, 2


def build_model(dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HEAD_DIM,
        vocab_size=VOCAB,
        max_position_embeddings=1024,
        tie_word_embeddings=False,
        pad_token_id=0,
    )
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation="sdpa")
    model.train()
    return model


@dataclass(frozen=True)
class Case:
    name: str
    param_dtype: torch.dtype
    make: Callable[[list[nn.Parameter]], torch.optim.Optimizer]
    lora: dict[str, Any] | None = None


def _adamw(**kw: Any) -> Callable[[list[nn.Parameter]], torch.optim.Optimizer]:
    return lambda ps: torch.optim.AdamW(ps, lr=1e-3, **kw)


def _sgd(**kw: Any) -> Callable[[list[nn.Parameter]], torch.optim.Optimizer]:
    return lambda ps: torch.optim.SGD(ps, lr=1e-3, **kw)


def _adafactor() -> Callable[[list[nn.Parameter]], torch.optim.Optimizer]:
    return lambda ps: torch.optim.Adafactor(ps, lr=1e-3)


ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]
ALL_LINEAR = [*ATTN, "gate_proj", "up_proj", "down_proj"]

CASES: list[Case] = [
    Case("adamw_fp32", torch.float32, _adamw()),
    Case("adamw_bf16", torch.bfloat16, _adamw()),
    Case("adamw_fp32_amsgrad", torch.float32, _adamw(amsgrad=True)),
    Case("adamw_fp32_fused", torch.float32, _adamw(fused=True)),
    Case("adamw_bf16_fused", torch.bfloat16, _adamw(fused=True)),
    Case("sgd_momentum_fp32", torch.float32, _sgd(momentum=0.9)),
    Case("sgd_momentum_bf16", torch.bfloat16, _sgd(momentum=0.9)),
    Case("sgd_fp32", torch.float32, _sgd()),
    Case("adafactor_fp32", torch.float32, _adafactor()),
    Case("lora_r8_attn_adamw", torch.bfloat16, _adamw(), {"r": 8, "target_modules": ATTN}),
    Case("lora_r16_attn_adamw", torch.bfloat16, _adamw(), {"r": 16, "target_modules": ATTN}),
    Case("lora_r8_all_linear_adamw", torch.bfloat16, _adamw(), {"r": 8, "target_modules": "all-linear"}),
    Case("lora_r16_all_linear_adamw", torch.bfloat16, _adamw(), {"r": 16, "target_modules": "all-linear"}),
]


def lora_params_expected(model: nn.Module, r: int, targets: list[str]) -> int:
    """r * (in + out) for every targeted nn.Linear (A is r x in, B is out x r)."""
    total = 0
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear) and name.split(".")[-1] in targets:
            total += r * (mod.in_features + mod.out_features)
    return total


def state_bytes(opt: torch.optim.Optimizer) -> tuple[int, int, dict[str, int]]:
    """(per-element state bytes, per-tensor scalar bytes, bytes by state key)."""
    elementwise, scalars = 0, 0
    by_key: dict[str, int] = {}
    for p, st in opt.state.items():
        for key, v in st.items():
            if not isinstance(v, torch.Tensor):
                continue
            n = v.untyped_storage().nbytes()
            by_key[key] = by_key.get(key, 0) + n
            if v.numel() == p.numel() or (v.dim() > 0 and v.numel() > 1):
                elementwise += n
            else:
                scalars += n
    return elementwise, scalars, by_key


def run_case(case: Case) -> dict[str, Any]:
    model = build_model(case.param_dtype)
    rec: dict[str, Any] = {"case": case.name, "param_dtype": str(case.param_dtype)[6:]}
    if case.lora is not None:
        import peft

        targets = case.lora["target_modules"]
        names = ALL_LINEAR if targets == "all-linear" else list(targets)
        rec["lora_params_expected"] = lora_params_expected(model, case.lora["r"], names)
        lcfg = peft.LoraConfig(
            r=case.lora["r"],
            lora_alpha=2 * case.lora["r"],
            target_modules=targets,
            lora_dropout=0.0,
            task_type="CAUSAL_LM",
        )
        model = peft.get_peft_model(model, lcfg)
        rec["lora"] = {"r": case.lora["r"], "target_modules": targets, "lora_dropout": 0.0}
        rec["adapter_dtypes"] = sorted({str(p.dtype)[6:] for p in model.parameters() if p.requires_grad})
    params = [p for p in model.parameters() if p.requires_grad]
    opt = case.make(params)
    ids = torch.randint(1, VOCAB, (BATCH, SEQ))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    n_trainable = sum(p.numel() for p in params)
    elem, scal, by_key = state_bytes(opt)
    grad_bytes = sum(p.grad.nbytes for p in params if p.grad is not None)
    rec.update(
        {
            "optimizer": type(opt).__name__,
            "optimizer_defaults": {
                k: v for k, v in opt.defaults.items() if isinstance(v, (int, float, bool, str))
            },
            "n_params_total": sum(p.numel() for p in model.parameters()),
            "n_params_trainable": n_trainable,
            "n_trainable_tensors": len(params),
            "state_bytes": elem + scal,
            "state_elementwise_bytes": elem,
            "state_scalar_bytes": scal,
            "state_bytes_by_key": by_key,
            "state_bytes_per_trainable_param": round(elem / n_trainable, 4),
            "grad_bytes": grad_bytes,
            "grad_bytes_per_trainable_param": round(grad_bytes / n_trainable, 4),
            "trainable_param_bytes": sum(p.nbytes for p in params),
        }
    )
    return rec


def header() -> dict[str, Any]:
    import peft

    return {
        "what": "optimizer state bytes after one optimizer.step()",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": "cpu",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "model": {
            "model_type": "llama",
            "hidden_size": HIDDEN,
            "num_attention_heads": HEADS,
            "num_key_value_heads": KV_HEADS,
            "head_dim": HEAD_DIM,
            "intermediate_size": FFN,
            "vocab_size": VOCAB,
            "num_hidden_layers": LAYERS,
            "tie_word_embeddings": False,
        },
        "seq": SEQ,
        "batch": BATCH,
        "state_bytes_per_trainable_param": "elementwise state bytes / trainable params",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", nargs="*", default=[c.name for c in CASES])
    args = p.parse_args(argv)
    transformers.logging.set_verbosity_error()
    records = []
    for case in CASES:
        if case.name in args.cases:
            rec = run_case(case)
            records.append(rec)
            print(
                f"{case.name}: trainable={rec['n_params_trainable']} state={rec['state_bytes']} "
                f"({rec['state_bytes_per_trainable_param']} B/param) grads={rec['grad_bytes']}"
            )
    with open(args.out, "w") as f:
        json.dump({"header": header(), "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
