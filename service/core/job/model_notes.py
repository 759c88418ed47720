"""What an answer says about the model itself, as assumption records: the dtype a training job
loads a natively quantized checkpoint in, and each part of the architecture whose memory is not
modelled exactly (``model/caveats.py``)."""

from __future__ import annotations

from service.core.job.assumptions import Assumption, derived
from service.core.model.formats import QUANT_BITS
from service.core.model.linears import expert_weight_params
from service.core.model.lookup import ResolvedModel
from service.core.model.presets import lookup_preset

CAVEAT_FIELD = "model.caveat"  # + "." + the caveat's topic, one record per caveat
CAVEATS_SOURCE = "service/core/model/caveats.py"
# transformers dequantizes a native checkpoint on load when asked to, as fine-tuning recipes do
DEQUANTIZE_SOURCE: dict[str, str] = {
    "mxfp4": "transformers Mxfp4Config(dequantize=True)",
    "fp8-block": "transformers FineGrainedFP8Config(dequantize=True)",
    "fp8-ffn": "transformers FbgemmFp8Config (the checkpoint's fbgemm_fp8 quantization_config)",
}


def loaded_dtype(precision: str, method: str) -> str:
    """The dtype a native checkpoint is loaded in to train: the precision's 16-bit dtype (a LoRA
    base stays 16-bit whatever the precision, as ``memory/model_state.weights`` counts it), fp32
    for full fp32 training, NF4 for QLoRA. The framework may then keep fp32 master weights or
    fp32 parameters: the ``precision`` and ``framework`` records say so."""
    if method == "qlora":
        return "nf4"
    if precision == "fp32" and method == "full":
        return "fp32"
    return "fp16" if precision.startswith("fp16") else "bf16"


def model_notes(model: ResolvedModel, task: str, method: str, precision: str,
                seq_len: int = 0) -> list[Assumption]:
    """A derived ``weights_dtype`` record when a training or fine-tuning job starts from a
    natively quantized checkpoint (``model.checkpoint`` set), a ``context_limit`` record past
    the context the model was trained for, and one record per caveat."""
    notes: list[Assumption] = []
    preset = lookup_preset(model.model_id)
    limit = preset.max_context if preset is not None else None
    if limit is not None and seq_len > limit:
        engine = ("; vLLM refuses a longer --max-model-len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
                  if task == "infer" else "")
        notes.append(derived(
            "context_limit", limit, f"{model.model_id} was trained for {limit:,} tokens: a "
            "longer context needs RoPE scaling (e.g. YaRN) in its config and quality is not "
            f"assured{engine}", "the model's config.json max_position_embeddings"))
    fmt = model.weight_format
    if model.checkpoint and task != "infer":
        dtype = loaded_dtype(precision, method)
        why = f"the {fmt} checkpoint is dequantized on load to train"
        if dtype == "nf4":
            why += ", then bitsandbytes quantizes the linear layers to NF4"
        notes.append(derived("weights_dtype", dtype, why,
                             DEQUANTIZE_SOURCE.get(fmt, "the checkpoint's quantization_config")))
    if method == "qlora":
        notes.append(derived(
            "qlora.other_params", "fp32",
            "peft's prepare_model_for_kbit_training casts every parameter bitsandbytes did not "
            "quantize (embeddings, LM head, norms) to fp32: 4 bytes each on every GPU (FSDP-QLoRA "
            "keeps them in the 16-bit storage dtype, sharded); the weights formula shows the count",
            "peft utils/other.py prepare_model_for_kbit_training"))
    moe = model.arch.moe
    if method == "qlora" and moe is not None and moe.fused_experts:
        experts = expert_weight_params(model.arch) * model.param_scale
        notes.append(derived(
            "qlora.experts", f"16-bit, cast to fp32: {experts * 4 / 1e9:,.0f} GB for the whole "
            f"model (in NF4, as with transformers 4.x: {experts * QUANT_BITS['nf4'] / 8 / 1e9:,.0f} "
            "GB)",
            "bitsandbytes 4-bit replaces nn.Linear modules; transformers 5 stores routed experts "
            "as fused 3-D parameters, so they are not quantized and peft's "
            "prepare_model_for_kbit_training casts them to fp32 (transformers 4.x, or a stack "
            "that quantizes fused experts, holds them in NF4)", "bitsandbytes issue #1849"))
    if method in ("lora", "qlora") and moe is not None and moe.fused_experts:
        notes.append(derived(
            "lora.experts", "not adapted",
            "peft matches nn.Linear modules; transformers 5 stores routed experts as fused 3-D "
            "parameters, so LoRA adapts attention and the dense/shared MLPs only (peft's "
            "target_parameters adapts the experts too, with more adapter and optimizer state)",
            "peft LoraConfig target_modules / target_parameters"))
    for caveat in model.caveats:
        notes.append(derived(f"{CAVEAT_FIELD}.{caveat.topic.replace(' ', '_')}", caveat.topic,
                             caveat.detail, CAVEATS_SOURCE))
    return notes
