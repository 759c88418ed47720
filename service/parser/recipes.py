"""Recipe and config names that carry the model and the method: torchtune's ``tune run
lora_finetune_distributed --config llama3_1/70B_lora`` (recipes ``{full,lora,qlora}_finetune_*``,
configs ``<family>/<size>_<method>``). The names are torchtune's own (its ``recipes/configs``
folders); the model resolves through the preset catalog like any other name.
"""

from __future__ import annotations

import re

from service.core.model.presets import lookup_preset
from service.parser.scan import Scan

_RECIPE = re.compile(r"\b(?P<method>full|lora|qlora)_finetune_(?:single_device|distributed)\b")
_CONFIG = re.compile(r"(?<![\w/])(?P<family>llama3_3|llama3_2|llama3_1|llama3|llama2|code_llama2|qwen2_5"
                     r"|qwen3|qwen2|gemma2|gemma|mistral|phi3|phi4)/(?P<size>\d+(?:\.\d+)?b|mini)"
                     r"(?:_instruct)?_(?P<method>full|lora|qlora)\w*")
# a model builder in a pasted config: ``_component_: torchtune.models.llama3_1.lora_llama3_1_8b``,
# or its name alone ("model llama3_2_3b"): the underscores between family, version and size
_BUILDER = re.compile(r"(?:\btorchtune\.models\.\w+\.|(?<![\w./\-]))(?P<method>q?lora_)?"
                      r"(?P<family>llama3_3|llama3_2|llama3_1"
                      r"|llama3|llama2|code_llama2|qwen2_5|qwen3|qwen2|gemma2|gemma|mistral|phi3|phi4)"
                      # "llama3_1 8B" (a versioned folder name, then a space) too
                      r"(?:_|(?<=\d_\d)\s+)(?P<size>\d+(?:p\d+)?b|mini)\b")
# a pasted torchtune config: ``dtype: bf16`` trains in bf16 alone (no fp32 master weights), and
# LoRA on attention plus ``apply_lora_to_mlp: True`` covers every linear layer
_TORCHTUNE_BF16 = re.compile(r"(?:^|[,;{]|\s)\s*dtype\s*[:=]\s*bf16\b", re.M)  # "dtype=bf16" on `tune run`
_TORCHTUNE_MLP = re.compile(r"\bapply_lora_to_mlp\s*:\s*true\b")
# any precision said: then torchtune's own default (its configs' ``dtype: bf16``) is not assumed
_PRECISION_SAID = re.compile(r"\b(?:dtype|fp32|float32|fp16|float16|half|bf16|bfloat16|fp8|mixed|amp)\b")
# torchtune's config folder -> the words a preset name is looked up by
_FAMILY = {"llama3_3": "llama 3.3", "llama3_2": "llama 3.2", "llama3_1": "llama 3.1",
           "llama3": "llama 3", "llama2": "llama 2", "code_llama2": "codellama", "qwen2_5": "qwen2.5",
           "qwen3": "qwen3", "qwen2": "qwen2", "gemma2": "gemma 2", "gemma": "gemma", "mistral": "mistral",
           "phi3": "phi 3", "phi4": "phi 4"}


def find_recipes(scan: Scan) -> None:
    """Add ``model`` and ``finetune_method`` findings for torchtune configs and recipes."""
    configs = scan.finditer(_CONFIG, limit=1)
    for m in configs:  # the config is the more specific: "lora_finetune_* --config .../3B_qlora"
        preset = lookup_preset(f"{_FAMILY[m.group('family')]} {m.group('size')}")
        if preset is not None:
            scan.add("model", preset.id, m.start(), m.end("size"),
                     f"torchtune config {m.group(0)} read as {preset.id}")
        scan.add("finetune_method", m.group("method"), m.start(), m.end())
    for m in scan.finditer(_BUILDER, limit=1):
        size = m.group("size").replace("p", ".")
        preset = lookup_preset(f"{_FAMILY[m.group('family')]} {size}")
        if preset is not None:
            scan.add("model", preset.id, m.start(), m.end(),
                     f"'{m.group(0).rsplit('.', 1)[-1]}' read as {preset.id}")
        if m.group("method"):
            scan.add("finetune_method", m.group("method").rstrip("_"), m.start(), m.end(), claim=False)
    if "torchtune" in scan.low or _RECIPE.search(scan.low):
        for m in scan.finditer(_TORCHTUNE_BF16, limit=1):
            scan.add("precision", "bf16", m.start(), m.end(),
                     "torchtune dtype bf16: weights, gradients and optimizer state in bf16")
        for m in scan.finditer(_TORCHTUNE_MLP, limit=1):
            scan.add("lora_targets", "all_linear", m.start(), m.end())
    for m in scan.finditer(_RECIPE, limit=1):
        if configs:
            scan.claim(m.start(), m.end())
        else:
            scan.add("finetune_method", m.group("method"), m.start(), m.end())
        if not _PRECISION_SAID.search(scan.low):
            scan.add("precision", "bf16", m.start(), m.end(), "torchtune recipe: its configs train "
                     "in dtype bf16 (no fp32 master weights)", claim=False)
        if m.group(0).endswith("_distributed") and "fsdp" not in scan.low:
            scan.add("framework", "fsdp", m.start(), m.end(), "torchtune's distributed recipes "
                     "shard with FSDP2 (fully_shard)", claim=False)
