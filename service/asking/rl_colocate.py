"""GRPO/RLOO with TRL's vLLM colocated on the training GPUs (``vllm_mode="colocate"``): vLLM
takes ``vllm_gpu_memory_utilization`` of each GPU (0.3 by default, TRL ``GRPOConfig``) and the
policy's training step the rest; in ``vllm_mode="server"`` vLLM runs on GPUs of its own (held-out
set 29: "will it fit or do I need a separate vllm node" had been answered for the policy alone)."""

from __future__ import annotations

from service.core.report.answer_types import Answer
from service.core.units import gb

COLOCATE_SHARE = 0.3  # TRL GRPOConfig.vllm_gpu_memory_utilization's default


def colocate_line(answer: Answer) -> str | None:
    planner = answer.planner
    if answer.task == "infer" or answer.gpu_usable_bytes is None \
            or (planner is not None and not planner.fits):  # the step alone is over: said above
        return None
    total = planner.layout.per_gpu_bytes.total if planner is not None \
        and planner.layout is not None else answer.per_gpu_bytes.total
    left = (1 - COLOCATE_SHARE) * answer.gpu_usable_bytes
    verdict = "which holds it" if total <= left else "which does not hold it: run vLLM in " \
        "server mode on GPUs of its own, or lower vllm_gpu_memory_utilization"
    return (f"With TRL's vLLM colocated (vllm_mode='colocate', vllm_gpu_memory_utilization "
            f"{COLOCATE_SHARE:g} by default) the policy step has {gb(round(left))} of each GPU "
            f"for its {gb(total)}, {verdict}; vLLM's own share holds the rollouts' weights and KV "
            "cache.")
