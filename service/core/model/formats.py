"""Storage formats: bits per weight of each weight format, bytes per KV-cache element.

Effective bits include the quantization scales and zero points:
- GPTQ/AWQ 4-bit, group 128: 4 + (16-bit scale + 4-bit zero) / 128 = 4.156 (AutoGPTQ, AutoAWQ);
- NF4 with double quantization: 4 + 8/64 + 32/(64*256) = 4.127 (QLoRA paper, sec. 3);
- GGUF: llama.cpp block formats (q8_0: 34 B per 32 weights = 8.5; q4_0: 18 B/32 = 4.5; k-quants
  per ggml-quants.h super-blocks of 256) and the K_M mixes' file sizes for Llama-2-7B;
- fp8 with 128x128 block scales (DeepSeek-V3's checkpoint): 8 + 32/16384 = 8.002;
- fp8 row-wise on the feed-forward linears only (``fp8-ffn``, Meta's Llama 3.1 405B FP8:
  fbgemm_fp8, one fp32 scale per output row of 16,384 or 53,248 inputs): 8.002;
- MXFP4 (OCP microscaling): 4-bit e2m1 values in blocks of 32 sharing an 8-bit scale: 4.25.
"""

from __future__ import annotations

from service.core.errors import InvalidInput

QUANT_BITS: dict[str, float] = {
    "none": 16.0, "bf16": 16.0, "fp16": 16.0, "fp32": 32.0,
    "fp8": 8.0, "fp8-block": 8.002, "fp8-ffn": 8.002, "int8": 8.0,
    "int4": 4.156, "gptq": 4.156, "awq": 4.156, "gptq-8bit": 8.156,
    "nf4": 4.127, "mxfp4": 4.25,
    "gguf-q8_0": 8.5, "gguf-q6_k": 6.5625, "gguf-q5_k_m": 5.69, "gguf-q5_0": 5.5,
    "gguf-q4_k_m": 4.85, "gguf-q4_0": 4.5, "gguf-q3_k_m": 3.91, "gguf-q2_k": 3.35,
}
SIXTEEN_BIT = ("none", "bf16", "fp16")
KV_DTYPE_BYTES: dict[str, float] = {"auto": 2, "bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1,
                                    "int8": 1, "int4": 0.5}


def check_weight_format(name: str) -> str:
    if name not in QUANT_BITS:
        raise InvalidInput("quantization", f"unknown quantization {name!r}", ", ".join(QUANT_BITS))
    return name


def checkpoint_format(stated: str, native: str) -> str:
    """The weight format a stated quantization means for a checkpoint already quantized: its
    own layout when the stated name is its family ("fp8" of Meta's 405B FP8 is its fp8-ffn,
    of DeepSeek-V3 its fp8-block), else the stated format."""
    if native not in SIXTEEN_BIT and stated != native and stated == native.split("-")[0]:
        return native
    return stated


def check_kv_dtype(name: str) -> str:
    if name not in KV_DTYPE_BYTES:
        raise InvalidInput(
            "kv_cache_dtype", f"unknown KV cache dtype {name!r}", ", ".join(KV_DTYPE_BYTES)
        )
    return name
