"""Constants shared by the bot's modules: Slack's Block Kit limits, action ids, the metadata
event type, example questions and the "bigger GPU" ladder (GPU ids as the service names them)."""

from __future__ import annotations

from typing import Final

# Block Kit limits (docs.slack.dev/reference/block-kit): a message holds at most 50 blocks (a
# Home tab 100); a section's text 3000 characters, a field 2000 (10 fields); a context block 10
# elements; an actions block 25 elements; a button's label 75 characters, value 2000, url 3000;
# action_id and block_id 255; header text 150. The message's top-level `text` is cut by Slack at
# 40,000 characters; 4,000 is the advice, and ours stays under MAX_FALLBACK_TEXT.
MAX_MESSAGE_BLOCKS: Final = 50
MAX_HOME_BLOCKS: Final = 100
MAX_SECTION_TEXT: Final = 3000
MAX_CONTEXT_ELEMENTS: Final = 10
MAX_CONTEXT_TEXT: Final = 3000
MAX_ACTION_ELEMENTS: Final = 25
MAX_BUTTON_TEXT: Final = 75
MAX_BUTTON_VALUE: Final = 2000
MAX_URL: Final = 3000
MAX_ID: Final = 255
MAX_HEADER_TEXT: Final = 150
MAX_FALLBACK_TEXT: Final = 3000
MAX_QUESTION: Final = 4000  # the service's limit on `text`

COMMAND: Final = "/fitcheck"
METADATA_EVENT: Final = "fitcheck_answer"
ACTION_PREFIX: Final = "fitcheck_next_"
ACTION_REPORT: Final = "fitcheck_report"
ACTION_LAUNCH: Final = "fitcheck_launch"
ACTION_IDS: Final = ("recompute", "zero3", "bigger_gpu", "double_seq", "pick_gpu")

EXAMPLES: Final = (
    "7B, seq 4096, ZeRO-3, A100 40GB?",
    "can i qlora llama-3.1-8b on one 4090?",
    "serving llama-3.1-70b at 16k context for 50 users, how many h100s?",
    "days to pretrain a 30B on 3T tokens with 1024 H200s",
    "zero-2 or zero-3 for llama 3 70b on 16 h100s?",
)
HOW_TO_ASK: Final = "Ask like `llama-3-8b, seq 4096, ZeRO-3, 8x A100 40GB` (or say `help`)."

# The next bigger-memory GPU people usually move to, and its label on the button.
BIGGER_GPU: Final[dict[str, str]] = {
    "t4-16gb": "l4-24gb", "v100-16gb": "v100-32gb", "v100-32gb": "a100-40gb",
    "a10-24gb": "l40s-48gb", "a10g-24gb": "l40s-48gb", "l4-24gb": "l40s-48gb",
    "rtx3090-24gb": "rtx5090-32gb", "rtx4090-24gb": "rtx5090-32gb", "rtx5090-32gb": "l40s-48gb",
    "l40s-48gb": "a100-80gb", "a40-48gb": "a100-80gb", "rtxa6000-48gb": "a100-80gb",
    "rtx6000ada-48gb": "a100-80gb", "a100-40gb": "a100-80gb", "a100-80gb": "h200-141gb",
    "a100-pcie-80gb": "h200-141gb", "h100-80gb": "h200-141gb", "h100-pcie-80gb": "h200-141gb",
    "h100-nvl-94gb": "h200-141gb", "gh200-96gb": "h200-141gb", "h200-141gb": "b200-180gb",
    "mi250x-64gb": "mi300x-192gb", "mi300x-192gb": "mi325x-256gb",
}
GPU_LABELS: Final[dict[str, str]] = {
    "l4-24gb": "L4 24GB", "v100-32gb": "V100 32GB", "a100-40gb": "A100 40GB",
    "l40s-48gb": "L40S 48GB", "rtx5090-32gb": "RTX 5090 32GB", "a100-80gb": "A100 80GB",
    "h100-80gb": "H100 80GB", "h200-141gb": "H200 141GB", "b200-180gb": "B200 180GB",
    "mi300x-192gb": "MI300X 192GB", "mi325x-256gb": "MI325X 256GB",
}
DEFAULT_GPU: Final = "h100-80gb"  # offered when the question named no GPU
DEFAULT_SEQ_LEN: Final = 4096  # the service's default sequence length
