"""What the memory model does not capture exactly for an architecture, in words for the answer.

Each caveat names the part of the model (``topic``) and says what is and is not counted, and
what to do about it (``detail``); ``lookup.resolve_model`` attaches them to the resolved model and
``job/model_notes.py`` turns each into an assumption record, so that every answer about such a
model says so instead of silently guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.model.architecture import Architecture
from service.core.model.formats import SIXTEEN_BIT
from service.core.model.params import mtp_params, parameter_breakdown


@dataclass(frozen=True, slots=True)
class Caveat:
    """One part of a model whose memory is approximated or left out."""

    topic: str  # a few words: "vision tower"
    detail: str  # what is and is not counted, and what to do about it

    def __str__(self) -> str:
        return f"{self.topic}: {self.detail}"


def _billions(count: int) -> str:
    return f"{count / 1e9:.2f}B"


def architecture_caveats(arch: Architecture) -> tuple[Caveat, ...]:
    """The parts of ``arch`` whose memory is approximated or left out."""
    notes: list[Caveat] = []
    if arch.vision is not None:
        tower = parameter_breakdown(arch).vision
        per_image = ("(H/14) x (W/14) / 4 tokens per image" if arch.vision.kind == "qwen2_5_vl"
                     else "144 tokens per 336-px tile, up to 16 tiles plus a global one")
        notes.append(Caveat(
            "vision tower", f"its {_billions(tower)} weights are counted (and trained in a full "
            f"fine-tune), but images are not: the tower's activations and the image tokens' "
            f"activations and KV cache are not modelled; add {per_image} to seq_len"))
    if arch.linear_attention is not None:
        notes.append(Caveat(
            "hybrid layers", f"{arch.linear_attention_layers} of {arch.layers} layers are Gated "
            f"DeltaNet linear attention with a fixed recurrent and convolution state per sequence "
            f"(counted in the KV cache figure) instead of a KV cache; their training activations "
            f"are estimated as those of attention layers of the same width"))
    if arch.mtp_layers:
        notes.append(Caveat(
            "multi-token prediction", f"{arch.mtp_layers} MTP layer(s) ({_billions(mtp_params(arch))}"
            f" parameters) are not in the totals and not loaded: vLLM and SGLang load them only "
            f"for MTP speculative decoding, Hugging Face transformers skips them when fine-tuning"))
    if arch.sliding_window and arch.family == "llama4":
        notes.append(Caveat(
            "chunked attention", f"{arch.sliding_window}-token chunks are read as a window of one "
            f"chunk (at most that much KV per chunked layer, as vLLM keeps)"))
    return tuple(notes)


def checkpoint_note(weight_format: str) -> str:
    """How a preset's native checkpoint format enters serving and training answers."""
    if weight_format in SIXTEEN_BIT:
        return ""
    return (f"checkpoint weights are {weight_format}: serving keeps that format unless another "
            f"quantization is asked for; training and fine-tuning load the weights in the "
            f"training precision (16-bit, dequantized from {weight_format})")
