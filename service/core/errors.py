"""The one error type the engine raises for bad input."""

from __future__ import annotations


class InvalidInput(ValueError):
    """A request or architecture field holds a value the engine cannot use.

    ``field`` names the field (dotted for nested ones, e.g. ``moe.experts_per_token``),
    ``accepted`` says in words what would be accepted. The API edge turns this into an
    HTTP 422 problem; the chat parser turns it into a friendly reply.
    """

    def __init__(self, field: str, message: str, accepted: str) -> None:
        self.field = field
        self.message = message
        self.accepted = accepted
        super().__init__(f"{field}: {message} (accepted: {accepted})")


class UnknownName(LookupError):
    """A model or GPU name that matches nothing; carries the closest known names."""

    def __init__(self, kind: str, name: str, suggestions: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown {kind} {name!r}.{hint}")
