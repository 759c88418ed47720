"""Serving that does not fit the given GPUs: what an engineer changes first, and its cost.

1. weight quantization: fp8 where the GPU computes in fp8, else (or then) AWQ/GPTQ int4;
2. an fp8 KV cache;
3. fewer sequences at once (the rest wait), or a shorter context for the asked sequences;
4. more GPUs of the same type; 5. other GPU types the team has (``fleet``), in no more nodes.
Each change is tried alone, then on top of the ones before it (an engineer who quantizes the
weights keeps that when also quantizing the KV cache); the first that fits is the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.memory.serving import LLAMACPP, ServingBudget
from service.core.model.formats import QUANT_BITS
from service.core.planning.fleet_moves import FleetFit, fleet_moves
from service.core.planning.plan_types import SHOWN_FIXES, Fix, ServingFit, hourly_price
from service.core.planning.serving_shapes import evaluate
from service.core.units import counted

Evaluate = Callable[[Job, Gpu, int, int], ServingFit]
Fewest = Callable[[Job, Gpu], ServingFit | None]
# vLLM's docs: raise --gpu-memory-utilization when the GPU runs nothing else; 0.95 keeps ~4 GB of
# an 80 GB card for what the profile misses (fragmentation, NCCL growth)
RAISED_FRACTION = 0.95
QUALITY_INT4 = "4-bit weights: about 1 point lower on benchmarks (AWQ, GPTQ papers)"
QUALITY_FP8 = "fp8 weights: near-lossless (fp8 E4M3 with per-channel scales)"
QUALITY_KV = "fp8 KV cache: a small quality cost (vLLM --kv-cache-dtype fp8)"
QUALITY_Q4 = "Q4_K_M: the usual 4-bit GGUF, a small quality cost over Q5/Q6/Q8"
QUALITY_KV_Q8 = ("q8_0 KV cache: a small quality cost (llama.cpp --cache-type-k q8_0 "
                 "--cache-type-v q8_0 -fa, ollama OLLAMA_KV_CACHE_TYPE=q8_0)")


@dataclass(frozen=True, slots=True)
class ServingStep:
    what: str
    part: str  # what it quantizes: "weights" or "kv"; a later step of a part replaces it
    changes: dict[str, str | int | float | bool]
    cost: str
    job: Callable[[Job], Job]


def serving_steps(job: Job, gpu: Gpu) -> Iterator[ServingStep]:
    bits = QUANT_BITS[job.quantization]
    if job.framework == "llamacpp":
        yield from _llamacpp_steps(job, bits)
        return
    if bits > 8 and gpu.fp8_dense_tflops is not None:
        yield ServingStep("fp8 weights", "weights", {"quantization": "fp8"}, QUALITY_FP8,
                          lambda j: replace(j, quantization="fp8"))
    if bits > 4.5:
        yield ServingStep("AWQ int4 weights", "weights", {"quantization": "awq"}, QUALITY_INT4,
                          lambda j: replace(j, quantization="awq"))
    if job.kv_cache_dtype in ("auto", "bf16", "fp16", "fp32"):
        yield ServingStep("fp8 KV cache", "kv", {"kv_cache_dtype": "fp8"}, QUALITY_KV,
                          lambda j: replace(j, kv_cache_dtype="fp8"))


def _llamacpp_steps(job: Job, bits: float) -> Iterator[ServingStep]:
    """llama.cpp's own levers: a smaller GGUF quant, then a q8_0 KV cache (its KV types are
    f16, q8_0 and q4_0: ``--cache-type-k/-v``, with flash attention)."""
    if bits > QUANT_BITS["gguf-q4_k_m"]:
        yield ServingStep("Q4_K_M GGUF weights", "weights", {"quantization": "gguf-q4_k_m"},
                          QUALITY_Q4, lambda j: replace(j, quantization="gguf-q4_k_m"))
    if job.kv_cache_dtype in ("auto", "bf16", "fp16", "fp32"):
        yield ServingStep("q8_0 KV cache", "kv", {"kv_cache_dtype": "int8"}, QUALITY_KV_Q8,
                          lambda j: replace(j, kv_cache_dtype="int8"))


def _apply(job: Job, steps: list[ServingStep]) -> Job:
    for step in steps:
        job = step.job(job)
    return job


def _fix(steps: list[ServingStep], tail: str, fit: ServingFit, gpu: Gpu, cost: str = "",
         changes: dict[str, str | int | float | bool] | None = None) -> Fix:
    merged: dict[str, str | int | float | bool] = {}
    for step in steps:
        merged.update(step.changes)
    merged.update(changes or {})
    what = " + ".join([s.what for s in steps] + ([tail] if tail else []))
    note = "; ".join([s.cost for s in steps] + ([cost] if cost else []))
    room = f"room for {counted(fit.max_concurrent, 'sequence')} at {fit.context:,} tokens"
    return Fix(f"{what}: {room}", fit.gpus, gpu.id, fit.total_bytes, note, "serving", merged)


def serving_fixes(job: Job, gpu: Gpu, fit: ServingFit, min_gpus: int | None,
                  fleet: tuple[Gpu, ...], evaluate: Evaluate,
                  fewest: Fewest) -> tuple[Fix | None, list[Fix]]:
    """The fix and the next best two for a serving layout that falls short."""
    tp, pp = fit.tp, fit.pp
    fixes: list[Fix] = []
    carried: list[ServingStep] = []
    steps = list(serving_steps(job, gpu))
    for step in steps:
        for used in ([step], [*carried, step]) if carried else ([step],):
            trial = evaluate(_apply(job, used), gpu, tp, pp)
            if trial.fits:
                fixes.append(_fix(used, "", trial, gpu))
                break
        carried = [c for c in carried if c.part != step.part] + [step]
    for base in _lean_bases(steps):  # the first on which the weights leave room
        lean = _apply(job, base)
        trial = evaluate(lean, gpu, tp, pp)
        if trial.kv_budget_bytes <= 0:  # the weights leave no room at all
            continue
        if 0 < trial.max_concurrent < job.batch:
            fixes.append(_fix(base, f"{counted(trial.max_concurrent, 'sequence')} at once "
                              f"instead of {job.batch:,}", trial, gpu, "the other requests wait in the "
                              "queue: lower throughput" + _with_kv_step(lean, steps, base, gpu,
                                                                       tp, pp, evaluate),
                              {"concurrent": trial.max_concurrent}))
        context = _longest_context(lean, gpu, tp, pp, evaluate)
        if context:
            trial = evaluate(replace(lean, seq_len=context), gpu, tp, pp)
            fixes.append(_fix(base, f"context cut to {context:,} tokens", trial, gpu,
                              f"prompts and outputs beyond {context:,} tokens are cut",
                              {"seq_len": context}))
        break
    if min_gpus is not None:
        fixes += _fewer_quantized(job, gpu, steps, min_gpus, fewest)
        fixes.append(Fix(f"{min_gpus}x {gpu.name} instead of {fit.gpus}", min_gpus, gpu.id, None,
                         hourly_price(gpu, min_gpus), "more_gpus", {"gpu_count": min_gpus}))
    if len(fixes) < SHOWN_FIXES:  # other GPU types only when the answer has room for them
        fixes += _other_gpus(job, gpu, fleet, fewest, min_gpus or fit.gpus)
    return (fixes[0] if fixes else None), fixes[1:SHOWN_FIXES]


def _with_kv_step(lean: Job, steps: list[ServingStep], base: list[ServingStep], gpu: Gpu,
                  tp: int, pp: int, evaluate: Evaluate) -> str:
    """What the KV cache step would add to a fix that queues requests, when the step did not
    close the gap alone (Qwen2.5-72B AWQ on 2 L40S at 16k: 7 at once, 14 with an fp8 KV cache)."""
    kv = next((s for s in steps if s.part == "kv" and s not in base), None)
    if kv is None:
        return ""
    more = evaluate(kv.job(lean), gpu, tp, pp).max_concurrent
    return f"; {more:,} at once with an {kv.what}" if more > 0 else ""


def _fewer_quantized(job: Job, gpu: Gpu, steps: list[ServingStep], min_gpus: int,
                     fewest: Fewest) -> list[Fix]:
    """More GPUs of the type with a weight or KV format that needs fewer of them than the job as
    asked (Llama 3.1 70B on 4090s: 8 in bf16, 2 with AWQ int4; Qwen3-235B fp8 at 32k x 100 on
    H100s: 24 as asked, 16 with an fp8 KV cache), the fewest; on a tie the smaller quality cost
    (fp8 weights, then the fp8 KV cache, then 4-bit weights)."""
    best: tuple[ServingStep, ServingFit] | None = None
    for step in sorted(steps, key=lambda s: s.cost == QUALITY_INT4):
        found = fewest(step.job(job), gpu)
        if found is not None and found.gpus < min_gpus and (best is None or found.gpus < best[1].gpus):
            best = (step, found)
    if best is None:
        return []
    step, found = best
    return [Fix(f"{found.gpus}x {gpu.name} with {step.what} ({found.shape()}): room for "
                f"{counted(found.max_concurrent, 'sequence')} at {found.context:,} tokens",
                found.gpus, gpu.id, found.total_bytes, f"{step.cost}; {hourly_price(gpu, found.gpus)}",
                "more_gpus", {**step.changes, "gpu_count": found.gpus})]


# a few users: llama.cpp's server shares one batch among a few parallel slots; past them vLLM's
# continuous batching is the engine to keep
LLAMACPP_USERS = 8


def engine_fix(job: Job, gpu: Gpu, gpus: int, per_node: int, headroom: float) -> Fix | None:
    """llama.cpp (ollama) on the same GPUs, for a few users, where vLLM's up-front budget (90%,
    CUDA graphs, a profiled peak) leaves no room: it reserves nothing ahead and splits layers
    over the GPUs (gpt-oss-20b on a 16 GB card)."""
    if job.batch > LLAMACPP_USERS:
        return None
    budget = replace(LLAMACPP, memory_fraction=headroom)
    fit = evaluate(replace(job, framework="llamacpp"), gpu, 1, gpus, per_node, budget)
    if not fit.fits:
        return None
    return Fix(f"llama.cpp / ollama instead of vLLM: room for "
               f"{counted(fit.max_concurrent, 'sequence')} at {fit.context:,} tokens", gpus, gpu.id,
               fit.total_bytes, "it reserves nothing ahead and captures no CUDA graphs; a few "
               "parallel slots, slower than vLLM under load", "serving", {"framework": "llamacpp"})


def budget_fix(resolved: ResolvedJob, job: Job, gpu: Gpu, fit: ServingFit,
               per_node: int) -> Fix | None:
    """The engine's memory share, where a larger one holds the job on the same GPUs: a stated
    --gpu-memory-utilization (or SGLang --mem-fraction-static) below the engine's default
    back to it (Mistral-7B with 0.5 of an L4: its weights alone are over; at 0.90 it holds 5
    sequences), else the default raised to RAISED_FRACTION, the GPU given to the engine alone
    (Llama 3.3 70B in fp8 on one H100: room for 0 at 0.90, 3 at 0.95)."""
    default = ServingBudget()
    if job.framework not in ("vllm", "sglang"):
        return None
    # a stated share below the default goes back to it; the default (said or not) to RAISED
    stated = resolved.pinned("memory_headroom") and fit.memory_fraction < default.memory_fraction
    target = default.memory_fraction if stated else RAISED_FRACTION
    if fit.memory_fraction >= target:
        return None
    trial = evaluate(job, gpu, fit.tp, fit.pp, per_node,
                     replace(default, memory_fraction=target), fit.replicas)
    if not trial.fits:
        return None
    flag = "--gpu-memory-utilization" if job.framework == "vllm" else "the memory fraction"
    why = "the engine's default" if stated else "nothing else on the GPU"
    return Fix(f"{flag} {target:.2f} ({why}) instead of {fit.memory_fraction:.2f}: room for "
               f"{counted(trial.max_concurrent, 'sequence')} at {trial.context:,} tokens",
               fit.gpus, gpu.id, trial.total_bytes,
               "the GPU's other processes get less of its memory" if stated else
               "no room on the GPU for another process, and less slack for the engine's "
               "own spikes", "serving", {"memory_headroom": target})


def with_engine_fix(fix: Fix | None, others: list[Fix], engine: Fix) -> tuple[Fix, list[Fix]]:
    """The engine switch after the fixes on the same GPUs, before more or other GPUs."""
    ordered = [f for f in (fix, *others) if f is not None]
    at = next((i for i, f in enumerate(ordered) if f.kind != "serving"), len(ordered))
    ordered.insert(at, engine)
    return ordered[0], ordered[1:SHOWN_FIXES]


def said_first(first: Fix, fix: Fix | None, others: list[Fix]) -> tuple[Fix, list[Fix]]:
    """``first`` leads (the user's own setting is the cause), then the fixes found before it."""
    return first, [f for f in (fix, *others) if f is not None][:SHOWN_FIXES - 1]


def _lean_bases(steps: list[ServingStep]) -> list[list[ServingStep]]:
    """What fewer sequences or a shorter context are tried on: the job as asked, then each
    weight format (fp8, then int4: least quality cost first) with the KV cache step."""
    kv = [s for s in steps if s.part == "kv"]
    return [[], *([s, *kv] for s in steps if s.part == "weights")]


CONTEXT_STEP = 1024  # a shorter --max-model-len is offered in whole thousands of tokens


def _longest_context(job: Job, gpu: Gpu, tp: int, pp: int, evaluate: Evaluate) -> int:
    """The longest context, in whole CONTEXT_STEPs and at least one, that fits the asked
    sequences: the largest power of two that fits, then bisection up to the next one (or the
    asked length): Qwen2.5 32B at 32k on one A100 80GB is offered 30,720, not 16,384."""
    def fits(tokens: int) -> bool:
        return evaluate(replace(job, seq_len=tokens), gpu, tp, pp).fits

    context = 1 << (job.seq_len.bit_length() - 1)
    if context == job.seq_len:
        context //= 2
    while context >= CONTEXT_STEP and not fits(context):
        context //= 2
    if context < CONTEXT_STEP:
        return 0
    low, high = context // CONTEXT_STEP, min(2 * context, job.seq_len) // CONTEXT_STEP
    if high * CONTEXT_STEP >= job.seq_len:
        high -= 1  # the asked length does not fit
    while low < high:  # low fits; find the largest step count up to high that fits
        mid = (low + high + 1) // 2
        if fits(mid * CONTEXT_STEP):
            low = mid
        else:
            high = mid - 1
    return low * CONTEXT_STEP


def _other_gpus(job: Job, gpu: Gpu, fleet: tuple[Gpu, ...], fewest: Fewest,
                gpus: int) -> list[Fix]:
    """The fleet's other GPU types that serve the job (``fleet_moves``)."""
    def fit_on(other: Gpu) -> FleetFit | None:
        fit = fewest(replace(job, gpu=other), other)
        if fit is None:
            return None
        return FleetFit(fit.gpus, other.gpus_per_node, fit.shape(), fit.total_bytes)

    return fleet_moves(gpu, fleet, gpus, fit_on)
