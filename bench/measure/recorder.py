"""Recording what autograd keeps for backward: a saved-tensor hook that deduplicates storages,
leaves out parameters and buffers, attributes each tensor to the module it was saved in, and
catches the layer inputs that non-reentrant gradient checkpointing holds; plus glibc's heap
counter as an independent check. Used by ``saved_activations.py``."""

from __future__ import annotations

import ctypes
import gc
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

LAYER_RE = re.compile(r"\.(?:layers|h)\.(\d+)(?:\.|$)")
USE_REENTRANT = False


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            *["arena", "ordblks", "smblks", "hblks", "hblkhd"],
            *["usmblks", "fsmblks", "uordblks", "fordblks", "keepcost"],
        )
    ]


def _heap_reader() -> Callable[[], int] | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    fn.restype = _MallInfo2

    def read() -> int:
        info = fn()
        return int(info.uordblks + info.hblkhd)

    return read


HEAP_IN_USE = _heap_reader()


@dataclass
class _Saved:
    tensor: torch.Tensor
    scope: str
    source: str  # "autograd" or "checkpoint_input"


class SavedTensorRecorder:
    """Pack hook that keeps every saved tensor and the module it was saved in."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.items: list[_Saved] = []
        self.unpacked: list[int] = []
        self._scope: list[str] = []
        self._handles: list[Any] = []
        self._wrapped: list[tuple[nn.Module, Callable[..., Any]]] = []

    # scope tracking --------------------------------------------------------------------------
    def _push(self, name: str) -> Callable[..., None]:
        def pre(_m: nn.Module, _args: Any) -> None:
            self._scope.append(name)

        return pre

    def _pop(self, _m: nn.Module, _args: Any, _out: Any) -> None:
        if self._scope:
            self._scope.pop()

    def __enter__(self) -> SavedTensorRecorder:
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._push(name or "<root>")))
            self._handles.append(module.register_forward_hook(self._pop))
        for module in self.model.modules():
            func = getattr(module, "_gradient_checkpointing_func", None)
            if func is not None and getattr(module, "gradient_checkpointing", False):
                self._wrapped.append((module, func))
                module._gradient_checkpointing_func = self._wrap_checkpoint(func)
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(None, None, None)
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for module, func in self._wrapped:
            module._gradient_checkpointing_func = func
        self._wrapped.clear()

    # hooks -----------------------------------------------------------------------------------
    def _pack(self, t: torch.Tensor) -> int:
        self.items.append(_Saved(t, self._scope[-1] if self._scope else "<top>", "autograd"))
        return len(self.items) - 1

    def _unpack(self, i: int) -> torch.Tensor:
        self.unpacked.append(i)
        return self.items[i].tensor

    def _wrap_checkpoint(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(fn: Any, *args: Any, **kwargs: Any) -> Any:
            scope = self._scope[-1] if self._scope else "<top>"
            held = list(args) + list(kwargs.values()) + list(getattr(fn, "keywords", {}).values())
            for t in _iter_tensors(held):
                self.items.append(_Saved(t, scope, "checkpoint_input"))
            return func(fn, *args, **kwargs)

        return wrapped

    # names from the graph --------------------------------------------------------------------
    def grad_fn_names(self, root: Any) -> dict[int, list[str]]:
        """Walk the graph from ``root`` and name, for each saved index, the node fields holding it.

        Reading a ``_saved_*`` field calls our unpack hook, which logs the index. Only safe
        without checkpointing (a checkpoint holder would recompute its layer when unpacked).
        """
        names: dict[int, list[str]] = {}
        stack = [root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            fields = [a for a in dir(node) if a.startswith("_saved_")]
            if hasattr(node, "saved_tensors") and not fields:
                fields = ["saved_tensors"]
            for attr in fields:
                self.unpacked.clear()
                try:
                    getattr(node, attr)
                except RuntimeError:
                    continue
                for i in self.unpacked:
                    names.setdefault(i, []).append(f"{node.name()}.{attr}")
            stack.extend(nxt for nxt, _ in node.next_functions)
        return names


def _iter_tensors(obj: Any) -> Iterator[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(o)


def _layer_of(scope: str) -> str:
    m = LAYER_RE.search("." + scope)
    return m.group(1) if m else "other"


def _summarise(
    items: list[_Saved],
    names: dict[int, list[str]],
    param_ptrs: set[int],
    buffer_ptrs: set[int],
    verbose: bool,
) -> dict[str, Any]:
    """Deduplicate saved tensors by storage; returns plain data only (no tensor references)."""
    storage_ids: dict[int, int] = {}
    first_scope: dict[int, str] = {}
    storage_bytes: dict[int, int] = {}
    storage_layers: dict[int, set[str]] = {}
    autograd_ptrs: set[int] = set()
    tensors: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        t = item.tensor
        st = t.untyped_storage()
        ptr, nbytes = st.data_ptr(), st.nbytes()
        if ptr in param_ptrs:
            status = "parameter"
        elif ptr in buffer_ptrs:
            status = "buffer"
        elif ptr == 0 or nbytes == 0:
            status = "empty"
        elif ptr in first_scope:
            status = "duplicate"
        else:
            status = "new"
            storage_ids[ptr] = len(storage_ids)
            first_scope[ptr] = item.scope
            storage_bytes[ptr] = nbytes
        if status in ("new", "duplicate"):
            storage_layers.setdefault(ptr, set()).add(_layer_of(item.scope))
            if item.source == "autograd":
                autograd_ptrs.add(ptr)
        if verbose:
            tensors.append(
                {
                    "i": i,
                    "scope": item.scope,
                    "source": item.source,
                    "grad_fn": names.get(i, []),
                    "shape": list(t.shape),
                    "dtype": str(t.dtype).removeprefix("torch."),
                    "storage": storage_ids.get(ptr),
                    "storage_nbytes": nbytes,
                    "status": status,
                }
            )

    by_layer: dict[str, int] = {}
    for ptr, scope in first_scope.items():
        key = _layer_of(scope)
        by_layer[key] = by_layer.get(key, 0) + storage_bytes[ptr]
    autograd_bytes = sum(n for p, n in storage_bytes.items() if p in autograd_ptrs)
    return {
        "saved_bytes": sum(storage_bytes.values()),
        "autograd_saved_bytes": autograd_bytes,
        "checkpoint_held_bytes": sum(storage_bytes.values()) - autograd_bytes,
        "saved_bytes_by_layer": dict(sorted(by_layer.items())),
        "bytes_in_storages_shared_across_layers": sum(
            storage_bytes[p] for p, ls in storage_layers.items() if len(ls) > 1
        ),
        "n_storages": len(storage_bytes),
        "tensors": tensors,
    }


def measure(
    model: nn.Module,
    input_ids: torch.Tensor,
    verbose: bool,
    memory_in_use: Callable[[], int] | None = HEAP_IN_USE,
) -> dict[str, Any]:
    """Saved-tensor bytes of one forward with loss; ``memory_in_use`` gives the freed cross-check
    (glibc heap on CPU; pass ``torch.cuda.memory_allocated`` on a GPU)."""
    param_ptrs = {p.untyped_storage().data_ptr() for p in model.parameters()}
    buffer_ptrs = {b.untyped_storage().data_ptr() for b in model.buffers()}
    checkpointing = any(getattr(m, "gradient_checkpointing", False) for m in model.modules())

    gc.collect()
    rec = SavedTensorRecorder(model)
    t0 = time.perf_counter()
    with rec:
        out = model(input_ids=input_ids, labels=input_ids)
    forward_s = time.perf_counter() - t0
    loss = out.loss
    del out

    names = rec.grad_fn_names(loss.grad_fn) if verbose and not checkpointing else {}
    stats = _summarise(rec.items, names, param_ptrs, buffer_ptrs, verbose)

    # Independent check: heap bytes released when the graph and the saved tensors go.
    freed: int | None = None
    if memory_in_use is not None:
        gc.collect()
        before = memory_in_use()
        del loss
        # The graph keeps our unpack hook (so the recorder) alive and the recorder keeps the
        # saved tensors (so the graph) alive: break that cycle by hand.
        rec.items.clear()
        del rec
        gc.collect()
        freed = before - memory_in_use()
    else:
        rec.items.clear()
    result: dict[str, Any] = {k: v for k, v in stats.items() if k != "tensors"}
    result["graph_freed_bytes"] = freed
    result["forward_s"] = round(forward_s, 3)
    if verbose:
        result["tensors"] = stats["tensors"]
    return result
