"""Selectors that compile but cannot work, judged against every ResourceSlice of the input.

Runs after the per-object checks, which collect the selectors that compiled (``Context.selectors``).
The compiler given to the run does the analysis (``SelectorCompiler.advise``, see
:mod:`dratwin.cel.advice`); this module turns its findings into problems of the objects that hold
the selectors. A finding the API server would refuse (a cost over the limit, a comparison its
checker rejects) is an error; one it accepts is a warning.
"""

from __future__ import annotations

from collections.abc import Sequence

from dratwin.api.driver_shapes import Publications
from dratwin.api.resource import ResourceSlice
from dratwin.api.validation_base import AdviceLike, Context, ProblemKind, SelectorAdvisorLike, Severity


def check_selector_advice(ctx: Context, slices: Sequence[ResourceSlice]) -> None:
    compiler = ctx.compiler
    if not isinstance(compiler, SelectorAdvisorLike) or not ctx.selectors:
        return
    publications = Publications.of(slices)
    advice_of: dict[str, Sequence[AdviceLike]] = {}
    for rep, path, expression in ctx.selectors:
        if expression not in advice_of:
            try:
                advice_of[expression] = compiler.advise(expression, publications)
            except Exception:  # a finding must never hide the other problems; compile errors are reported already
                advice_of[expression] = ()
        for advice in advice_of[expression]:
            severity = Severity.ERROR if advice.level == "error" else Severity.WARNING
            if advice.offset < 0:  # about the whole expression: its cost
                kind = ProblemKind.FORBIDDEN if severity is Severity.ERROR else ProblemKind.NOT_CHECKED
                rep.add(kind, path, advice.message, hint=advice.hint, severity=severity)
                continue
            line, column = _position(expression, advice.offset)
            rep.add(ProblemKind.INVALID, path, f"{advice.message} (line {line}, column {column} of the expression)",
                    expression, advice.hint, severity)


def _position(expression: str, offset: int) -> tuple[int, int]:
    before = expression[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1
