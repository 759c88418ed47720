"""What every launch config of a training plan shares: processes, batch arithmetic, precision,
the model's name, and how a command line is written."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from service.core.job.choices import PRECISION_DTYPE
from service.core.job.resolve import ResolvedJob
from service.core.model.presets import lookup_preset
from service.core.planning.plan_types import Layout

SCRIPT = "train.py"  # the user's training script; every config says so in its notes


@dataclass(frozen=True, slots=True)
class LaunchShape:
    """Processes and batches of one training layout; micro x accumulation x dp = global."""

    gpus: int
    nodes: int
    per_node: int  # processes on each node
    micro_batch: int
    accumulation: int
    dp: int
    global_batch: int
    precision: str  # bf16 | fp16 | fp32 | fp8

    def __post_init__(self) -> None:
        if self.micro_batch * self.accumulation * self.dp != self.global_batch:
            raise ValueError(f"batch arithmetic: {self.micro_batch} x {self.accumulation} x "
                             f"{self.dp} != {self.global_batch}")


def launch_shape(layout: Layout, precision: str) -> LaunchShape:
    nodes = max(1, layout.nodes)
    return LaunchShape(layout.gpus, nodes, layout.gpus // nodes, layout.micro_batch,
                       layout.grad_accum, layout.dp, layout.global_batch,
                       PRECISION_DTYPE[precision])


@dataclass(frozen=True, slots=True)
class ModelRef:
    """What the configs call the model: its Hugging Face repo for a preset, else its name."""

    path: str
    known: bool  # a preset with a Hugging Face repo
    remote_code: bool = False  # its repo's own modelling code (``ModelPreset.remote_code``)
    quantized: bool = False  # a published checkpoint already in the stated format (FP8)


# a chat checkpoint among a preset's names: "...-Instruct", "...-it", "...-chat"
_CHAT_REPO = re.compile(r"^[\w.\-]+/[\w.\-]*(?:instruct|-it|chat)[\w.\-]*$", re.I)


def model_ref(resolved: ResolvedJob) -> ModelRef:
    """Training loads the preset's repo; serving loads its chat (Instruct) checkpoint when the
    preset names one, and the published FP8 one when serving fp8 weights (rather than
    quantizing the 16-bit checkpoint online)."""
    preset = lookup_preset(resolved.job.model_id)
    if preset is None or not preset.hf_repo:
        return ModelRef(resolved.job.model_id, False)
    path = preset.hf_repo
    if not resolved.job.is_training:
        chats = [a for a in preset.aliases if _CHAT_REPO.match(a)]
        # the published FP8 checkpoint: the chat model's, or the repo's own (Qwen3's repos are
        # the chat models themselves)
        fp8 = [a for a in chats if a.lower().endswith("-fp8")] or [
            a for a in preset.aliases if a.lower() == f"{preset.hf_repo.lower()}-fp8"]
        if resolved.job.quantization == "fp8" and fp8:
            return ModelRef(fp8[0], True, preset.remote_code, quantized=True)
        elif not _CHAT_REPO.match(path) and (plain := [a for a in chats if a not in fp8]):
            path = plain[0]
    return ModelRef(path, True, preset.remote_code)


def model_note(ref: ModelRef) -> tuple[str, ...]:
    if ref.known:
        return ()
    return (f"'{ref.path}' is fitcheck's name for the model: use its checkpoint's path or "
            "Hugging Face repo",)


def shell_line(head: Sequence[str], *sections: Sequence[str]) -> str:
    """The command for a POSIX shell: ``head`` on the first line, then each section's options
    one per line with their values (a word that is not an option stays on its option's line)."""
    lines = [" ".join(_quote(w) for w in head)]
    for section in sections:
        start = len(lines)
        for word in section:
            if word.startswith("-") or len(lines) == start:
                lines.append(_quote(word))
            else:
                lines[-1] += " " + _quote(word)
    return " \\\n  ".join(lines)


def _quote(word: str) -> str:
    """Quoted for the shell, except a leading $VARIABLE the user's environment provides."""
    if word.startswith("$") and word[1:].split(":")[0].replace("_", "").isalnum():
        return word
    return shlex.quote(word)
