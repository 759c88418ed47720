"""Sizes and amounts: sequence length, batch sizes, tokens, concurrency, MFU, price, LoRA rank.

"batch 8" is left as ``_batch`` (per-GPU micro-batch for training, decoded batch for serving);
gradient accumulation as ``_grad_accum`` (it sets the global batch when the GPU count is known).
"""

from __future__ import annotations

import re

from service.parser.numbers import NUM, SCALE, context_length, decimal_count, percent, scaled, to_float
from service.parser.scan import Scan

_SEQ_WORDS = (r"seq(?:uence)?(?:[\s\-_]*len(?:gth)?)?|max[\s_\-]*(?:seq(?:uence)?[\s_\-]*)?len(?:gth)?"
              r"|context(?:[\s\-_]*(?:length|len|window|size))?|ctx(?:[\s\-_]*len)?|cutoff_len|block_size"
              r"|model_max_length|seq_length|sequence_len|max[\s_\-]*model[\s_\-]*len|max_position_embeddings")
_SEQ_AFTER = re.compile(rf"\b(?:{_SEQ_WORDS})\s*(?:of|=|:|at|is|to|~)?\s*[\"']?"
                        rf"(?P<neg>-)?(?P<num>{NUM})\s*(?P<unit>k|m)?\b")
_SEQ_BEFORE = re.compile(
    rf"(?<![\w.])(?P<neg>-)?(?P<num>{NUM})\s*(?P<unit>k|m)?[\s\-]*(?:tokens?|tok)?[\s\-]*"
    r"(?:context|ctx|seq(?:uence)?(?:[\s\-]*len(?:gth)?)?|window|prompts?|max[\s_\-]*model[\s_\-]*len"
    r"|max[\s_\-]*seq[\s_\-]*len(?:gth)?)\b")
_SEQ_AT = re.compile(r"\b(?:at|@|with)\s+(?P<num>\d+)\s*(?P<unit>k)\b(?!\s*(?:tokens|users|req))")
_SEQ_BARE = re.compile(r"(?<![\w.$])(?P<num>2|4|8|16|32|64|128|256|512|1024)(?P<unit>k)\b"
                       r"(?!\s*(?:tokens?|toks?|users?|req\w*|vocab|steps|samples|examples|rows|params|\$))")
_MICRO = re.compile(
    r"\b(?:micro[\s\-_]*batch(?:[\s\-_]*size)?|mbs|mbsz|micro_bs"
    r"|per[\s\-_]*(?:device|gpu)[\s\-_]*(?:train[\s\-_]*)?batch(?:[\s\-_]*size)?"
    r"|train_micro_batch_size_per_gpu|batch[\s\-_]*size[\s\-_]*per[\s\-_]*(?:gpu|device))"
    r"\s*[\"']?\s*(?:of|=|:)?\s*(?P<neg>-)?(?P<num>\d+)\b")
_GLOBAL = re.compile(
    rf"\b(?:global[\s\-_]*batch(?:[\s\-_]*size)?|gbs|train_batch_size|effective[\s\-_]*batch(?:[\s\-_]*size)?)"
    rf"\s*[\"']?\s*(?:of|=|:)?\s*(?P<num>{NUM})\s*(?P<unit>k)?\b(?!\s*tokens)")
_BATCH = re.compile(r"\b(?:batch(?:[\s\-_]*size)?|bs|bsz)\s*(?:of|=|:)?\s*(?P<neg>-)?(?P<num>\d+)\b"
                    r"(?!\s*(?:k\b|tokens))")
_BATCH_PER_GPU = re.compile(r"(?<![\w.$])(?P<num>\d+)\s*(?:samples?|sequences?|seqs)?\s*"
                            r"per\s*(?:gpu|device)\b")
_ACCUM = re.compile(r"\b(?:grad(?:ient)?[\s\-_]*acc(?:um(?:ulation)?)?(?:[\s\-_]*steps)?|gas|ga)"
                    r"\s*[\"']?\s*(?:of|=|:)?\s*(?P<num>\d+)\b")
_TOKENS = re.compile(
    rf"(?<![\w.])(?P<neg>-)?(?P<num>{NUM})\s*(?P<unit>{SCALE})?\s*(?:training\s+|train\s+)?(?:tokens|toks|tok)\b"
    r"(?![\s\-]*(?:context|ctx|window|seq|per|/))")
_TOKENS_KEY = re.compile(r"\b(?:tokens|train[\s\-_]*tokens|num_tokens)\s*[=:]\s*"
                         rf"(?P<num>{NUM})\s*(?P<unit>{SCALE})?\b")
_TOKENS_BARE = re.compile(rf"\b(?:on|over|for|with|through|of)\s+(?P<num>{NUM})\s*(?P<unit>t|trillion)\b"
                          r"(?!\s*param)")
_USERS = re.compile(
    rf"(?<![\w.])(?P<neg>-)?(?P<num>{NUM})\s*(?P<unit>k)?\s*(?:concurrent|simultaneous|parallel|active|daily)?\s*"
    r"(?:users|requests|reqs|sequences|seqs|streams|sessions|clients|conversations|chats|people|ppl)\b"
    rf"|(?<![\w.])(?P<neg2>-)?(?P<num2>{NUM})\s*(?P<unit2>k)?\s*(?:concurrent|simultaneous)\b")
_CONCURRENCY = re.compile(r"\b(?:concurrency|concurrent(?:\s+(?:users|requests|sequences))?|"
                          r"max[\s_\-]*num[\s_\-]*seqs)"
                          rf"\s*(?:of|=|:)?\s*(?P<num>{NUM})\b")
_MFU = re.compile(rf"\b(?:mfu|model\s+flops\s+util\w*)\s*(?:of|=|:|at|~)?\s*(?P<num>{NUM})\s*(?P<pct>%)?"
                  rf"|(?<![\w.])(?P<num2>{NUM})\s*(?P<pct2>%)\s*mfu\b")
_PER_GPU_HOUR = (r"\s*(?:/|per|an?|each)\s*"
                 r"(?:(?:gpus?|cards?|devices?|[a-z]{1,4}\d{2,4}[a-z]?s?)?[\s\-]*(?:/|per\s+)?[\s\-]*)?"
                 r"(?:hr|hours?|h)\b(?:\s*(?:/|per)\s*(?:gpu|card|device)\b)?")
_PRICE = re.compile(rf"\$\s*(?P<num>{NUM}){_PER_GPU_HOUR}"
                    rf"|(?<![\w.])(?P<num2>{NUM})\s*(?:usd|dollars?|bucks|\$){_PER_GPU_HOUR}")
_RANK = re.compile(r"\b(?:lora[\s\-_]?)?(?:rank|r|lora_r|lora_rank|lora-r)\s*(?:=|:|of)?\s*"
                   r"(?P<neg>-)?(?P<num>\d+)\b"
                   r"(?!\s*(?:b\b|gb|k\b|x|tokens|layers|heads))")
_TARGETS = re.compile(r"target_modules\s*[=:]\s*(?P<list>\[[^\]\n]{0,300}\]|[\"'][^\"'\n]{0,80}[\"'])")
_UTILIZATION = re.compile(r"(?:--)?gpu[\s_\-]*mem(?:ory)?[\s_\-]*util(?:i[sz]ation)?"
                          rf"\s*[\"']?\s*(?:=|:|of|at)?\s*(?P<num>{NUM})\s*(?P<pct>%)?")
_ATTN_ONLY = re.compile(r"\b(?:attention[\s\-]only|only\s+(?:on\s+)?(?:the\s+)?attention|"
                        r"q[\s,/&+]*(?:and\s+)?v(?:[\s_]*proj)?\s+only"
                        r"|only\s+q[\s,/&+]*(?:and\s+)?v|on\s+q_proj\s+and\s+v_proj)\b")
_ALL_LINEAR = re.compile(r"\ball[\s\-_]*linear(?:\s+layers)?\b|\ball\s+(?:the\s+)?projections\b")


def _sign(m: re.Match[str]) -> int:
    return -1 if m.groupdict().get("neg") else 1


def find_sizes(scan: Scan) -> None:
    _seq(scan)
    _price(scan)
    for m in scan.finditer(_MICRO):
        scan.add("micro_batch", _sign(m) * int(m.group("num")), m.start(), m.end())
    for m in scan.finditer(_GLOBAL):
        value = decimal_count(m.group("num"), m.group("unit"))
        if value is not None and scan.free(m.start(), m.end()):
            scan.add("global_batch", value, m.start(), m.end())
    for m in scan.finditer(_ACCUM):
        scan.add("_grad_accum", int(m.group("num")), m.start(), m.end())
    for m in scan.finditer(_BATCH):
        if scan.free(m.start(), m.end()):
            scan.add("_batch", _sign(m) * int(m.group("num")), m.start(), m.end())
    for m in scan.finditer(_BATCH_PER_GPU):
        if scan.free(m.start(), m.end()):
            scan.add("micro_batch", int(m.group("num")), m.start(), m.end())
    _tokens(scan)
    _serving(scan)
    _lora(scan)


def _seq(scan: Scan) -> None:
    for pattern in (_SEQ_AFTER, _SEQ_BEFORE, _SEQ_AT, _SEQ_BARE):
        for m in scan.finditer(pattern):
            if not scan.free(m.start(), m.end()):
                continue
            read = context_length(m.group("num"), m.group("unit"))
            if read is None:
                continue
            scan.add("seq_len", _sign(m) * read[0], m.start(), m.end(), read[1])
        if scan.values("seq_len"):
            return


def _tokens(scan: Scan) -> None:
    for pattern in (_TOKENS, _TOKENS_KEY, _TOKENS_BARE):
        for m in scan.finditer(pattern):
            value = scaled(m.group("num"), m.group("unit"))
            if value is None or not scan.free(m.start(), m.end()):
                continue
            written = scan.text[m.start("num"):m.end("unit")]
            note = f"{written} read as {value:.3g} training tokens" if pattern is _TOKENS_BARE else ""
            scan.add("tokens", _sign(m) * value, m.start(), m.end(), note)


def _serving(scan: Scan) -> None:
    for m in scan.finditer(_USERS):
        value = decimal_count(m.group("num") or m.group("num2"), m.group("unit") or m.group("unit2"))
        if value is not None and scan.free(m.start(), m.end()):
            sign = -1 if m.group("neg") or m.group("neg2") else 1
            scan.add("concurrent", sign * value, m.start(), m.end(),
                     f"{value} users = {value} concurrent sequences")
    for m in scan.finditer(_CONCURRENCY):
        value = decimal_count(m.group("num"), None)
        if value is not None and scan.free(m.start(), m.end()):
            scan.add("concurrent", value, m.start(), m.end())
    for m in scan.finditer(_UTILIZATION):
        share = percent(m.group("num"), bool(m.group("pct")))
        if share is not None:
            scan.add("memory_headroom", round(share, 6), m.start(), m.end())
    for m in scan.finditer(_MFU):
        num = m.group("num") or m.group("num2")
        share = percent(num, bool(m.group("pct") or m.group("pct2")))
        if share is not None:
            scan.add("mfu", round(share, 6), m.start(), m.end())


def _price(scan: Scan) -> None:
    for m in scan.finditer(_PRICE):
        value = to_float(m.group("num") or m.group("num2"))
        if value is not None:
            scan.add("price_per_gpu_hour", value, m.start(), m.end())


def _lora(scan: Scan) -> None:
    for m in scan.finditer(_TARGETS):
        names = m.group("list").lower()
        attention = all(p in ("q_proj", "k_proj", "v_proj", "o_proj", "query_key_value", "c_attn")
                        for p in re.findall(r"[a-z_]+", names))
        scan.add("lora_targets", "attention" if attention and "linear" not in names else "all_linear",
                 m.start(), m.end())
    for m in scan.finditer(_ATTN_ONLY):
        scan.add("lora_targets", "attention", m.start(), m.end())
    for m in scan.finditer(_ALL_LINEAR):
        scan.add("lora_targets", "all_linear", m.start(), m.end())
    for m in scan.finditer(_RANK):
        if scan.free(m.start(), m.end()):
            scan.add("lora_rank", _sign(m) * int(m.group("num")), m.start(), m.end())
