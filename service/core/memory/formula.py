"""A memory component as a formula: an arithmetic expression over named terms, and its bytes.

The bytes of every component are computed by evaluating its expression with its terms, so the
figures a person reads next to a component (the expression with the numbers put in) are the
very numbers that made its bytes. Expressions use plain arithmetic only: ``+ - * / //``,
parentheses, numbers, term names and the functions ``max``, ``min`` and ``ceil``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType

Number = int | float
FUNCTIONS: dict[str, object] = {"max": max, "min": min, "ceil": math.ceil}
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant, ast.Call,
          ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.USub, ast.UAdd)


class BadExpression(ValueError):
    """An expression that is not plain arithmetic over term names (a programming error)."""


@lru_cache(maxsize=512)
def compile_expression(expression: str) -> tuple[CodeType, frozenset[str]]:
    """The compiled expression and the term names it reads; BadExpression for anything but
    plain arithmetic (checked once per expression text)."""
    tree = ast.parse(expression, mode="eval")
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise BadExpression(f"{type(node).__name__} is not allowed in {expression!r}")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, int | float)):
            raise BadExpression(f"only numbers may be constants in {expression!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS \
                    or node.keywords:
                raise BadExpression(f"only max, min and ceil may be called in {expression!r}")
        elif isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            names.add(node.id)
    return compile(tree, "<formula>", "eval"), frozenset(names)


@lru_cache(maxsize=512)
def _function(expression: str) -> Callable[..., Number]:
    """The checked expression as a function of its terms by keyword (terms it does not read
    are ignored): one call instead of building a scope for ``eval`` every time."""
    _, names = compile_expression(expression)
    params = f"*, {', '.join(sorted(names))}, **_" if names else "**_"
    function: Callable[..., Number] = eval(f"lambda {params}: ({expression})",
                                           {"__builtins__": {}, **FUNCTIONS})
    return function


def evaluate(expression: str, terms: Mapping[str, Number]) -> float:
    """The expression's value with the terms put in; every name it reads must be a term."""
    try:
        return float(_function(expression)(**terms))
    except TypeError:
        missing = compile_expression(expression)[1] - terms.keys()
        if missing:
            raise BadExpression(f"{expression!r} reads {sorted(missing)} but no such term is "
                                "given") from None
        raise


@dataclass(frozen=True, slots=True)
class Component:
    """One memory component on one GPU: ``bytes`` is ``expression`` evaluated with ``terms``,
    rounded to a whole byte."""

    key: str  # weights, gradients, optimizer, activations, kv_cache, temporary, overhead
    expression: str
    terms: tuple[tuple[str, Number], ...]
    bytes: int
    source: str  # the paper, framework file or measurement the rule follows
    note: str = ""

    @property
    def term_map(self) -> dict[str, Number]:
        return dict(self.terms)


def component_of(key: str, expression: str, terms: Mapping[str, Number], source: str,
                 note: str = "") -> Component:
    """Build a component, computing its bytes from the expression and the terms."""
    value = evaluate(expression, terms)
    return Component(key, expression, tuple(terms.items()), round(value), source, note)


def component(key: str, expression: str, source: str, note: str = "",
              **terms: Number) -> Component:
    """``component_of`` with the terms as keyword arguments."""
    return component_of(key, expression, terms, source, note)
