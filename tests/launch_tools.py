"""Each launch tool's own definitions (tests/data/launch_tools/*.json, taken from the tools'
source at pinned versions, provenance inside each file) and checks of a config or command line
against them: an unknown key or flag, a value outside its choices or of the wrong type fails.

Stricter than some tools themselves: DeepSpeed ignores unknown top-level keys and accelerate
unknown sub-dict keys silently, which is exactly how a misspelling goes unnoticed.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "launch_tools"


@cache
def tool(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return data


def _type_ok(kind: str | None, value: Any) -> bool:
    """Whether ``value`` fits the recorded Python type ``kind`` (None: free)."""
    if kind is None or kind in ("table", "object", "object | null"):
        return True
    alternatives = {part.strip() for part in kind.replace("Optional[", "").rstrip("]")
                    .split("|")}
    checks = {"int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "bool": lambda v: isinstance(v, bool), "str": lambda v: isinstance(v, str),
              "None": lambda v: v is None, "null": lambda v: v is None}
    known = [checks[a] for a in alternatives if a in checks]
    return not known or any(check(value) for check in known)


def check_tree(config: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    """Problems of a nested config against ``{"keys": {name: {type, choices, keys}}}``."""
    problems: list[str] = []
    keys = schema.get("keys") or {}
    for name, value in config.items():
        spec = keys.get(name)
        path = f"{where}.{name}"
        if spec is None:
            problems.append(f"{path}: unknown key")
            continue
        if spec.get("removed") or spec.get("deprecated"):
            problems.append(f"{path}: removed or deprecated")
        choices = spec.get("choices")
        if choices is not None and "case-insensitively" in spec.get("note", "") \
                and isinstance(value, str):
            value = value.lower()
        if choices is not None and value not in choices and value != "auto":
            problems.append(f"{path}: {value!r} not in {choices}")
        elif choices is None and value != "auto" and not _type_ok(spec.get("type"), value):
            problems.append(f"{path}: {value!r} is not {spec.get('type')}")
        if isinstance(value, dict):
            problems += check_tree(value, spec, path)
    return problems


def check_deepspeed(config: dict[str, Any]) -> list[str]:
    return check_tree(config, tool("deepspeed"), "ds_config")


def check_accelerate_yaml(config: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    keys = tool("accelerate")["keys"]
    for name, value in config.items():
        spec = keys.get(name)
        if spec is None:
            problems.append(f"accelerate: unknown top-level key {name}")
            continue
        if isinstance(value, dict):
            for sub, item in value.items():
                sub_spec = (spec.get("keys") or {}).get(sub)
                if sub_spec is None:
                    problems.append(f"accelerate.{name}: unknown key {sub}")
                    continue
                allowed = sub_spec.get("choices") or sub_spec.get("validated_values")
                text = str(item).lower() if isinstance(item, bool) else item
                if allowed is not None and text not in allowed and str(text) not in allowed:
                    problems.append(f"accelerate.{name}.{sub}: {item!r} not in {allowed}")
        elif spec.get("choices") and value not in spec["choices"]:
            problems.append(f"accelerate.{name}: {value!r} not in {spec['choices']}")
    return problems


def check_flags(argv: list[str], flags: dict[str, Any], where: str) -> tuple[list[str], int]:
    """(problems, index of the first positional) for argparse options until a positional."""
    problems: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        spec = flags.get(argv[i])
        if spec is None:
            problems.append(f"{where}: unknown option {argv[i]}")
            i += 1
            continue
        if spec.get("takes_value"):
            if i + 1 >= len(argv):
                problems.append(f"{where}: {argv[i]} needs a value")
                break
            value = argv[i + 1]
            allowed = spec.get("choices") or spec.get("validated_values")
            if allowed is not None and value not in [str(a) for a in allowed]:
                problems.append(f"{where}: {argv[i]} {value!r} not in {allowed}")
            if spec.get("type") == "int" and not (value.isdigit() or value.startswith("$")):
                problems.append(f"{where}: {argv[i]} {value!r} is not an int")
            if spec.get("type") == "float":
                try:
                    float(value)
                except ValueError:
                    problems.append(f"{where}: {argv[i]} {value!r} is not a number")
            i += 2
        else:
            i += 1
    return problems, i


def check_training_arguments(argv: list[str]) -> list[str]:
    """``--field [value]`` words of an HfArgumentParser script against TrainingArguments."""
    keys = tool("transformers_training_arguments")["keys"]
    problems: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("--") or word[2:] not in keys:
            problems.append(f"TrainingArguments: unknown {word}")
            i += 1
            continue
        spec = keys[word[2:]]
        has_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
        if has_value and spec.get("choices") and argv[i + 1] not in spec["choices"]:
            problems.append(f"TrainingArguments: {word} {argv[i + 1]!r} not in its choices")
        if not has_value and "bool" not in str(spec.get("type")):
            problems.append(f"TrainingArguments: {word} needs a value")
        i += 2 if has_value else 1
    return problems


def check_megatron(argv: list[str]) -> list[str]:
    problems, end = check_flags(argv, tool("megatron_lm")["flags"], "pretrain_gpt.py")
    return problems + [f"pretrain_gpt.py: stray word {w}" for w in argv[end:]]


def check_torchtitan(config: dict[str, Any]) -> list[str]:
    return check_tree(config, tool("torchtitan"), "torchtitan")


def check_script(argv: list[str]) -> list[str]:
    """A training script's part of a launch line, by the script."""
    if argv[:2] == ["-m", "torchtitan.train"]:
        rest = argv[2:]
        if len(rest) != 2 or rest[0] != "--job.config_file":
            return [f"torchtitan.train: unexpected {rest}"]
        return []
    if argv[0] == "pretrain_gpt.py":
        return check_megatron(argv[1:])
    if argv[0] == "train.py":
        return check_training_arguments(argv[1:])
    return [f"unknown script {argv[0]}"]


def check_torchrun(argv: list[str]) -> list[str]:
    assert argv[0] == "torchrun"
    flags = tool("torchrun")["flags"]
    problems, end = check_flags(argv[1:], flags, "torchrun")
    script = argv[1 + end:]
    if "-m" in argv[1:1 + end]:  # -m takes no value: the script is a module
        script = ["-m", *script]
    return problems + check_script(script)


def check_accelerate_launch(argv: list[str]) -> list[str]:
    assert argv[:2] == ["accelerate", "launch"]
    problems, end = check_flags(argv[2:], tool("accelerate")["flags"], "accelerate launch")
    return problems + check_script(argv[2 + end:])


def check_vllm(argv: list[str]) -> list[str]:
    assert argv[:2] == ["vllm", "serve"]
    problems, end = check_flags(argv[3:], tool("vllm")["flags"], "vllm serve")
    return problems + [f"vllm serve: stray word {w}" for w in argv[3 + end:]]


def check_sglang(argv: list[str]) -> list[str]:
    assert argv[:3] == ["python", "-m", "sglang.launch_server"]
    problems, end = check_flags(argv[3:], tool("sglang")["flags"], "sglang")
    flags = tool("sglang")["flags"]
    given = {flags[w]["dest"] for w in argv if w in flags}
    missing = sorted({s["canonical"] for s in flags.values()
                      if s.get("required") and s["dest"] not in given})
    return problems + [f"sglang: missing {f}" for f in missing] + \
        [f"sglang: stray word {w}" for w in argv[3 + end:]]
