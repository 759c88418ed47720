"""Typed reads from a Hugging Face ``config.json`` dict that name the offending key.

Every read records which config key fed which ``Architecture`` field, so that a value the
architecture rejects later (say ``num_key_value_heads`` not dividing ``num_attention_heads``)
is reported under the config key the user pasted, not under our own field name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from service.core.errors import InvalidInput

T = TypeVar("T")


class ConfigReader:
    """Reads keys of one config dict (``prefix`` names nested ones, e.g. ``text_config.``)."""

    def __init__(self, config: Mapping[str, Any], prefix: str = "") -> None:
        self.config = config
        self.prefix = prefix
        self.sources: dict[str, str] = {}  # "arch.heads" -> "num_attention_heads"

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def has(self, name: str) -> bool:
        """True when the key is present and not null (transformers treats null as unset)."""
        return self.config.get(name) is not None

    def _find(self, field: str, keys: tuple[str, ...]) -> tuple[str, Any] | None:
        for name in keys:
            if self.has(name):
                if field:
                    self.sources[f"arch.{field}"] = self.key(name)
                return name, self.config[name]
        return None

    def _missing(self, keys: tuple[str, ...], accepted: str) -> InvalidInput:
        shown = " or ".join(self.key(k) for k in keys)
        return InvalidInput(self.key(keys[0]), f"is missing (looked for {shown})", accepted)

    def read_int(self, field: str, *keys: str, default: int | None = None, low: int = 1) -> int:
        """The first present key as a whole number >= low; ``default`` when none is present."""
        found = self._find(field, keys)
        accepted = f"an integer >= {low}"
        if found is None:
            if default is None:
                raise self._missing(keys, accepted)
            return default
        name, value = found
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(self.key(name), f"must be a whole number, got {value!r}", accepted)
        if value < low:
            raise InvalidInput(self.key(name), f"{value} is too small", accepted)
        return value

    def read_optional_int(self, field: str, *keys: str, low: int = 0) -> int | None:
        if self._find("", keys) is None:
            return None
        return self.read_int(field, *keys, low=low)

    def read_float(self, field: str, *keys: str, default: float) -> float:
        found = self._find(field, keys)
        if found is None:
            return default
        name, value = found
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInput(self.key(name), f"must be a number, got {value!r}", "a number")
        return float(value)

    def read_bool(self, field: str, *keys: str, default: bool) -> bool:
        found = self._find(field, keys)
        if found is None:
            return default
        name, value = found
        if not isinstance(value, bool):
            raise InvalidInput(self.key(name), f"must be true or false, got {value!r}", "true or false")
        return value

    def read_str(self, field: str, *keys: str, default: str) -> str:
        found = self._find(field, keys)
        if found is None:
            return default
        name, value = found
        if not isinstance(value, str):
            raise InvalidInput(self.key(name), f"must be a string, got {value!r}", "a string")
        return value

    def read_int_list(self, name: str) -> list[int]:
        """A list of whole numbers (e.g. Qwen-MoE ``mlp_only_layers``); missing means empty."""
        value = self.config.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise InvalidInput(self.key(name), f"must be a list of integers, got {value!r}", "[0, 1, ...]")
        return list(value)

    def read_str_list(self, name: str) -> list[str] | None:
        """A list of strings (e.g. ``layer_types``); None when missing."""
        value = self.config.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidInput(self.key(name), f"must be a list of strings, got {value!r}", '["..."]')
        return list(value)

    def build(self, make: Callable[[], T]) -> T:
        """Run a constructor or a validation; re-raise its errors under the config key read."""
        try:
            return make()
        except InvalidInput as exc:
            source = self.sources.get(exc.field)
            if source is None:
                raise
            raise InvalidInput(source, exc.message, exc.accepted) from exc

