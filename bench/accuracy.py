"""fitcheck's estimates next to memory measured on real PyTorch / transformers models.

Reads the committed measurements in ``bench/measure/results/`` (made by the scripts there) and,
for each record, asks the engine for the same job. Activations: records come in pairs with 1
and 2 layers, so per layer = m(2) - m(1) and the non-layer part (embedding, final norm,
logits/loss) = 2 m(1) - m(2), for the measurement and the estimate alike. The engine runs its
``hf_cpu`` profile: the Hugging Face modules as they ran on the measuring CPU.

Run: ``python3 bench/accuracy.py`` (``--all`` lists every record, not only the summary).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.core.job.request import EstimateRequest  # noqa: E402
from service.core.job.resolve import resolve  # noqa: E402
from service.core.memory.activations import (  # noqa: E402
    activation_breakdown,
    activations_component,
)
from service.core.memory.model_state import adafactor_state_bytes  # noqa: E402
from service.core.memory.precision import optimizer_state_bytes_per_param  # noqa: E402
from service.core.model.adapter_params import lora_params  # noqa: E402
from service.core.model.hf_config import architecture_from_hf_config  # noqa: E402

RESULTS = ROOT / "bench" / "measure" / "results"


@dataclass(frozen=True, slots=True)
class Comparison:
    name: str  # arch/point/attention/checkpointing
    part: str  # "per layer" or "non-layer"
    measured: int
    estimated: int

    @property
    def error(self) -> float:
        if self.measured == 0:
            return 0.0 if self.estimated == 0 else float("inf")
        return (self.estimated - self.measured) / self.measured


def _layers(record: dict[str, Any]) -> int:
    config = record["config"]
    return int(config.get("num_hidden_layers", config.get("n_layer", 0)))


def estimated_saved_bytes(record: dict[str, Any]) -> int:
    """The engine's saved-activation bytes for one measured record (hf_cpu profile)."""
    request = EstimateRequest(
        arch=dict(record["config_diff"]), seq_len=record["seq"], micro_batch=record["batch"],
        flash_attn=record["attn_implementation"] != "eager",
        recompute="full" if record["gradient_checkpointing"] else "none",
        precision="bf16_mixed", activation_model="hf_cpu",
    )
    job = resolve(request).job
    return activations_component(job, activation_breakdown(job)).bytes


def activation_comparisons(path: Path = RESULTS / "cpu_activations.json") -> list[Comparison]:
    data = json.loads(path.read_text())
    pairs: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for record in data["records"]:
        ckpt = "ckpt" if record["gradient_checkpointing"] else "no-ckpt"
        name = f"{record['arch']}/{record['point']}/{record['attn_implementation']}/{ckpt}"
        pairs[name][_layers(record)] = record
    out: list[Comparison] = []
    for name, by_layers in sorted(pairs.items()):
        if 1 not in by_layers or 2 not in by_layers:
            continue
        m1, m2 = by_layers[1]["saved_bytes"], by_layers[2]["saved_bytes"]
        e1, e2 = estimated_saved_bytes(by_layers[1]), estimated_saved_bytes(by_layers[2])
        out.append(Comparison(name, "per layer", m2 - m1, e2 - e1))
        out.append(Comparison(name, "non-layer", 2 * m1 - m2, 2 * e1 - e2))
    return out


def optimizer_comparisons(path: Path = RESULTS / "cpu_optimizer.json") -> list[Comparison]:
    """Optimizer state bytes and LoRA trainable counts after one real ``step()``."""
    data = json.loads(path.read_text())
    arch = architecture_from_hf_config(data["header"]["model"])
    out: list[Comparison] = []
    for record in data["records"]:
        case, measured = record["case"], record["state_elementwise_bytes"]
        trainable = record["n_params_trainable"]
        dtype = "fp32" if record["param_dtype"] == "float32" else "bf16"
        if case.startswith("lora"):
            lora = record["lora"]
            targets = "attention" if isinstance(lora["target_modules"], list) else "all_linear"
            count = lora_params(arch, lora["r"], targets)
            out.append(Comparison(f"{case} trainable params", "optimizer", trainable, count))
            estimate = count * optimizer_state_bytes_per_param("adamw", "fp32")
        elif case.startswith("adafactor"):
            estimate = adafactor_state_bytes(arch)
        elif "amsgrad" in case:
            continue  # not a recipe fitcheck offers
        else:
            optimizer = case.replace("_fused", "").rsplit("_", 1)[0]  # "sgd_momentum_fp32"
            estimate = round(trainable * optimizer_state_bytes_per_param(optimizer, dtype))
        out.append(Comparison(f"{case} state", "optimizer", measured, round(estimate)))
    return out


def summary_rows(rows: list[Comparison]) -> list[tuple[str, str, int, float, float]]:
    """Per architecture / attention / part: record count, median and worst |error|."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        arch, _, attention, ckpt = row.name.split("/")
        groups[(f"{arch} {attention} {ckpt}", row.part)].append(abs(row.error))
    return [(name, part, len(errs), statistics.median(errs), max(errs))
            for (name, part), errs in sorted(groups.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--all", action="store_true", help="every record, not only the summary")
    args = parser.parse_args()
    acts = activation_comparisons()
    if args.all:
        print(f"{'record':<48}{'part':<11}{'measured B':>13}{'estimated B':>13}{'error':>8}")
        for row in acts:
            print(f"{row.name:<48}{row.part:<11}{row.measured:>13,}{row.estimated:>13,}"
                  f"{row.error:>+8.2%}")
        print()
    print(f"{'architecture, attention, checkpointing':<44}{'part':<11}{'n':>4}"
          f"{'median |err|':>14}{'worst |err|':>13}")
    for name, part, n, median, worst in summary_rows(acts):
        print(f"{name:<44}{part:<11}{n:>4}{median:>14.2%}{worst:>13.2%}")
    errs = [abs(r.error) for r in acts]
    print(f"\n{len(acts)} comparisons over {len(acts) // 2} record pairs: median |error| "
          f"{statistics.median(errs):.2%}, worst {max(errs):.2%}")
    print("\nOptimizer state after one real step():")
    for row in optimizer_comparisons():
        print(f"  {row.name:<36}{row.measured:>12,}{row.estimated:>12,}{row.error:>+8.2%}")


if __name__ == "__main__":
    main()
