"""What the message asks for, from its words: train, finetune, infer, time/cost, compare, help.

Fine-tuning words (LoRA, SFT) beat serving words, which beat training words ("serve" and "ZeRO"
rarely meet), which beat serving settings ("users", "kv cache", ``max_model_len``). Numbers decide
the rest in ``assemble``: training tokens make a time/cost question, two values of one knob with
"vs"/"or" make a comparison.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# with the misspellings people type in a hurry ("finetnue", "inferance", "servng")
_FINETUNE = re.compile(
    r"\b(?:fine[\s\-]?tun\w*|finetun\w*|fine[\s\-]?tnu\w*|finet[nu]{2}e\w*|ft|sft|q?lora|peft|"
    r"adapters?|(?:dpo|rlhf|ppo|grpo|orpo|kto|simpo|ipo|cpo|rloo|sft|reward)(?:[_\-]?(?:trainer|config))?|"
    r"reward\s+model(?:l?ing)?|"
    r"preference\s+(?:optimi[sz]ation|tuning)|alignment\s+tuning|tune\s+run|(?:full|q?lora)_finetune_\w+|"
    r"instruction[\s\-]tun\w*|post[\s\-]?train\w*|lora_r|lora_alpha|loraconfig|load_in_4bit|dora|"
    r"use_dora|unsloth)\b"
    # a script named for it: "train_sft.py", "run_dpo.py", "finetune.py"
    r"|(?<![\w\-])\w*?[_\-]?(?:sft|dpo|orpo|kto|grpo|finetune|fine_tune|lora)[_\-]?\w*?\.py\b")
_SERVE = re.compile(
    r"\b(?:serv(?:e|es|ed|ing|er)|servng|sevr(?:e|ing)|inf[ae]r[ae]nce|infr?ence|infere?[cn]e|infer|"
    r"deploy\w*|host(?:ing)?|vllm|tgi|sglang|trt[\s\-]?llm|"
    r"tensorrt|llama\.cpp|ollama|generat(?:e|ion)|decod(?:e|ing)|chatbot|endpoint|text-generation-launcher|"
    r"offline\s+(?:batch\w*|inference)|batch(?:ed)?\s+inference|"
    # an embedding model's encoding is a forward pass, not training ("e5 embeddings, batch 64")
    r"(?:e5|bge|gte|nomic|jina|stella|mxbai)[\w.\-]*\s+embeddings?|embedding\s+(?:service|server|"
    r"inference|endpoint|api)|rerank(?:er|ing)?)\b"
    r"|\bllm\(\s*model\s*=")
# Serving settings: they mean serving unless the message says it trains ("pretrain ... max_model_len").
_SERVE_SETTING = re.compile(
    r"\b(?:users?|people|requests?|qps|kv[\s\-_]?cache|kv(?![\s\-_]*heads?)|concur+en\w*|at\s+once|"
    r"at\s+a\s+time|awq|gptq|gguf|max_model_len|max_num_seqs|max\s+num\s+seqs|rps|"
    r"gpu[_\-]memory[_\-]utilization|"
    r"max(?:imum)?\s+batch|throughput|tokens?/s|tok/s|how\s+many\s+(?:sequences|requests|users)"
    r"|req(?:uest)?s?\s*/\s*(?:s|sec|min)|replicas|rag|answers|responses"
    # a prompt's length: "how long can the prompt be", "prompt length", "6k-token prompts"
    r"|prompts?\s+(?:length|len|size)|how\s+long\s+(?:can|could|may)\s+(?:the|a|my|our)\s+prompts?)\b")
# (a bare "sft" is the verb unless a determiner makes it a model's adjective: "our sft llama")
_FINE_TUNED_MODEL = re.compile(r"\b(?:(?:our|my|the|a|an|your|their|this|that)\s+"
                               r"(?:own\s+|custom\s+|new\s+)?(?:q?lora[\s\-]?)?sft\b|"
                               r"(?:(?:our|my|the|a|an|your|their|this|that)\s+"
                               r"(?:own\s+|custom\s+|new\s+)?)?(?:q?lora[\s\-]?)?(?:fine[\s\-]?tuned|finetuned|"
                               r"sft(?:'d|ed)))\b"
                               # not the verb: "sft a chatbot from mistral"
                               r"(?=\s+(?:version\s+of\s+)?[a-z])(?!\s+(?:a|an|the|our|my|it|this|that)\b)")
_RUN = re.compile(r"\b(?:run|running|load|use it|chat with)\b")
# "at 32k context" with no other task word: serving's word for the length (training says seq)
_CONTEXT = re.compile(r"\b(?:context|ctx)\b")
# what the message asks about memory: "2 weeks ... how much headroom?" is not a time question
_MEMORY_ASK = re.compile(r"\b(?:headroom|fits?|vram|(?<!illegal\s)memory|mem|oom|room)\b")
_TRAIN = re.compile(r"\b(?:train(?:ing|ed|s)?|pre[\s\-]?train\w*|from\s+scratch)\b")
_TRAIN_KNOB = re.compile(
    r"\b(?:zero[\s\-_]*[0-3]|z[0-3]|fsdp\w*|ddp|deepspeed|megatron|optimi[sz]er|adamw?\w*|backprop\w*|"
    r"epochs?|micro[\s\-_]?batch\w*|global[\s\-_]batch|grad(?:ient)?[\s\-_]*(?:ckpt|checkpointing|accum\w*)|"
    r"per_device_train_batch_size|--num-layers|zero_optimization|recompute|tokens)\b")
_TIME = re.compile(  # "how long can the context be" asks for a length, not a time
    r"\b(?:how\s+long(?!\s+(?:can|could|will|would)\s+(?:the\s+|my\s+|a\s+)?(?:context|ctx|seq\w*|prompts?"
    r"|inputs?)\b)|days?|hours?|weeks?|months?|time\s+to|wall[\s\-]?clock|gpu[\s\-]?hours?|"
    r"costs?|price|pricing|budget|dollars?|usd|eta|how\s+much\s+(?:would|will|does)\s+it\s+cost)\b|\$")
# the message asks how long or how much a run takes ("$10k budget" or "for 2 weeks" alone does not)
_TIME_ASK = re.compile(
    r"\b(?:how\s+long(?!\s+(?:can|could|will|would)\s+(?:the\s+|my\s+|a\s+)?(?:context|ctx|seq\w*|prompts?"
    r"|inputs?)\b)|how\s+many\s+(?:days|hours|weeks|months|gpu[\s\-]?hours)|eta|time\s+to|wall[\s\-]?clock"
    r"|gpu[\s\-]?hours?|how\s+much\s+(?:would|will|does|did)\s+(?:it|that|this)\s+cost"
    r"|(?:cost|price|days?)\s+(?:to|of|for)\s+(?:pre[\s\-]?train|train|fine[\s\-]?tun\w*|finetun\w*|run))\b")
_COMPARE = re.compile(r"\bvs\.?(?!\w)|\bversus\b|\bcompar\w*|\bor\b|\bwhich\s+(?:is|one|would|should)\b|"
                      r"\bbetter\b|\bdifference\s+between\b|\bside\s+by\s+side\b"
                      r"|\bbetween\s+\S+\s+and\s+\S+")
_HELP_PHRASE = (
    r"(?:help|usage|commands?|examples?|hi|hello|hey|yo|sup|\?+|what\s+can\s+you\s+do|"
    r"what\s+do\s+you\s+do|how\s+do\s+i\s+(?:use|ask)(?:\s+(?:this|you|it|fitcheck))?|"
    r"how\s+does\s+this\s+work|who\s+are\s+you|what\s+is\s+this|what\s+(?:can|should)\s+i\s+ask|"
    r"what\s+(?:kinds?|sorts?|types?)\s+of\s+questions(?:\s+(?:do|can)\s+(?:you|i)\s+(?:take|answer|ask))?|"
    r"(?:which|what)\s+(?:models?|gpus?)(?:\s+(?:and|&|or)\s+(?:models?|gpus?))?\s+(?:do\s+you|can\s+you|"
    r"are)\s+(?:know|support|cover|have|handle|supported|covered)(?:\s+about)?)")
# the whole message made of help phrases, after an optional greeting or the bot's name
_HELP = re.compile(
    rf"^\W*(?:(?:pls|please|hey|hi)\s+)?(?:@?(?:fitcheck|bot)\W*)?{_HELP_PHRASE}"
    rf"(?:\s+(?:please|pls|fitcheck|bot|me))*(?:\W+{_HELP_PHRASE}(?:\s+(?:please|pls|fitcheck|bot|me))*)*\W*$")
# a question about the bot itself inside a longer message ("what can you do? like what should
# I type"): help when nothing else in it was understood (``assemble``)
_HELP_QUESTION = re.compile(
    r"\b(?:what\s+(?:can|do)\s+you\s+do|what\s+(?:should|do|can)\s+i\s+(?:type|say|write|ask)"
    r"|how\s+(?:do|should|can)\s+i\s+(?:ask|use|talk\s+to|phrase|word|format)\b(?:\s+(?:you|this|it|"
    r"the\s+bot|fitcheck|questions?))?|is\s+there\s+a\s+(?:syntax|format|template)|plain\s+english"
    r"|what\s+(?:kinds?|sorts?|types?)\s+of\s+questions|can\s+i\s+(?:just\s+)?paste"
    r"|do\s+i\s+(?:have|need)\s+to\s+repeat|does\s+it\s+remember|how\s+do\s+follow[\s\-]?ups\s+work"
    r"|what\s+(?:do|would)\s+you\s+need\s+(?:from\s+me|to\s+know)|what\s+(?:info|information|details)"
    r"\s+do\s+you\s+need|first\s+time\s+using\s+(?:this|you|the\s+bot|fitcheck)"
    r"|(?:which|what)\s+(?:models?|gpus?)(?:\s+(?:and|&|or)\s+(?:models?|gpus?))?\s+(?:do|can|does)\s+"
    r"(?:you|it|fitcheck|the\s+bot)\s+(?:know|support|cover|handle)"
    r"|what\s+(?:can|does)\s+(?:fitcheck|the\s+bot|this\s+bot)\s+(?:answer|do|know)"
    r"|what\s+(?:can|do)\s+you\s+(?:answer|know|tell\s+me)\s+about"
    r"|(?:what|which)\s+(?:options|fields|settings|parameters|params|flags|knobs)\s+(?:can|do|should)\s+i"
    r"\s+(?:pass|give|set|use|send)|(?:what|which)\s+(?:options|fields|settings|parameters|params|flags|knobs|words)"
    r"\s+(?:do|can|does)\s+(?:you|it|fitcheck|the\s+bot)\s+(?:understand|read|take|accept|know|support)"
    r"|how\s+(?:do|can)\s+i\s+(?:get|share|find|copy)\s+(?:a\s+|the\s+)?(?:perma)?link)\b")
# a model of one's own ("how do I give you a custom model?", "a way to register our internal
# 'atlas-9b' model"): help even when a name or size in it was read
_MODEL_HELP = re.compile(
    r"\bhow\s+(?:do|can|should)\s+(?:i|we)\s+(?:give|tell|teach|show|pass|send|register|add)\s+"
    r"(?:you\s+|it\s+)?(?:a\s+|my\s+|our\s+|the\s+)?(?:own\s+)?"
    r"(?:custom|new|private|internal|fine[\s\-]?tuned)\s+(?:model|arch(?:itecture)?|config)\b"
    r"|\b(?:a\s+way|how)\s+(?:to|do\s+(?:i|we)|can\s+(?:i|we))\s+(?:register|add|upload)\s+"
    r"(?:a\s+|our\s+|my\s+|the\s+)?(?:own\s+|internal\s+|custom\s+|private\s+|new\s+)?"
    r"(?:['\"]?[\w.\-]+['\"]?\s+)?models?\b")
_DOMAIN = re.compile(
    r"\b(?:gpus?|vram|memory|mem|fit|fits|oom|model|llm|params?|parameters|weights|batch|seq|context|"
    r"tokens?|node|nodes|cluster|cards?|hbm|train\w*|tun\w*|serv\w*|infer\w*|finetun\w*|checkpoint\w*|"
    r"precision|quantiz\w*|concur+en\w*|users?|throughput|latency)\b")


@dataclass(frozen=True, slots=True)
class Cues:
    finetune: bool
    serve: bool
    serve_setting: bool
    run: bool
    train: bool
    train_knob: bool
    time: bool
    compare: bool
    help: bool
    model_help: bool  # how to give fitcheck a model of one's own: help whatever else was read
    domain: bool
    context: bool = False
    memory_ask: bool = False
    time_ask: bool = False

    def task(self, previous: str | None) -> str | None:
        """The task the words name; knob words ("zero-3") keep a thread's previous task."""
        if self.finetune:
            return "finetune"
        if self.serve:
            return "infer"
        if self.train:
            return "train"
        if self.serve_setting:
            return "infer"
        if previous:
            return previous
        if self.train_knob:
            return "train"
        if self.run or self.context:
            return "infer"
        return None


# LoRA adapters being served, not trained: vLLM's --enable-lora / --max-loras, multi-LoRA
SERVED_LORA = re.compile(r"--?enable[\-_]lora\b|\benable_lora\b|(?:--?|\b)max[\-_]loras?\b|\bmax_loras\b"
                         r"|--?max[\-_]lora[\-_]rank\b|\bmulti[\s\-]?loras?\b|\bpunica\b|\blorax\b"
                         r"|\bs-lora\b|\blora\s+(?:adapters?\s+)?(?:hot[\s\-]?swap\w*|serving)\b"
                         # in the same sentence ("llama-3.1-8b" has a dot but ends none)
                         r"|\bserv(?:e|es|ed|ing)\b(?:[^.?!\n]|\.(?=\S)){0,60}\b(?:lora\s+adapters|loras)\b"
                         r"|\blora\s+adapters?\s+(?:loaded|at\s+once|served)\b")


# "just for using it, not training": a task word denied names the other side
_DENIED_TASK = re.compile(
    r"\b(?:not|no|without|never|isn't|is\s+not|n't)\s+(?:for\s+|doing\s+|any\s+)?"
    r"(?:train(?:ing|ed)?|pre[\s\-]?train\w*|fine[\s\-]?tun\w*|finetun\w*)\b")
# an embedding or reranking model answers requests: a forward pass per batch, no training
_EMBEDDING_SERVING = re.compile(
    r"\b(?:embeddings?\s+(?:model|server|service|endpoint|api|inference|on|for|with|at)"
    r"|(?:compute|computing|generate|generating|produce|producing)\s+embeddings|embedder|reranker)\b")


def cues(low: str) -> Cues:
    """Intent words in the (lowercased) message."""
    denied = _DENIED_TASK.search(low) is not None
    low = _DENIED_TASK.sub(" ", low)
    served_lora = bool(SERVED_LORA.search(low))
    serve = bool(_SERVE.search(low)) or served_lora
    # "our fine-tuned llama behind the chatbot": the model was fine-tuned; the job is serving it
    serve_setting = bool(_SERVE_SETTING.search(low)) or bool(_EMBEDDING_SERVING.search(low))
    tuned = _FINETUNE.search(_FINE_TUNED_MODEL.sub(" ", low) if serve or serve_setting else low)
    return Cues(
        finetune=bool(tuned) and not served_lora, serve=serve,
        serve_setting=serve_setting,
        run=bool(_RUN.search(low)) or denied, train=bool(_TRAIN.search(low)),
        train_knob=bool(_TRAIN_KNOB.search(low)), time=bool(_TIME.search(low)),
        compare=bool(_COMPARE.search(low)),
        help=bool(_HELP.match(low.strip()) or _HELP_QUESTION.search(low) or _MODEL_HELP.search(low)),
        model_help=bool(_MODEL_HELP.search(low)),
        domain=bool(_DOMAIN.search(low)), context=bool(_CONTEXT.search(low)),
        memory_ask=bool(_MEMORY_ASK.search(low)), time_ask=bool(_TIME_ASK.search(low)),
    )
