"""The training objective, and what it adds to a step.

- ``sft`` (default): the language-modelling loss on each sequence (pre-training, SFT);
- ``dpo``, ``ipo`` (TRL ``DPOTrainer``): chosen and rejected completions run as one batch of
  twice the sequences (``concatenated_forward``), scored against a frozen reference model;
- ``kto`` (``KTOTrainer``): a reference model, unpaired completions;
- ``orpo``, ``simpo``, ``cpo``: paired completions, no reference model.
The reference is a copy of the policy (``create_reference_model``): DeepSpeed shards it only
under ZeRO-3 (``prepare_deepspeed`` sets stage 0 otherwise), FSDP shards it; with LoRA or QLoRA
the base with its adapters switched off is the reference, and nothing is copied.
"""

from __future__ import annotations

from service.core.errors import InvalidInput
from service.core.job.assumptions import derived, stated
from service.core.job.choices import OBJECTIVES, PAIRED, WITH_REFERENCE, choice
from service.core.job.resolve_notes import Notes

SOURCE = "TRL DPOTrainer / KTOTrainer / ORPOTrainer / CPOTrainer (concatenated_forward, " \
    "create_reference_model, prepare_deepspeed)"


def resolve_objective(given: str | None, task: str, adapters: bool, precomputed: bool,
                      notes: Notes) -> str:
    """The objective, with what it adds said as assumptions; serving has none. ``precomputed``:
    TRL's ``precompute_ref_log_probs=True``, the reference log-probs computed in one pass over
    the dataset before training, so no reference model is held while training."""
    objective = choice("objective", given or "sft", OBJECTIVES)
    if task == "infer":
        if objective != "sft":
            raise InvalidInput("objective", f"{objective} is a training objective, not serving",
                               "sft, or a training or fine-tuning task")
        return objective
    notes.value("objective", objective, "the language-modelling loss", SOURCE, minor=True)
    if objective in PAIRED:
        notes.add(derived("objective.sequences", 2, "chosen and rejected completions run as one "
                          "batch: twice the sequences of a micro-batch", SOURCE))
    if objective in WITH_REFERENCE and precomputed:
        notes.add(stated("precompute_ref_log_probs", True))
        notes.add(derived("objective.reference", "precomputed", "reference log-probs computed "
                          "once before training (the reference model is loaded for that pass, "
                          "not during training steps)", SOURCE))
    elif objective in WITH_REFERENCE:
        reference = "the base, adapters off" if adapters else "a frozen copy of the model"
        notes.add(derived("objective.reference", reference, "reference log-probs each step "
                          "(sharded only with ZeRO-3 or FSDP; precompute_ref_log_probs "
                          "would drop it)", SOURCE))
    return objective
