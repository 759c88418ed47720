"""Model mentions: preset names as people type them, with typos, and bare sizes ("7B", "a 30B").

A mention starts at a word that begins with a model family ("llama", "qwen2.5", "meta-llama/"),
or a one-edit typo of one ("lama", "qwne"). The longest run of up to five words that the
core's ``lookup_preset`` knows wins. "qwen 14b" (family and size, no version) is the newest
preset of that family and size, said back as an assumption. A family with a size or version that
matches nothing becomes an unknown name with the closest ids.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from service.core.model.presets import ModelPreset, all_presets, lookup_preset, suggestions
from service.parser.deepseek_names import read_bare_r1, read_distills
from service.parser.model_sizes import find_bare_sizes
from service.parser.normalize import safe_echo
from service.parser.scan import MAX_MATCHES, Scan
from service.parser.types import Unknown

_WORD = re.compile(r"[a-z0-9](?:[a-z0-9._/\-]*[a-z0-9])?")
_ALPHA = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_ID_SHAPE = re.compile(r"^([a-z]+)-?(v?\d+(?:\.\d+)?)?-(\d+(?:\.\d+)?[bm])\b")
_ID_VERSION_SUFFIX = re.compile(r"-v(\d+(?:\.\d+)?)$")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s?([bm])$")
_FAMILY_SIZE = re.compile(
    r"^(?P<fam>[a-z]+)[\s\-_]*(?P<ver>v?\d+(?:\.\d+)?(?![\d.]*\s?[bm]\b))?"
    r"(?:[\s\-_]*(?:instruct|chat|base|it|hf))?[\s\-_]*(?P<size>\d+(?:\.\d+)?)\s?(?P<unit>[bm])\b"
)
_PACKAGING = frozenset({"instruct", "chat", "it", "base", "hf", "awq", "gptq", "gguf", "fp8", "fp16",
                        "bf16", "int4", "int8", "4bit", "8bit", "sft", "dpo", "bnb", "unsloth"})
_FORMAT = re.compile(r"[\-_.](awq|gptq|fp8|int4|int8|4bit|8bit)\b")
_NO_TYPO = frozenset({"meta", "gpt", "yi", "phi", "it", "ai", "python", "lambda", "llava", "drama",
                      "deepspeed", "megatron", "pytorch", "gemm", "mistake", "falcons"})
_MAX_WINDOW = 5
_LIKE = re.compile(r"[\s\-]*(?:style|like|esque|ish|type)\b")
_LIKE_END = re.compile(r"[\-_](?:style|like|esque|ish|type)$")
# Tools named after model families: "llama.cpp", "ollama", "llama-factory" are not models.
_LLAMACPP = re.compile(r"llama[\s.\-_]?cpp|llama-server|ollama")
_TOOLS = re.compile(r"\b(?:llama[\s.\-_]?cpp|llama-server|llama[\s\-_]?(?:factory|index|stack)|ollama"
                    r"|exllama\w*|mistral[.\-_]?rs|qwen[\-_]agent|llamafile)\b")


@cache
def _families() -> frozenset[str]:
    """First letters-only word of every preset name that is not an ``org/repo`` id."""
    fams: set[str] = set()
    for preset in all_presets():
        for name in preset.names:
            head = _ALPHA.match(name.lower())
            if "/" not in name and head and len(head.group(0)) >= 2:
                fams.add(head.group(0))
    return frozenset(fams)


@cache
def _by_family_size() -> dict[tuple[str, str], list[tuple[tuple[float, float, float], ModelPreset]]]:
    table: dict[tuple[str, str], list[tuple[tuple[float, float, float], ModelPreset]]] = {}
    for preset in all_presets():
        shape = _ID_SHAPE.match(preset.id)
        if shape is None:
            continue
        fam, ver, size = shape.groups()
        suffix = _ID_VERSION_SUFFIX.search(preset.id)  # "mistral-7b-v0.3"
        version = _version(ver or (suffix.group(1) if suffix else None))
        table.setdefault((fam, size), []).append((version, preset))
    for entries in table.values():
        entries.sort(key=lambda e: e[0], reverse=True)
    return table


def _version(text: str | None) -> tuple[float, float, float]:
    """'3.1' -> (3, 1, 0); 'v0.3' -> (0, 3, 0); None -> (0, 0, 0)."""
    parts = [float(p) for p in (text or "0").lstrip("v").split(".")[:3] if p.isdigit()]
    parts += [0.0] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


def _distance(a: str, b: str) -> int:
    """Optimal-string-alignment edit distance (a swap of neighbours counts once)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


@lru_cache(maxsize=4096)  # bounded: the words of a long paste must not grow it without end
def family_of(word: str, typo: bool = True) -> str | None:
    """The family a word starts with; with ``typo``, allowing one typo (two in long names) in a
    family that starts with the same letter. None if none."""
    head = _ALPHA.match(word.rsplit("/", 1)[-1])
    if head is None:
        return None
    alpha = head.group(0)
    fams = _families()
    if alpha in fams or word.split("/", 1)[0] in fams:
        return alpha if alpha in fams else word.split("/", 1)[0]
    if not typo or not 4 <= len(alpha) <= 12 or alpha in _NO_TYPO:
        return None
    best = [f for f in _typo_families().get(alpha[0], ()) if abs(len(f) - len(alpha)) <= 2
            and _distance(alpha, f) <= (2 if len(f) >= 5 else 1)]
    return min(best, key=lambda f: (_distance(alpha, f), f)) if best else None


@cache
def _typo_families() -> dict[str, tuple[str, ...]]:
    """Families a typo may stand for, by first letter."""
    table: dict[str, list[str]] = {}
    for fam in sorted(_families()):
        if fam not in _NO_TYPO and len(fam) >= 4:
            table.setdefault(fam[0], []).append(fam)
    return {k: tuple(v) for k, v in table.items()}


def _typo_word(word: str) -> str:
    head = _ALPHA.match(word.rsplit("/", 1)[-1])
    return safe_echo(head.group(0) if head else word)


def _fixed(word: str, family: str) -> str:
    """The word with its misspelt family replaced ("lama3-8b" -> "llama3-8b")."""
    base = word.rsplit("/", 1)[-1]
    head = _ALPHA.match(base)
    if head is None or head.group(0) == family:
        return word
    return family + base[head.end():]


# words people put after a size for "a decoder-only transformer of that size" (nanoGPT, the
# GPT-3 paper's 125M..13B ladder), not a released model: with no preset of that size and no
# version written, the size is a bare size
GENERIC_FAMILIES = frozenset({"gpt"})
GENERIC_LARGEST_B = 13.0  # the GPT-3 paper's largest below 175B: "gpt 120b" is gpt-oss, asked


def _named_sized(family: str, size: str) -> list[str]:
    """The presets of the family's names with that size in their id ("gpt 20b": gpt-oss-20b,
    gpt-neox-20b): where there is one, the name is meant, not a bare size."""
    return [p.id for p in all_presets() if size and p.id.startswith(family) and f"-{size}" in p.id]


def _sized(digits: list[bool], i: int) -> bool:
    """A misspelt family is only guessed next to a size or version ("lama 3 8b", "qwne2.5")."""
    return any(digits[i:i + 3])


def find_models(scan: Scan) -> None:
    """Add ``model`` findings (preset ids), unknown names, then bare sizes (``params_b``)."""
    for m in scan.finditer(_TOOLS):
        scan.claim(m.start(), m.end())
        if _LLAMACPP.match(m.group(0)):  # the engine that serves GGUF files
            scan.add("_serving_framework", "llamacpp", m.start(), m.end())
            if m.group(0).startswith("ollama"):
                scan.add("_ollama", True, m.start(), m.end())
    read_distills(scan)
    words = list(_WORD.finditer(scan.view()))
    digits = [_DIGIT.search(w.group(0)) is not None for w in words]
    i = 0
    while i < len(words) and len(scan.findings) < MAX_MATCHES:
        if digits[i] and _exact_alias(scan, words[i]):  # "intfloat/e5-mistral-7b-instruct"
            i += 1
            continue
        family = family_of(words[i].group(0), _sized(digits, i))
        if family is None or _LIKE.match(scan.view(), words[i].end()) \
                or _LIKE_END.search(words[i].group(0)):
            i += 1  # "a 1b llama-style model" is a bare size
            continue
        used = _mention(scan, words, i, family)
        i += max(used, 1)
    read_bare_r1(scan)
    find_bare_sizes(scan)


def _exact_alias(scan: Scan, word: re.Match[str]) -> bool:
    """A whole repo-style name that is a preset's alias and starts with no family word (an
    embedder built on Mistral 7B: "e5-mistral-7b-instruct")."""
    name = word.group(0)
    if "-" not in name or family_of(name.split("/")[-1].split("-")[0], True) is not None:
        return False
    preset = lookup_preset(name)
    if preset is None:
        return False
    scan.add("model", preset.id, word.start(), word.end(),
             f"'{safe_echo(scan.text[word.start():word.end()])}' read as {preset.id}")
    return True


def _mention(scan: Scan, words: list[re.Match[str]], i: int, family: str) -> int:
    first = words[i].group(0)
    fixed = _fixed(first, family)
    typo = fixed != first
    for n in range(min(_MAX_WINDOW, len(words) - i), 0, -1):
        parts = [fixed] + [w.group(0) for w in words[i + 1:i + n]]
        preset = lookup_preset(" ".join(parts))
        if preset is None:
            continue
        while n > 1 and lookup_preset(" ".join(parts[:n - 1])) == preset and parts[n - 1] not in preset.id:
            n -= 1  # "llama 3.1 70b awq", "llama-3-8b, 4096 seq": the name ends where it resolves
        start, end = words[i].start(), words[i + n - 1].end()
        note = f"read '{_typo_word(first)}' as {family}" if typo else ""
        named = re.findall(r"[a-z]+\d*|\d+(?:\.\d+)?", scan.low[start:end])
        if not typo and any(w not in preset.id for w in named):  # "deepseek r1": its preset's shape
            note = f"'{safe_echo(scan.text[start:end])}' read as {preset.id}"
        scan.add("model", preset.id, start, end, note)
        _packaging(scan, scan.low[start:end], start, end)
        return n
    return _family_size(scan, words, i, family, fixed, typo)


def _packaging(scan: Scan, name: str, start: int, end: int) -> None:
    """A repo id's format word ("Qwen2.5-72B-Instruct-AWQ", "...-FP8") is the serving format."""
    found = _FORMAT.search(name)
    if found is None:
        return
    word = found.group(1)
    if word in ("awq", "gptq"):
        scan.add("quantization", word, start, end, claim=False)
    else:
        scan.add("_dtype", {"4bit": "int4", "8bit": "int8"}.get(word, word), start, end, claim=False)


def _family_size(scan: Scan, words: list[re.Match[str]], i: int, family: str, fixed: str,
                 typo: bool) -> int:
    first = words[i].group(0)
    start = words[i].start()
    end = words[min(i + 3, len(words) - 1)].end()
    shape = _FAMILY_SIZE.match(fixed + scan.view()[words[i].end():end])
    before = _SIZE.match(words[i - 1].group(0)) if i > 0 else None
    if shape is not None:
        size, ver = shape.group("size") + shape.group("unit"), shape.group("ver")
        span_end = start + shape.end() + len(first) - len(fixed)
    elif before is not None and scan.free(words[i - 1].start(), words[i - 1].end()):
        size, ver = before.group(1) + before.group(2), None  # "a 70b llama"
        start, span_end = words[i - 1].start(), words[i].end()
    else:
        return _family_only(scan, words, i, family)
    written = scan.text[start:span_end]
    candidates = _by_family_size().get((family, size), [])
    exact: list[tuple[tuple[float, float, float], ModelPreset]] = []
    if ver is not None:  # "llama3:70b" is 3.0 when there is one; "llama 3 405b": the newest 3.x
        exact = [c for c in candidates if c[0] == _version(ver)]
        candidates = exact or [c for c in candidates if c[0][0] == _version(ver)[0] and _version(ver)[1] == 0]
    if not candidates and family in GENERIC_FAMILIES and not ver \
            and _size_value(size) <= GENERIC_LARGEST_B and not _named_sized(family, size):
        return 1  # "a 125M gpt": a GPT-shaped model of that size, read as a bare size
    if candidates:
        preset = candidates[0][1]
        newest = f"{family} {ver}.x" if ver else family
        note = f"'{safe_echo(written)}' read as {preset.id}" + ("" if exact else (
            f" (the newest {newest} of that size; name the version for another)"))
        if typo:
            note += f"; read '{_typo_word(first)}' as {family}"
        scan.add("model", preset.id, start, span_end, note)
        return 1
    scan.add("_unknown", Unknown("model", safe_echo(written), _near(family, size, ver, written)),
             start, span_end)
    return 1


_VERSION_ONLY = re.compile(r"^[a-z]+[\s\-_]*v?\d+(?:\.\d+)?(?:[\s\-_]*(?:mini|small|medium|large|xl|lite))?")


def _family_only(scan: Scan, words: list[re.Match[str]], i: int, family: str) -> int:
    """"llama 3", "gpt-4", "qwen": a family without a size is an unknown name to ask about."""
    if family in ("meta", "it", "ai"):
        return 1
    rest = scan.view()[words[i].start():words[min(i + 2, len(words) - 1)].end()]
    shape = _VERSION_ONLY.match(rest)
    end = words[i].start() + shape.end() if shape else words[i].end()
    written = scan.text[words[i].start():end]
    ver = re.search(r"\d+(?:\.\d+)?", written)
    near = _near(family, "", ver.group(0) if ver else None, written)
    # "llama 4 scout": the version is part of the name; "gpt-oss-20b": its size may still be read
    scan.add("_unknown", Unknown("model", safe_echo(written), near), words[i].start(), end,
             claim=shape is not None and not _SIZE.search(written))
    return 1


@lru_cache(maxsize=512)
def _near(family: str, size: str, ver: str | None, written: str) -> tuple[str, ...]:
    """Up to 3 ids of the family: the written version first, then nearest in size, newest."""
    entries = [e for (fam, _), group in _by_family_size().items() if fam == family for e in group]
    if not entries:
        return tuple(suggestions(written))
    want = _size_value(size)

    asked = _version(ver) if ver else None

    def rank(entry: tuple[tuple[float, float, float], ModelPreset]) -> tuple[object, ...]:
        version, preset = entry
        shape = _ID_SHAPE.match(preset.id)
        gap = abs(_size_value(shape.group(3)) - want) if want and shape else 0.0
        other = asked is not None and version[: 2 if asked[1] else 1] != asked[: 2 if asked[1] else 1]
        newest = tuple(-v for v in version)
        return (gap, other, newest) if want else (other, gap, newest)

    # a preset named for the family and that size ("gpt 120b": gpt-oss-120b) comes first
    ids = _named_sized(family, size)
    for _, preset in sorted(entries, key=rank):
        if preset.id not in ids:
            ids.append(preset.id)
    return tuple(ids[:3])


def _size_value(size: str) -> float:
    m = _SIZE.match(size)
    if m is None:
        return 0.0
    value = float(m.group(1)) * (1.0 if m.group(2) == "b" else 1e-3)
    return value
