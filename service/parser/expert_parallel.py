"""'EP on', vLLM's ``--enable-expert-parallel``: expert parallelism with no size named.

vLLM then splits the routed experts over every GPU of the server (its EP group is TP x DP), so
with the GPUs known the size is the GPUs over the TP size: the attention ranks that share the
experts (fitcheck's ``ep``). With TP over all the GPUs that is EP over the TP ranks, which
splits the experts as TP does, and nothing is set."""

from __future__ import annotations

from typing import Any


def expert_parallel_on(fields: dict[str, Any], switched_on: bool, notes: list[str]) -> None:
    gpus, tp = fields.get("gpu_count"), fields.get("tp", 1)
    if not switched_on or "ep" in fields or fields.get("task") != "infer" \
            or not isinstance(gpus, int) or not isinstance(tp, int) or tp < 1:
        return
    ep = gpus // tp
    if ep > 1:
        fields["ep"] = ep
        notes.append(f"expert parallel on {gpus} GPUs with TP={tp}: {ep} attention ranks share "
                     "the experts (vLLM --enable-expert-parallel)")
