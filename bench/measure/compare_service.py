"""Compare fitcheck's item-by-item saved-tensor layer model with the measured per-layer bytes.

For every (arch, point, attention) pair of non-checkpointed records with 1 and 2 layers, the
measured per-layer bytes per token are (m(L=2) - m(L=1)) / tokens; fitcheck's are the sum of
``service.core.memory.saved_layer.layer_saved`` items for the Architecture that
``service.core.model.hf_config.architecture_from_hf_config`` reads from the same config.

Run from the repository root:
``python bench/measure/compare_service.py bench/measure/results/cpu_activations.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import transformers

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from service.core.memory.saved_layer import layer_saved
from service.core.memory.saved_tensors import LayerSetup
from service.core.model.hf_config import architecture_from_hf_config


def full_config(rec: dict[str, Any]) -> dict[str, Any]:
    diff = {k: v for k, v in rec["config_diff"].items() if k != "model_type"}
    cfg = transformers.AutoConfig.for_model(rec["config"]["model_type"], **diff).to_dict()
    out: dict[str, Any] = json.loads(json.dumps(cfg, default=str))
    return out


def fitcheck_items(rec: dict[str, Any], profile: str) -> list[tuple[str, float]]:
    arch = architecture_from_hf_config(full_config(rec))
    kwargs: dict[str, Any] = {}
    if "micro_batch" in {f.name for f in dataclasses.fields(LayerSetup)}:
        kwargs["micro_batch"] = rec["batch"]
    setup = LayerSetup(rec["seq"], 2, rec["attn_implementation"] != "eager", profile, **kwargs)
    return [(i.name, i.bytes_per_token) for i in layer_saved(arch, setup, arch.moe is not None)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results")
    p.add_argument(
        "--items",
        nargs="*",
        default=["llama", "gemma2", "gpt2_nodrop"],
        help="archs whose fitcheck item list to print at the base point",
    )
    p.add_argument(
        "--profile",
        default="hf_cpu",
        help="fitcheck saved-tensor profile (the data is from a CPU: hf_cpu; hf is CUDA)",
    )
    args = p.parse_args(argv)
    transformers.logging.set_verbosity_error()
    with open(args.results) as f:
        recs = [r for r in json.load(f)["records"] if not r["gradient_checkpointing"]]
    pairs: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = {}
    for r in recs:
        key = (r["arch"], r["point"], r["attn_implementation"])
        pairs.setdefault(key, {})[r["config"]["num_hidden_layers"]] = r

    print(
        f"| arch | attn | per-layer B/token measured (base) | fitcheck {args.profile} | "
        "fitcheck / measured (base) | range over all points |"
    )
    print("|---|---|---|---|---|---|")
    summary: dict[tuple[str, str], list[float]] = {}
    base: dict[tuple[str, str], tuple[float, float]] = {}
    for (arch, point, attn), by_l in sorted(pairs.items()):
        if 1 not in by_l or 2 not in by_l:
            continue
        measured = (by_l[2]["saved_bytes"] - by_l[1]["saved_bytes"]) / by_l[1]["tokens"]
        predicted = sum(b for _, b in fitcheck_items(by_l[1], args.profile))
        summary.setdefault((arch, attn), []).append(predicted / measured)
        if point == "base":
            base[(arch, attn)] = (measured, predicted)
    for (arch, attn), ratios in sorted(summary.items()):
        m, pr = base[(arch, attn)]
        print(
            f"| {arch} | {attn} | {m:.0f} | {pr:.0f} | {pr / m:.3f} | {min(ratios):.3f} – {max(ratios):.3f} |"
        )

    for arch in args.items:
        for attn in ("sdpa", "eager"):
            by_l = pairs.get((arch, "base", attn))
            if not by_l or 1 not in by_l:
                continue
            print(f"\nfitcheck items, {arch} {attn} (bytes per token):")
            for name, b in fitcheck_items(by_l[1], args.profile):
                print(f"  {name:40} {b:10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
