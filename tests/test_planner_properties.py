"""Property: over random requests, every layout the planner returns is physically valid."""

from __future__ import annotations

import pytest
from engine_support import plan_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.core.errors import InvalidInput
from service.core.hardware.gpus import all_gpus, find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.model.presets import all_presets
from service.core.planning.layouts import nvlink_tp_domain, violations

PRESETS = sorted(p.id for p in all_presets())
GPUS = sorted(g.id for g in all_gpus())

requests = st.builds(
    EstimateRequest,
    model=st.sampled_from(PRESETS),
    seq_len=st.sampled_from([512, 1024, 2048, 4096, 8192, 16384, 32768]),
    global_batch=st.one_of(st.none(), st.sampled_from([1, 8, 16, 32, 96, 128, 512, 1024])),
    gpu=st.sampled_from(GPUS),
    zero_stage=st.one_of(st.none(), st.sampled_from([1, 3])),
    recompute=st.one_of(st.none(), st.just("selective")),
    task=st.sampled_from(["train", "train", "finetune"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests)
def test_every_planned_layout_obeys_the_rules(request: EstimateRequest) -> None:
    arch = resolve(EstimateRequest(model=request.model)).job.arch
    if arch.positions == "learned" and (request.seq_len or 0) > arch.max_positions:
        with pytest.raises(InvalidInput):  # GPT-2 cannot take more than its position table
            plan_of(request)
        return
    plan = plan_of(request)
    if not plan.fits:
        assert plan.gpus is None and plan.min_gpus is None
        return
    lay, est = plan.layout, plan.estimate
    assert lay is not None and est is not None
    gpu = find_gpu(plan.gpu_id)
    arch = resolve(request).job.arch
    domain = nvlink_tp_domain(gpu, gpu.gpus_per_node)
    # dp x tp x pp x cp = GPUs; tp divides heads and KV heads inside the NVLink domain; pp <=
    # layers; DP splits whole sequences; whole nodes above one node
    assert violations(lay, arch, domain, gpu.gpus_per_node, request.seq_len or 4096,
                      request.global_batch or 0) == []
    assert lay.dp * lay.tp * lay.pp * lay.cp == lay.gpus == plan.gpus == plan.min_gpus
    assert arch.heads % lay.tp == 0 and arch.kv_heads_resolved % lay.tp == 0
    assert lay.tp <= domain and lay.pp <= arch.layers
    assert lay.dp <= lay.global_batch // lay.micro_batch
    if request.global_batch:
        assert lay.dp * lay.micro_batch * lay.grad_accum == request.global_batch
    if lay.gpus > gpu.gpus_per_node:
        assert lay.gpus % gpu.gpus_per_node == 0
    # per-GPU total within the headroom, as the engine's own estimate of that layout says
    assert est.total_bytes <= plan.budget_bytes
    assert plan.budget_bytes == round(gpu.memory_bytes_usable * plan.headroom)
    # what the user pinned stays pinned
    if request.zero_stage is not None:
        assert lay.zero_stage == request.zero_stage
    if request.recompute is not None:
        assert lay.recompute == request.recompute
    assert lay.offload == "none"
