"""The GPU catalog: data sanity, lookups by realistic spellings, datasheet spot checks."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import pytest

from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.gpus import (
    Gpu,
    all_gpus,
    find_gpu,
    normalize_precision,
    peak_flops,
    peak_tflops,
    suggest_gpus,
)

GIB = 1 << 30
MIB = 1 << 20


def test_catalog_loads_with_the_gpus_people_ask_about() -> None:
    ids = {gpu.id for gpu in all_gpus()}
    for expected in (
        "v100-16gb",
        "v100-32gb",
        "t4-16gb",
        "a10g-24gb",
        "a10-24gb",
        "l4-24gb",
        "l40s-48gb",
        "a40-48gb",
        "rtxa6000-48gb",
        "rtx6000ada-48gb",
        "a100-40gb",
        "a100-80gb",
        "a100-pcie-80gb",
        "h100-80gb",
        "h100-pcie-80gb",
        "h100-nvl-94gb",
        "h200-141gb",
        "b200-180gb",
        "mi250x-64gb",
        "mi300x-192gb",
        "mi325x-256gb",
        "rtx3090-24gb",
        "rtx4090-24gb",
        "rtx5090-32gb",
        # issue 16: the GPUs people ask about in 2025-26
        "h800-80gb",
        "h20-96gb",
        "b300-288gb",
        "gb200-186gb",
        "rtxpro6000-96gb",
        "l40-48gb",
        "rtx3060-12gb",
        "rtx4080-16gb",
        "rtx4080super-16gb",
        "rtx5080-16gb",
        "rtx4060ti-16gb",
        "rtx4070-12gb",
        "rtx4070ti-12gb",
        "rtx4070tisuper-16gb",
        "rtx3080-10gb",
        "rtx5060ti-16gb",
        "rtx5070ti-16gb",
        "rtxa4000-16gb",
        "rtxa5000-24gb",
        "mi355x-288gb",
    ):
        assert expected in ids
    assert all(isinstance(gpu, Gpu) for gpu in all_gpus())


def test_catalog_is_loaded_once_and_callers_cannot_mutate_it() -> None:
    first = all_gpus()
    first.clear()
    assert len(all_gpus()) >= 24
    assert find_gpu("h100") is find_gpu("h100-80gb")


def test_ids_follow_name_memory_gb_and_match_the_marketing_figure() -> None:
    for gpu in all_gpus():
        match = re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*-(\d+)gb", gpu.id)
        assert match, gpu.id
        unit = GIB if gpu.memory_marketing_unit == "GiB" else 10**9
        assert int(match.group(1)) * unit == gpu.memory_bytes_as_sold, gpu.id


def test_memory_is_positive_and_usable_is_plausible() -> None:
    for gpu in all_gpus():
        assert isinstance(gpu.memory_bytes_usable, int)
        assert isinstance(gpu.memory_bytes_as_sold, int)
        assert gpu.memory_bytes_usable > 0
        assert gpu.memory_bytes_usable <= gpu.memory_bytes_as_sold * 1.01, gpu.id
        # ECC on GDDR6 (T4, A10, L4, L40S, ...) costs 1/16, so ~92%; HBM parts lose ~1%.
        assert 0.90 <= gpu.memory_bytes_usable / gpu.memory_bytes_as_sold <= 1.0, gpu.id
        assert gpu.memory_note, gpu.id


def test_every_figure_is_present_positive_and_sourced() -> None:
    for gpu in all_gpus():
        assert gpu.vendor in ("nvidia", "amd")
        assert gpu.fp16_dense_tflops > 0 and gpu.fp32_tflops > 0
        for optional in (gpu.bf16_dense_tflops, gpu.fp8_dense_tflops, gpu.tf32_dense_tflops):
            assert optional is None or optional > 0
        if gpu.fp8_dense_tflops is not None:
            assert gpu.fp8_dense_tflops >= gpu.fp16_dense_tflops
        assert gpu.memory_bandwidth_gbps > 0 and gpu.intra_node_bandwidth_gbps > 0
        assert 1 <= gpu.gpus_per_node <= 8
        # A rack-scale NVLink domain (GB200 NVL72: 72 GPUs over 18 four-GPU trays) is wider than
        # a node; everywhere else the domain fits in one server.
        rack_scale = gpu.nvlink_domain == 72 and gpu.interconnect == "nvlink"
        assert gpu.nvlink_domain >= 1
        assert rack_scale or gpu.nvlink_domain <= gpu.gpus_per_node, gpu.id
        assert 0.2 <= gpu.default_mfu <= 0.5
        assert gpu.price_per_gpu_hour_usd is None or 0.1 < gpu.price_per_gpu_hour_usd < 20
        assert gpu.price_note and gpu.mfu_note and gpu.flops_note and gpu.topology_note
        assert 2017 <= gpu.release_year <= 2026
        assert gpu.sources, gpu.id


def test_aliases_are_unique_across_gpus() -> None:
    owner: dict[str, str] = {}
    for gpu in all_gpus():
        for spelling in (gpu.id, *gpu.aliases, *gpu.default_for):
            key = spelling.lower()
            assert owner.setdefault(key, gpu.id) == gpu.id, f"{spelling!r}: {owner[key]}, {gpu.id}"
    # ...and each one resolves to its own GPU through the loose matcher too.
    for gpu in all_gpus():
        for spelling in (gpu.id, gpu.name, *gpu.aliases, *gpu.default_for):
            assert find_gpu(spelling).id == gpu.id, spelling


def test_each_family_default_is_claimed_once() -> None:
    families = [family for gpu in all_gpus() for family in gpu.default_for]
    assert len(families) == len(set(families))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A100 40GB", "a100-40gb"),
        ("a100 40g", "a100-40gb"),
        ("A100-40G", "a100-40gb"),
        ("A100_40GB", "a100-40gb"),
        ("a100 40 gb", "a100-40gb"),
        ("a100 40GiB", "a100-40gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("A100 SXM4 80GB", "a100-80gb"),
        ("80GB A100", "a100-80gb"),
        ("a100 80", "a100-80gb"),
        ("a100", "a100-80gb"),
        ("A100s", "a100-80gb"),
        ("A100 80GB PCIe", "a100-pcie-80gb"),
        ("h100", "h100-80gb"),
        ("H100s", "h100-80gb"),
        ("h100 sxm", "h100-80gb"),
        ("H100 SXM5 80GB", "h100-80gb"),
        ("NVIDIA H100 80GB HBM3", "h100-80gb"),
        ("h100-80gb", "h100-80gb"),
        ("H100 PCIe", "h100-pcie-80gb"),
        ("h100 nvl", "h100-nvl-94gb"),
        ("H200", "h200-141gb"),
        ("h200s", "h200-141gb"),
        ("NVIDIA H200 141GB", "h200-141gb"),
        ("GH200", "gh200-96gb"),
        ("B200", "b200-180gb"),
        ("b200 192gb", "b200-180gb"),
        ("HGX B200", "b200-180gb"),
        ("4090", "rtx4090-24gb"),
        ("rtx 4090", "rtx4090-24gb"),
        ("RTX4090", "rtx4090-24gb"),
        ("NVIDIA GeForce RTX 4090", "rtx4090-24gb"),
        ("4090s", "rtx4090-24gb"),
        ("3090", "rtx3090-24gb"),
        ("RTX 5090", "rtx5090-32gb"),
        ("MI300X", "mi300x-192gb"),
        ("AMD Instinct MI300X", "mi300x-192gb"),
        ("mi 300x", "mi300x-192gb"),
        ("mi325x", "mi325x-256gb"),
        ("MI250X", "mi250x-64gb"),
        ("v100", "v100-16gb"),
        ("V100 32GB", "v100-32gb"),
        ("Tesla V100-SXM2-16GB", "v100-16gb"),
        ("Tesla T4", "t4-16gb"),
        ("T4", "t4-16gb"),
        ("A10G", "a10g-24gb"),
        ("a10", "a10-24gb"),
        ("L4", "l4-24gb"),
        ("L40S", "l40s-48gb"),
        ("l40s 48gb", "l40s-48gb"),
        ("A40", "a40-48gb"),
        ("RTX A6000", "rtxa6000-48gb"),
        ("a6000", "rtxa6000-48gb"),
        ("RTX 6000 Ada Generation", "rtx6000ada-48gb"),
        ("  Rtx-6000 ADA  ", "rtx6000ada-48gb"),
        # Names that sit next to an older card's: each must reach its own card.
        ("L40", "l40-48gb"),
        ("l40 48gb", "l40-48gb"),
        ("H20", "h20-96gb"),
        ("nvidia h20", "h20-96gb"),
        ("H200 SXM", "h200-141gb"),
        ("4080", "rtx4080-16gb"),
        ("RTX 4080", "rtx4080-16gb"),
        ("4080 super", "rtx4080super-16gb"),
        ("RTX 4080 SUPER", "rtx4080super-16gb"),
        ("4080S", "rtx4080super-16gb"),
        ("rtx pro 6000", "rtxpro6000-96gb"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtxpro6000-96gb"),
        ("RTX 6000 Ada", "rtx6000ada-48gb"),
        ("3060 12gb", "rtx3060-12gb"),
        ("RTX 3060", "rtx3060-12gb"),
        ("h800", "h800-80gb"),
        ("H800s", "h800-80gb"),
        ("b300", "b300-288gb"),
        ("NVIDIA B300 SXM6 AC", "b300-288gb"),
        ("B200", "b200-180gb"),
        ("gb200", "gb200-186gb"),
        ("GB200 NVL72", "gb200-186gb"),
        ("rtx 5080", "rtx5080-16gb"),
        ("4060 ti 16gb", "rtx4060ti-16gb"),
        ("4070", "rtx4070-12gb"),
        ("RTX 4070 Ti", "rtx4070ti-12gb"),
        ("4070 ti super", "rtx4070tisuper-16gb"),
        ("3080", "rtx3080-10gb"),
        ("5070ti", "rtx5070ti-16gb"),
        ("RTX A5000", "rtxa5000-24gb"),
        ("mi355x", "mi355x-288gb"),
        ("AMD Instinct MI355X", "mi355x-288gb"),
    ],
)
def test_find_gpu_accepts_realistic_spellings(text: str, expected: str) -> None:
    assert find_gpu(text).id == expected


@pytest.mark.parametrize(
    ("text", "suggested"),
    [
        ("a100 90gb", "a100-80gb"),
        ("h1000", "h100-80gb"),
        ("rtx 4060", "rtx4060ti-16gb"),  # the 8 GB RTX 4060 is not the 4060 Ti
        ("L20", "h20-96gb"),
        ("gb300", "b300-288gb"),
        ("mi300a", "mi300x-192gb"),
        ("h100 64gb", "h100-80gb"),
    ],
)
def test_unknown_names_raise_with_suggestions(text: str, suggested: str) -> None:
    with pytest.raises(UnknownName) as caught:
        find_gpu(text)
    error = caught.value
    assert error.kind == "gpu" and error.name == text
    assert suggested in error.suggestions
    assert 1 <= len(error.suggestions) <= 3
    assert suggested in str(error)


@pytest.mark.parametrize("text", ["", "   ", "NVIDIA", "tpu v5e", "a100 48gb"])
def test_nonsense_never_matches(text: str) -> None:
    with pytest.raises(UnknownName):
        find_gpu(text)
    assert len(suggest_gpus(text)) <= 3


def test_datasheet_spot_checks() -> None:
    a100 = find_gpu("a100-40gb")
    assert a100.bf16_dense_tflops == 312.0
    assert a100.memory_bytes_as_sold == 40 * GIB == 42_949_672_960
    h100 = find_gpu("h100-80gb")
    assert h100.bf16_dense_tflops == pytest.approx(989, abs=1)
    assert h100.fp8_dense_tflops == pytest.approx(1979, abs=1)
    assert h100.memory_bytes_as_sold == 80 * GIB
    assert h100.memory_bandwidth_gbps == 3350
    assert h100.nvlink_domain == 8 and h100.interconnect == "nvlink"
    # nvidia-smi shows 81,559 MiB; the CUDA-visible total is a little below that.
    assert 79 * GIB < h100.memory_bytes_usable < 81_559 * MIB
    assert find_gpu("h200").bf16_dense_tflops == pytest.approx(989, abs=1)
    assert find_gpu("h200").memory_bytes_usable < 143_771 * MIB
    mi300x = find_gpu("mi300x")
    assert mi300x.memory_bytes_as_sold == 192 * GIB
    assert mi300x.bf16_dense_tflops == pytest.approx(1307.4)
    assert mi300x.memory_bytes_usable == 206_141_652_992
    assert find_gpu("b200").bf16_dense_tflops == pytest.approx(2250)
    assert find_gpu("4090").bf16_dense_tflops == pytest.approx(165.2)
    assert find_gpu("4090").interconnect == "pcie" and find_gpu("4090").nvlink_domain == 1
    assert find_gpu("v100").bf16_dense_tflops is None


def test_new_gpu_datasheet_spot_checks() -> None:
    h800, h20 = find_gpu("h800"), find_gpu("h20")
    assert h800.bf16_dense_tflops == find_gpu("h100").bf16_dense_tflops  # same tensor cores
    assert h800.intra_node_bandwidth_gbps == 400  # NVLink cut from 900 GB/s
    assert h20.bf16_dense_tflops == 148 and h20.fp8_dense_tflops == 296  # H20 spec sheet
    assert h20.memory_bytes_as_sold == 96 * GIB and h20.memory_bandwidth_gbps == 4000
    assert find_gpu("l40").bf16_dense_tflops == pytest.approx(181.05)  # L40 datasheet
    assert find_gpu("l40s").bf16_dense_tflops == pytest.approx(2 * 181.05, rel=0.01)
    assert find_gpu("b300").memory_bytes_as_sold == 288 * GIB
    gb200 = find_gpu("gb200")
    assert gb200.nvlink_domain == 72 and gb200.gpus_per_node == 4
    assert find_gpu("rtx pro 6000").memory_bytes_as_sold == 96 * GIB
    assert find_gpu("3060").memory_bytes_as_sold == 12 * GIB
    # HIP OOM messages on gfx950: "total capacity of 287.98 GiB"
    assert abs(find_gpu("mi355x").memory_bytes_usable - 287.98 * GIB) < 0.01 * GIB
    for name in ("h800", "h20", "b300", "gb200", "rtx pro 6000", "l40", "3060", "4080", "5080",
                 "mi355x"):
        gpu = find_gpu(name)
        assert gpu.sources and gpu.memory_note and gpu.flops_note, name


def test_peak_flops_and_fallbacks() -> None:
    h100, a100, v100, t4 = (find_gpu(n) for n in ("h100", "a100", "v100", "t4"))
    assert peak_flops(h100, "bf16") == pytest.approx(989.4e12)
    assert peak_flops(h100, "BF16") == peak_flops(h100, "bfloat16")
    assert peak_flops(h100, "fp8") == pytest.approx(1978.9e12)
    assert peak_flops(a100, "tf32") == pytest.approx(156e12)
    assert peak_flops(a100, "fp32") == pytest.approx(19.5e12)
    assert peak_flops(a100, "fp8") == peak_flops(a100, "bf16")  # no fp8 tensor cores
    assert peak_flops(v100, "bf16") == pytest.approx(125e12)  # falls back to fp16
    assert peak_flops(v100, "fp8") == pytest.approx(125e12)
    assert peak_tflops(t4, "tf32") == pytest.approx(8.1)  # falls back to fp32
    for gpu in all_gpus():
        for precision in ("bf16", "fp16", "fp8", "fp32", "tf32"):
            assert peak_flops(gpu, precision) >= gpu.fp32_tflops * 1e12 * 0.99


def test_unknown_precision_is_invalid_input() -> None:
    assert normalize_precision("Float16") == "fp16"
    with pytest.raises(InvalidInput) as caught:
        peak_flops(find_gpu("h100"), "int3")
    assert caught.value.field == "precision"


def test_to_dict_is_json_ready_and_round_trips_the_file() -> None:
    raw = json.loads(files("service.data").joinpath("gpus.json").read_text(encoding="utf-8"))
    by_id = {item["id"]: item for item in raw["gpus"]}
    for gpu in all_gpus():
        data = gpu.to_dict()
        assert json.loads(json.dumps(data)) == data
        assert data == by_id[gpu.id]
