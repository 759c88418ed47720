"""The assumption records a request collects while it is resolved (``resolve.py``)."""

from __future__ import annotations

from service.core.job.assumptions import Assumption, default, stated
from service.core.job.request import EstimateRequest


class Notes:
    """Collects one assumption per setting while a request is resolved."""

    def __init__(self, request: EstimateRequest) -> None:
        self.request = request
        self.items: list[Assumption] = []

    def add(self, item: Assumption) -> None:
        self.items.append(item)

    def value(self, field: str, value: str | int | float | bool, why: str, source: str = "",
              minor: bool = False) -> None:
        """A request field's value: stated when the user gave it, else a default."""
        given = getattr(self.request, field)
        self.items.append(stated(field, given) if given is not None
                          else default(field, value, why, source, minor))
