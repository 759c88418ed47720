"""`fitcheck estimate`: flags mirror the request fields; a readable table or the API's JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import main

DONE_MEANS = ["estimate", "--model", "llama-3-8b", "--seq-len", "4096", "--zero-stage", "3",
              "--gpu", "a100-40gb", "--gpu-count", "8"]
FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"


def test_breakdown_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(DONE_MEANS) == 0
    out = capsys.readouterr().out
    for label in ("Weights", "Gradients", "Optimizer state", "Activations", "Total",
                  "Assumptions:", "GB = 10^9 bytes, GiB = 2^30 bytes"):
        assert label in out
    assert "A100 40GB" in out
    assert "/ 8" in out  # ZeRO-3 over 8 GPUs, shown with the values put in


def test_json_has_the_api_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*DONE_MEANS, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["params_total"] == 8_030_261_248
    per = body["per_gpu_bytes"]
    for key in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead", "total"):
        assert isinstance(per[key], int)
    assert per["total"] == sum(v for k, v in per.items() if k != "total")
    assert body["plan"]["dp"] == 8 and body["plan"]["zero_stage"] == 3
    assert body["gpu"] == "a100-40gb" and isinstance(body["fits"], bool)
    assert all({"expression", "terms", "bytes", "values", "source"} <= set(f)
               for f in body["formulas"])
    assert body["assumptions"]


def test_flash_attn_flag_and_recompute(capsys: pytest.CaptureFixture[str]) -> None:
    main(["estimate", "--model", "llama-3-8b", "--no-flash-attn", "--json"])
    eager = json.loads(capsys.readouterr().out)["per_gpu_bytes"]["activations"]
    main(["estimate", "--model", "llama-3-8b", "--flash-attn", "--json"])
    flash = json.loads(capsys.readouterr().out)["per_gpu_bytes"]["activations"]
    assert eager > flash


def test_arch_from_a_pasted_hf_config(capsys: pytest.CaptureFixture[str]) -> None:
    config = (FIXTURES / "qwen2.5-7b.json").read_text()
    assert main(["estimate", "--arch", config, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["params_total"] == pytest.approx(7.615e9, rel=0.005)
    assert main(["estimate", "--arch", str(FIXTURES / "qwen2.5-7b.json"), "--json"]) == 0


def test_time_and_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--params-b", "7", "--tokens", "1e12", "--gpu", "h100-80gb",
                 "--gpu-count", "256", "--mfu", "0.4"]) == 0
    assert "GPU-hours" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["estimate", "--model", "llama-3-8b", "--tp", "3", "--gpu-count", "3"], "tp"),
        (["estimate", "--model", "lama-3-8b"], "Did you mean"),
        (["estimate", "--model", "llama-3-8b", "--gpu", "a100-41gb"], "Did you mean"),
        (["estimate", "--arch", "{not json"], "arch"),
        (["estimate"], "model"),
    ],
)
def test_bad_input_exits_2_with_a_specific_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_console_entry_point_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "service.cli", *DONE_MEANS],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "Total" in result.stdout
