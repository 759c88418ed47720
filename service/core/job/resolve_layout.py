"""The parallel layout a request states, resolved: GPU count, dp x tp x pp x cp, expert
parallelism, ZeRO, and for serving the tensor-parallel size vLLM accepts (``resolve.py``)."""

from __future__ import annotations

from service.core.errors import InvalidInput
from service.core.job.assumptions import default, derived, stated
from service.core.job.choices import PIPELINE_SCHEDULES, choice, llamacpp_serves
from service.core.job.request import EstimateRequest
from service.core.job.resolve_notes import Notes
from service.core.job.spec import Parallelism
from service.core.model.lookup import ResolvedModel
from service.core.model.tensor_parallel import expert_rank_tp, largest_serving_tp


def _gpu_count(req: EstimateRequest, per_node: int, model_split: int) -> int:
    if req.gpu_count is not None:
        if req.nodes is not None and req.gpu_count % req.nodes:
            raise InvalidInput("gpu_count", f"{req.gpu_count} GPUs do not split over "
                               f"{req.nodes} nodes", "a multiple of nodes")
        return req.gpu_count
    if req.nodes is not None:
        return req.nodes * per_node
    return model_split


OFFLOAD_STAGE = {"optimizer": 2, "optimizer_and_params": 3}


def parallelism(req: EstimateRequest, task: str, per_node: int, model: ResolvedModel,
                notes: Notes) -> Parallelism:
    arch = model.arch
    tp, pp, cp, ep = req.tp or 1, req.pp or 1, req.cp or 1, req.ep or 1
    # without a stated count, the fewest GPUs the stated split needs: expert parallelism is
    # carved out of data parallelism, so EP=64 needs 64 data-parallel ranks
    gpus = _gpu_count(req, per_node, tp * pp * cp * ep)
    if task == "infer" and ep > 1 and req.tp is None:
        # a stated EP in serving: that many attention ranks share the experts; TP splits each
        tp = expert_rank_tp(gpus, pp * cp, ep)
        notes.add(derived("tp", tp, f"the GPUs over ep={req.ep} attention ranks"))
    elif task == "infer" and req.tp is None and req.pp is None and gpus > 1 \
            and llamacpp_serves(req.framework, req.quantization):
        pp = gpus // cp
        notes.add(derived("pp", pp, "llama.cpp splits the layers over the GPUs "
                          "(--split-mode layer)"))
    elif task == "infer" and req.tp is None and gpus > 1:
        rest = gpus // (pp * cp) or 1
        tp = largest_serving_tp(arch, rest, per_node)
        notes.add(derived("tp", tp, "serving splits the model over the GPUs with tensor "
                          "parallelism (the largest size vLLM accepts for this model, in a node)"))
        if tp < rest and req.pp is None:  # "6 A100s" for 64 heads: TP=2 x PP=3
            pp = gpus // (tp * cp)
            notes.add(derived("pp", pp, "pipeline parallelism over the GPUs TP cannot use"))
    if gpus % (tp * pp * cp):
        raise InvalidInput("gpu_count", f"{gpus} GPUs are not a multiple of tp x pp x cp = "
                           f"{tp * pp * cp}", "gpu_count = dp x tp x pp x cp")
    if arch.heads % tp:
        raise InvalidInput("tp", f"tp={tp} does not divide {arch.heads} attention heads",
                           f"a divisor of {arch.heads}")
    if task != "infer" and arch.kv_heads_resolved % tp:
        raise InvalidInput("tp", f"tp={tp} does not divide {arch.kv_heads_resolved} KV heads",
                           f"a divisor of {arch.kv_heads_resolved} (Megatron query groups)")
    if pp > arch.layers:
        raise InvalidInput("pp", f"pp={pp} exceeds {arch.layers} layers", f"1..{arch.layers}")
    dp = gpus // (tp * pp * cp)
    # serving engines split experts over the tensor-parallel ranks too (SGLang --tp 16 --ep 16)
    ep_group = gpus if task == "infer" else dp
    if ep > 1 and (arch.moe is None or arch.moe.experts % ep or ep_group % ep):
        folded = arch.moe is not None and not arch.moe.experts % ep and not (dp * tp * cp) % ep
        raise InvalidInput("ep", f"ep={ep} must divide the experts and dp={dp}" + (
            ": fitcheck carves expert parallelism out of data parallelism (DeepSpeed-MoE, "
            "Megatron without MoE parallel folding); folding EP over TP x DP "
            "(--expert-tensor-parallel-size 1) is not modelled" if folded else ""),
                           "a divisor of both (MoE models only)")
    if req.shard_group and dp % req.shard_group:
        raise InvalidInput("shard_group", f"{req.shard_group} does not divide dp={dp}",
                           f"a divisor of {dp}")
    for name in ("tp", "pp", "cp", "ep", "sequence_parallel", "shard_group", "virtual_stages"):
        if getattr(req, name) is not None:
            notes.add(stated(name, getattr(req, name)))
    zero = req.zero_stage if req.zero_stage is not None else 0
    # a stated pipeline with no framework named runs on Megatron-LM (stacks.py), as Megatron
    megatron = req.framework == "megatron" or (req.framework is None and (req.pp or 1) > 1)
    if task != "infer" and req.zero_stage is None and megatron and dp * cp > 1:
        zero = 1  # what NVIDIA's recipes run
        notes.add(default("zero_stage", 1, "Megatron-LM's distributed optimizer "
                          "(--use-distributed-optimizer), as its example scripts and NeMo's "
                          "recipes run it" + ("" if req.framework else ", and a pipeline runs on "
                          "Megatron-LM") + "; say 'zero 0' for plain DDP",
                          "Megatron-LM examples/llama, examples/gpt3; NeMo llm recipes"))
    elif task != "infer" and req.zero_stage is None and req.offload in OFFLOAD_STAGE:
        zero = OFFLOAD_STAGE[req.offload]  # DeepSpeed offloads from a ZeRO stage, never stage 0
        notes.add(default("zero_stage", zero, "CPU offload runs inside ZeRO: ZeRO-Offload on "
                          "stage 2, parameter offload on stage 3 (DeepSpeed rejects stage 0)",
                          "DeepSpeed ZeRO-Offload tutorial; runtime/zero/config.py"))
    elif task != "infer":
        notes.value("zero_stage", 0, "plain data parallelism unless a ZeRO/FSDP stage is named")
    if task != "infer" and zero == 0 and req.offload == "optimizer":
        raise InvalidInput("offload", "offloading the optimizer needs a ZeRO stage (1-3): DeepSpeed "
                           "builds its CPU Adam only for ZeRO's partitions", "zero_stage 1, 2 or 3")
    sequence_parallel = bool(req.sequence_parallel)
    if req.sequence_parallel is None and tp > 1 and task != "infer":
        sequence_parallel = True
        notes.add(default("sequence_parallel", True, "tensor-parallel training runs with sequence "
                          "parallelism (Megatron-LM --sequence-parallel, torchtitan's TP plan)",
                          "Korthikanti et al. 2022, sec. 4.2.2"))
    return Parallelism(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep,
                       sequence_parallel=sequence_parallel,
                       zero_stage=zero,
                       shard_group=req.shard_group or 0,
                       pp_schedule=choice("pp_schedule", req.pp_schedule or "1f1b",
                                          PIPELINE_SCHEDULES),
                       virtual_stages=req.virtual_stages or 1)
