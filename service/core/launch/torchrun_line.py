"""The ``torchrun`` line that starts a training plan's processes (option names of torch 2.15
``torch/distributed/run.py``): one node standalone, several with a c10d rendezvous; the script
and its arguments after it."""

from __future__ import annotations

from service.core.launch.launch_shape import LaunchShape, shell_line
from service.core.launch.launch_types import LaunchConfig

RDZV_PORT = 29500  # torchrun's default master port


def torchrun_options(shape: LaunchShape) -> list[str]:
    options = ["--nnodes", str(shape.nodes), "--nproc-per-node", str(shape.per_node)]
    if shape.nodes == 1:
        return [*options, "--standalone"]
    return [*options, "--rdzv-backend", "c10d", "--rdzv-endpoint", f"$MASTER_ADDR:{RDZV_PORT}",
            "--rdzv-id", "fitcheck"]


def torchrun_config(shape: LaunchShape, script: list[str], notes: tuple[str, ...],
                    env: tuple[str, ...] = ()) -> LaunchConfig:
    """``script``: the training script (or ``-m module``) and its arguments; ``env``:
    ``NAME=value`` settings the line starts with (not part of ``argv``)."""
    options = torchrun_options(shape)
    argv = ["torchrun", *options, *script]
    where = ("run it on each of the nodes, MASTER_ADDR set to the first node's address"
             if shape.nodes > 1 else "one node")
    return LaunchConfig("torchrun", "torchrun launch line", "shell", None,
                        shell_line([*env, "torchrun"], options, script),
                        None, tuple(argv), (where, *notes))
