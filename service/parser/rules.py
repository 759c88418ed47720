"""Readings that depend on the task, and the questions asked back.

- A bare dtype is training precision ("bf16" = bf16 mixed with fp32 master weights) or, when
  serving, the weights' format ("fp8", "int4"); fine-tuning in 4 bit is QLoRA (NF4 base).
- "batch 8" is the per-GPU micro-batch when training, the decoded batch when serving.
- Gradient accumulation sets the global batch (micro-batch x steps x GPUs) when the GPU count is
  known; it never changes per-GPU memory.
- A preset name beats a bare size; a pasted architecture beats both.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from service.core.errors import InvalidInput
from service.core.hardware.clouds import instance_price as cloud_price
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.model.presets import lookup_preset
from service.parser.followup import REQUEST_FIELDS
from service.parser.intent import Cues
from service.parser.types import Unknown, Variant

DEFAULT_GPU = "h100-80gb"
DEFAULT_TASK = "infer"  # "will X fit on Y?", "X on Y?", "how much vram for X": running it
MAX_CONTEXT = 10_000_000
TASK_NOTE = "read as serving (say `train` or `lora` otherwise)"
TRAIN_TASK_NOTE = "read as full training (say `lora` or `serve` otherwise)"
# fields only a training job has: with one of them and no task word, the job trains
_TRAINING_FIELDS = ("tp", "pp", "cp", "zero_stage", "micro_batch", "global_batch", "recompute",
                    "optimizer", "offload", "tokens", "mfu", "_grad_accum", "_dp", "_epochs",
                    "sequence_parallel", "virtual_stages", "arch", "_offload_asked",
                    "_recompute_asked")
# ("max seq len" is also a server's limit: neither side's word)
_SEQ_WORD = re.compile(
    r"(?<!max\s)(?<!max_)(?<!max-)\b(?:seq(?:uence)?s?(?:[\s_\-]*len(?:gth)?)?|block_size)\b")
NOTHING = "I couldn't find a question about a model or a GPU in that."
OFF_TOPIC = ("That isn't a question I can answer: I size GPU memory and GPU counts for training, "
             "fine-tuning and serving models.")
_TRAIN_DTYPE = {"bf16": "bf16_mixed", "fp16": "fp16_mixed", "fp32": "fp32", "fp8": "fp8"}
_EXAMPLES = {
    "finetune": "qlora llama-3.1-8b r=16 on one 4090",
    "infer": "serve llama-3.1-70b at 8k context for 20 users, how many h100s?",
    "time_cost": "days to pretrain a 7B on 1T tokens with 64 H100s",
    "train": "7B, seq 4096, ZeRO-3, 8x A100 40GB",
}


def task(cue: Cues, ordered: dict[str, list[Any]], previous: dict[str, Any], low: str = "") -> str:
    """The request's task: the message's words, else the thread's, else what the knobs imply
    (training's own settings, or a 'seq' length), else serving."""
    prev = previous.get("task") if previous.get("task") in ("train", "finetune", "infer") else None
    found = cue.task(prev)
    if found is not None:
        return found
    if ordered.get("finetune_method") or ordered.get("lora_rank"):
        return "finetune"
    if any(ordered.get(k) for k in ("quantization", "kv_cache_dtype", "concurrent", "max_num_seqs",
                                     "_users")) or \
            any(d in ("int4", "int8") for d in ordered.get("_dtype", [])):
        return "infer"
    if any(ordered.get(k) for k in _TRAINING_FIELDS) or (low and _SEQ_WORD.search(low)):
        return "train"
    return DEFAULT_TASK


def _add(ordered: dict[str, list[Any]], field: str, value: Any) -> None:
    values = ordered.setdefault(field, [])
    if value not in values:
        values.append(value)


def normalize(ordered: dict[str, list[Any]], task: str, notes: list[str],
              thread_method: object = None) -> None:
    """Turn the task-dependent readings (``_dtype``, ``_batch``, ``_serving_framework``) into
    request fields, in place. ``thread_method``: the fine-tuning method the thread set before."""
    explicit = bool(ordered.get("precision"))  # bf16=True in pasted args beats prose
    for dtype in ordered.pop("_dtype", []):
        if task == "infer":
            _add(ordered, "quantization", dtype)
        elif dtype == "int4" and task == "finetune" and ordered.get("finetune_method") != ["full"]:
            _add(ordered, "quantization", "nf4")
            ordered["finetune_method"] = ["qlora"]
            notes.append("4-bit fine-tuning read as QLoRA (NF4 base)")
        elif dtype == "int8" and task == "finetune" and ordered.get("finetune_method") != ["full"]:
            _add(ordered, "quantization", "int8")
            ordered.setdefault("finetune_method", ["lora"])
        elif dtype in _TRAIN_DTYPE and not explicit:
            _add(ordered, "precision", _TRAIN_DTYPE[dtype])
            if dtype in ("bf16", "fp16"):
                notes.append(f"{dtype} read as {dtype} mixed precision (fp32 master weights)")
    for engine in ordered.pop("_serving_framework", []):  # "vllm", "sglang": serving's engine
        if task == "infer":
            _add(ordered, "framework", engine)
    if ordered.pop("_ollama", None) and task == "infer" and not ordered.get("quantization"):
        ordered["quantization"] = ["gguf-q4_k_m"]  # what a model tag without a quant pulls
        notes.append("ollama's default tags are Q4_K_M GGUF files")
    elif task == "infer" and ordered.get("framework") == ["llamacpp"] and not ordered.get("quantization") \
            and not ordered.get("_dtype"):
        ordered["quantization"] = ["gguf-q4_k_m"]
        notes.append("llama.cpp runs GGUF files: read as the common Q4_K_M (name the quant otherwise)")
    stated_micro = list(ordered.get("micro_batch", []))
    for batch in ordered.pop("_batch", []):
        if task == "infer":
            _add(ordered, "batch", batch)
        elif stated_micro and isinstance(batch, int) and batch > stated_micro[0] \
                and not ordered.get("global_batch"):
            ordered["global_batch"] = [batch]  # "batch size 512, micro batch 4"
            notes.append(f"batch size {batch} read as the global batch "
                         f"(micro-batch {stated_micro[0]} stated)")
        else:
            if not ordered.get("micro_batch"):
                notes.append(f"batch size {batch} read as the per-GPU micro-batch")
            _add(ordered, "micro_batch", batch)
    if "optimizer_and_params" in ordered.get("offload", []) and "optimizer" in ordered["offload"]:
        ordered["offload"].remove("optimizer")  # DeepSpeed JSON offloading both
    if task == "infer":
        ordered.pop("objective", None)
    if task == "infer" and ordered.pop("_lora_enabled", []) and not ordered.get("lora_slots"):
        ordered["lora_slots"] = [1]
        notes.append("vLLM --enable-lora with no --max-loras: 1 adapter slot (its default)")
    if task == "infer" and ordered.get("lora_slots"):  # adapters served: their rank counts
        ordered.pop("finetune_method", None)
        ordered.pop("lora_targets", None)
    elif task != "finetune":
        ordered.pop("finetune_method", None)
        ordered.pop("lora_rank", None)
        ordered.pop("lora_targets", None)
        ordered.pop("lora_slots", None)
    elif (ordered.get("lora_rank") or ordered.get("_adapter")) and not ordered.get("finetune_method"):
        # "and with r=16?" in a QLoRA thread: a new rank keeps the thread's adapter method
        ordered["finetune_method"] = [thread_method if thread_method in ("lora", "qlora") else "lora"]


_SHAPE = ("layers", "hidden", "heads", "kv_heads", "ffn")


def _named_shape(fields: dict[str, Any], notes: list[str]) -> bool:
    """Flags that state the named model's own shape ("--num-layers 80 --hidden-size 8192 ...
    continued pretraining of Llama 3 70B"): the model, with what the flags leave out (its
    vocabulary, SwiGLU, untied embeddings), not a custom one built from Megatron's defaults."""
    preset = lookup_preset(str(fields.get("model", "")))
    arch = fields["arch"]
    if preset is None or not isinstance(arch, dict):
        return False
    mine = {"layers": preset.arch.layers, "hidden": preset.arch.hidden, "heads": preset.arch.heads,
            "kv_heads": preset.arch.kv_heads or preset.arch.heads, "ffn": preset.arch.ffn}
    if any(key in arch and arch[key] != mine[key] for key in _SHAPE):
        return False
    notes[:] = [n for n in notes if not n.startswith("custom architecture")]  # it is not one
    notes.append(f"the stated shape is {preset.id}'s: read as {preset.id}")
    return True


def virtual_from_layers(fields: dict[str, Any], per_chunk: Any, notes: list[str]) -> None:
    """Megatron's --num-layers-per-virtual-pipeline-stage N: virtual stages = layers / (pp x N)
    (Llama 3 70B's 80 layers, PP=4, 5 per chunk: 4 chunks per rank)."""
    pp, arch = fields.get("pp"), fields.get("arch")
    preset = lookup_preset(str(fields.get("model", "")))
    layers = arch.get("layers") if isinstance(arch, dict) else (
        preset.arch.layers if preset is not None else None)
    if not isinstance(per_chunk, int) or per_chunk < 1 or "virtual_stages" in fields \
            or not isinstance(pp, int) or not isinstance(layers, int) or layers % (pp * per_chunk):
        return
    chunks = layers // (pp * per_chunk)
    if chunks > 1:
        fields["virtual_stages"] = chunks
        notes.append(f"{per_chunk} layers per virtual stage: {layers} layers / (PP {pp} x "
                     f"{per_chunk}) = {chunks} virtual stages per rank")


def apply(fields: dict[str, Any], task: str, notes: list[str], grad_accum: int | None,
          thread: dict[str, Any] | None = None) -> None:
    """Readings across fields (module docstring), in place."""
    if fields.get("virtual_stages", 1) > 1:  # "vpp 4": virtual stages are the interleaved schedule
        fields.setdefault("pp_schedule", "interleaved")
    if "arch" in fields and _named_shape(fields, notes):
        fields.pop("arch")
    if "arch" in fields:
        fields.pop("model", None)
        fields.pop("params_b", None)
    elif "model" in fields:
        fields.pop("params_b", None)
    if task == "finetune":
        if fields.get("finetune_method") == "qlora":
            fields.setdefault("quantization", "nf4")
        elif fields.get("quantization") == "nf4" and fields.get("finetune_method") in (None, "lora"):
            fields["finetune_method"] = "qlora"
    if grad_accum is not None and task != "infer" and "global_batch" not in fields:
        said = {**(thread or {}), **fields}  # "mbs 1 with grad accum 2 then": the thread's GPUs
        micro = said.get("micro_batch", 1)
        count = said.get("gpu_count")
        if isinstance(count, int) and isinstance(micro, int):
            fields["global_batch"] = micro * grad_accum * count
            notes.append(f"global batch = {micro} x {grad_accum} accumulation x {count} GPUs")
        else:
            notes.append(f"gradient accumulation {grad_accum} does not change per-GPU memory")


def gpus_from_layout(fields: dict[str, Any], notes: list[str], dp: int | None,
                     low: str = "") -> None:
    """GPUs from how they are laid out: nodes x GPUs per node (``--nnodes 2 --nproc_per_node
    8``; ``--nproc_per_node 4`` alone is one node), or DP x TP x PP (``--dp 2 --tp 4``)."""
    per, nodes = fields.get("gpus_per_node"), fields.get("nodes")
    if "gpu_count" not in fields and nodes is None and isinstance(per, int) \
            and "--nproc" in low and "nnodes" not in low:
        fields["gpu_count"] = per  # the GPUs it uses, not the node's size
        del fields["gpus_per_node"]
        notes.append(f"--nproc_per_node {per} with no --nnodes: one node, {per} GPUs")
    if "gpu_count" not in fields and isinstance(per, int) and isinstance(nodes, int):
        fields["gpu_count"] = per * nodes
        notes.append(f"{nodes} nodes x {per} GPUs = {per * nodes} GPUs")
    count, nodes = fields.get("gpu_count"), fields.get("nodes")
    if isinstance(count, int) and isinstance(nodes, int) and nodes > 1 and count == per:
        # "(8x h100 each) ... 16 of those instances": the count written was one node's
        fields["gpu_count"] = count = per * nodes
        notes.append(f"{nodes} nodes x {per} GPUs = {count} GPUs")
    if isinstance(count, int) and isinstance(nodes, int) and nodes > 1 and count % nodes == 0 \
            and "gpus_per_node" not in fields:  # "2 nodes of 4x A100": nodes of 4, not the usual 8
        fields["gpus_per_node"] = count // nodes
    tp, pp = fields.get("tp", 1), fields.get("pp", 1)
    if "gpu_count" not in fields and dp is not None and isinstance(tp, int) and isinstance(pp, int):
        fields["gpu_count"] = dp * tp * pp
        notes.append(f"{dp * tp * pp} GPUs = DP {dp} x TP {tp}" + (f" x PP {pp}" if pp > 1 else ""))


# "$98/hr per instance": a price for a whole server, not for one of its GPUs
_PRICE_PER_SERVER = re.compile(
    r"\$\s?\d[\d,.]*k?\s*(?:/\s*h(?:ou)?r?|(?:per|an?)\s+h(?:ou)?r|hourly)?\s*"
    r"(?:per|/|an?|each|for\s+(?:the|one|each|an?))\s*(?:instance|node|server|box|machine|vm)\b"
    # or said of a cloud instance by name: "p5.48xlarge is $98.32/hr"
    r"|\b[a-z]\d[a-z\d\-]*\.\d*x?large\s+(?:(?:instances?|nodes?|vms?|boxes|machines?)\s+)?"
    r"(?:is|costs?|at|runs?|=|@|for)?\s*(?:about\s+|~)?\$"
    r"|\ba[23]-\w+gpu-\d+g\s+(?:is|costs?|at|=|@)?\s*(?:about\s+|~)?\$")


def price_per_server(fields: dict[str, Any], low: str, notes: list[str]) -> None:
    """A price per instance or node is divided by its GPUs (the stated layout's, else the
    GPU type's usual server)."""
    price = fields.get("price_per_gpu_hour")
    if not isinstance(price, int | float) or not _PRICE_PER_SERVER.search(low):
        return
    count, nodes, per = fields.get("gpu_count"), fields.get("nodes"), fields.get("gpus_per_node")
    if not isinstance(per, int):
        if isinstance(count, int) and isinstance(nodes, int) and nodes and count % nodes == 0:
            per = count // nodes
        else:
            try:
                per = find_gpu(str(fields["gpu"])).gpus_per_node if "gpu" in fields else None
            except (LookupError, ValueError):
                per = None
    if not isinstance(per, int) or per < 1:
        return
    fields["price_per_gpu_hour"] = round(price / per, 4)
    notes.append(f"${price:,.2f} per server / {per} GPUs = ${price / per:,.2f} per GPU-hour")


def instance_price(fields: dict[str, Any], instance: object, notes: list[str]) -> None:
    """No price said and a cloud instance named whose on-demand price is recorded: that price
    over its GPUs ("AWS p5": $55.04 / 8 = $6.88 per GPU-hour, not the catalog's $2.99)."""
    if "price_per_gpu_hour" in fields or not isinstance(instance, str):
        return
    found = cloud_price(instance)
    gpus = fields.get("gpus_per_node")
    if found is None or not isinstance(gpus, int) or gpus < 1:
        return
    cloud, per_hour = found
    fields["price_per_gpu_hour"] = round(per_hour / gpus, 4)
    notes.append(f"{instance} on {cloud}: ${per_hour:,.2f}/h on demand / {gpus} GPUs = "
                 f"${per_hour / gpus:,.2f} per GPU-hour")


# what may stand between the GPUs of one group: "2 h100 + 2 a100", "4 a100 and 4 h100"
_TOGETHER = re.compile(r"[\s,]*(?:\+|and|&|plus|with)?[\s,]*(?:\d{1,5}\s*x?\s*)?")


def mixed_fleet(fields: dict[str, Any], mentions: list[tuple[int, int, dict[str, Any]]],
                low: str, notes: list[str]) -> None:
    """"2 H100 + 2 A100" (two GPU types with their counts, joined, not compared): one job over
    all of them is sized as the smallest memory of the group and runs at the slowest member's
    pace (collectives wait for it), so it is read as that type times the total count.
    ``mentions``: (start, end, the GPU and its count) in the order written."""
    counted = [m for _, _, m in mentions if isinstance(m.get("gpu_count"), int)]
    if len({m["gpu"] for m in counted}) < 2 or len(counted) != len(mentions):
        return
    if not all(_TOGETHER.fullmatch(low[a[1]:b[0]]) for a, b in itertools.pairwise(mentions)):
        return
    gpus = {m["gpu"]: find_gpu(str(m["gpu"])) for m in counted}
    weakest = min(gpus.values(), key=lambda g: (g.memory_bytes_as_sold, g.fp16_dense_tflops))
    total = sum(int(m["gpu_count"]) for m in counted)
    named = " + ".join(f"{m['gpu_count']}x {gpus[m['gpu']].name}" for m in counted)
    fields["gpu"], fields["gpu_count"] = weakest.id, total
    fields.pop("nodes", None)
    fields.pop("gpus_per_node", None)
    notes.append(f"{named} read as {total}x {weakest.name}: a mixed group holds what its "
                 "smallest memory holds and runs at its slowest member's pace")


def serving_gpus(fields: dict[str, Any], notes: list[str]) -> None:
    """Serving with ``--tensor-parallel-size 4`` (and no count) runs on tp x pp GPUs, as vLLM does."""
    tp, pp = fields.get("tp"), fields.get("pp", 1)
    if fields.get("task") != "infer" or "gpu_count" in fields or "nodes" in fields \
            or not isinstance(tp, int) or not isinstance(pp, int) or tp * pp < 1:
        return
    fields["gpu_count"] = tp * pp
    notes.append(f"{tp * pp} GPUs = TP {tp}" + (f" x PP {pp}" if pp > 1 else "") + " (one replica)")


def out_of_range(merged: dict[str, Any], compare: tuple[Variant, ...]) -> tuple[str, str] | None:
    """The first value no real job has (negative, zero, absurd), as (field, friendly sentence)."""
    sides: list[dict[str, Any]] = [{}, *(v.changes for v in compare)]
    for changes in sides:
        values = {k: v for k, v in {**merged, **changes}.items() if k in REQUEST_FIELDS and k != "arch"}
        try:
            EstimateRequest(**values)  # checks the ranges, nothing else
        except InvalidInput as exc:
            return exc.field, invalid_sentence(exc)
    return None


def invalid_sentence(exc: InvalidInput) -> str:
    what = exc.field.replace("_", " ")
    if "__" in exc.message:  # a Python signature: say what is missing instead
        return ("That architecture is incomplete: give at least layers, hidden, heads and vocab, "
                "e.g. `48 layers, hidden 6144, 48 heads, vocab 100k`.")
    accepted = exc.accepted if len(exc.accepted) <= 120 else exc.accepted[:117] + "..."
    return f"That {what} won't work: {exc.message}. Accepted: {accepted}."


def clarify(merged: dict[str, Any], ordered: dict[str, list[Any]], unknown: Unknown | None,
            intent: str) -> str | None:
    """One question back when something essential is missing (None when nothing is)."""
    if unknown is not None and unknown.kind == "gpu":
        return _closest_gpus(unknown)
    if intent != "compare" and not any(k in merged for k in ("model", "params_b", "arch")):
        if unknown is not None:
            return _did_you_mean("model", unknown)
        if ordered.get("_arch_partial"):
            return ("For a custom architecture I need at least the number of layers and the hidden "
                    "size, e.g. `48 layers, hidden 6144, 48 heads, 8 kv heads, vocab 100k`.")
        example = _EXAMPLES.get(intent, _EXAMPLES["train"])
        return f"Which model? Give a name or a size, e.g. `{example}`."
    if intent == "time_cost" and "tokens" not in merged:
        return "How many training tokens? e.g. `... on 300B tokens` (I show memory until then)."
    return None


def _closest_gpus(unknown: Unknown) -> str:
    """"I don't know the RTX 3060 12GB; closest I know: ...": asked, never swapped for another card."""
    name = unknown.name or "that GPU"
    ids = list(unknown.suggestions)
    if not ids:
        return f"I don't know the {name}. Name a GPU I know, e.g. `8x A100 80GB` or `one 4090`."
    choice = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " or " + ids[-1]
    return f"I don't know the {name}; closest I know: {choice}. Name one of those to size it on that."


def _did_you_mean(kind: str, unknown: Unknown) -> str:
    text = f"I don't know the {kind} '{unknown.name}'" if unknown.name else f"I don't know that {kind}"
    ids = list(unknown.suggestions)
    if not ids:
        return text + "."
    choice = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " or " + ids[-1]
    return f"{text}. Did you mean {choice}?"
