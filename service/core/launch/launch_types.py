"""What a launch config is: a file to save or a command line to run, with its structure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LaunchConfig:
    """One launch config for a plan; ``text`` is what to copy: the file's content (saved as
    ``filename``) or the command line."""

    tool: str  # deepspeed | accelerate | torchrun | megatron | torchtitan | vllm | sglang
    title: str
    format: str  # json | yaml | toml | shell
    filename: str | None
    text: str
    config: dict[str, Any] | None = None  # the file's content as an object
    argv: tuple[str, ...] = ()  # the command's words
    notes: tuple[str, ...] = ()  # what the user still chooses (paths, script, learning rate)
    command: str = ""  # for a file: the command line that uses it
