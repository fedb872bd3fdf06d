"""Compiling DRA device selectors and matching them against devices, with result caching.

- :class:`SelectorCompiler` compiles an expression once per text (bounded LRU, failures included)
  and checks what Kubernetes checks: the length limit, the result type (bool or dyn), constant
  regular expressions; plus the gaps of cel-expr-python that would otherwise fail later.
- :meth:`CompiledSelector.matches` evaluates a selector at most once per distinct device content
  (or per distinct projection, see :mod:`dratwin.cel.device_view`) and caches the outcome, runtime
  errors included, in a bounded table on the selector.

Evaluation uses ``eval(data=...)``: each call gets its own arena, which is freed afterwards. A
long-lived ``Activation`` would be slightly faster per call but grows by every allocation made in
it (python-stack §1.6), and a fresh Activation per call is slower than ``data=``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

from cel_expr_python import cel

from dratwin.cel import regex
from dratwin.cel.device_view import CelDevice, Key, PathSet
from dratwin.cel.diagnostics import offset_position, parse_compile_error, runtime_failure, strip_status
from dratwin.cel.environment import environment
from dratwin.cel.source import SourceFacts, analyze
from dratwin.errors import CelCompileError, CelRuntimeError

if TYPE_CHECKING:  # the checked tree, the cost and the advice are read by validate and by messages only:
    # imported where they are used, so that scheduling does not load them (a tenth of the start-up)
    from dratwin.api.driver_shapes import Publications
    from dratwin.cel.advice import Advice
    from dratwin.cel.ast import CheckedAst
    from dratwin.cel.cost import CostEstimate

MAX_EXPRESSION_BYTES: Final = 10 * 1024  # resource.k8s.io CELSelectorExpressionMaxLength
COMPILE_CACHE_SIZE: Final = 1024
RESULT_CACHE_SIZE: Final = 65536

_BUDGET_EXCEEDED = "Iteration budget exceeded"
_BOOL = cel.Type.BOOL
_DYN = cel.Type.DYN
_ERROR = cel.Type.ERROR


class _Failure:
    """A cached error outcome; a fresh exception is raised from it each time (no traceback growth)."""

    __slots__ = ("column", "hint", "line", "message")

    def __init__(self, message: str, hint: str = "", line: int = 0, column: int = 0) -> None:
        self.message = message
        self.hint = hint
        self.line = line
        self.column = column


class CompiledSelector:
    """One compiled expression. ``evaluations`` counts real CEL evaluations (cache misses)."""

    __slots__ = (
        "_checked",
        "_cost",
        "_domains",
        "_facts",
        "_path_set",
        "_program",
        "_results",
        "evaluations",
        "expression",
        "list_type_attributes",
    )

    def __init__(self, expression: str, program: Any, facts: SourceFacts, list_type_attributes: bool) -> None:
        self.expression = expression
        self.list_type_attributes = list_type_attributes
        self.evaluations = 0
        self._program = program
        self._facts = facts
        self._domains = facts.domains
        self._path_set = None if facts.paths is None else PathSet.of(facts.paths)
        self._results: dict[Key, bool | _Failure] = {}
        self._checked: CheckedAst | None = None
        self._cost: CostEstimate | None = None

    def checked(self) -> CheckedAst:
        """The checked tree (read on first use: only validation and error messages need it)."""
        if self._checked is None:
            from dratwin.cel.ast import checked_ast

            self._checked = checked_ast(self._program.serialize())
        return self._checked

    def cost(self) -> CostEstimate:
        """The worst-case cost as the API server estimates it, and the most loop iterations."""
        if self._cost is None:
            from dratwin.cel.cost import estimate

            self._cost = estimate(self.checked())
        return self._cost

    def __repr__(self) -> str:
        return f"CompiledSelector({self.expression!r})"

    @property
    def projectable(self) -> bool:
        """Whether results are shared between devices that agree on the looked-up values only."""
        return self._path_set is not None

    def matches(self, device: CelDevice) -> bool:
        """True/False; raises :class:`CelRuntimeError` when the expression fails on this device."""
        path_set = self._path_set
        # The device's projection memo is read directly: this is the hot path of every cache hit.
        key = device.key if path_set is None else device._projections.get(path_set) or device.projection(path_set)
        outcome = self._results.get(key)
        if outcome is None:
            outcome = self._evaluate(device, key)
        if outcome is True or outcome is False:
            return outcome
        assert isinstance(outcome, _Failure)
        raise CelRuntimeError(self.expression, outcome.message, outcome.hint)

    def _evaluate(self, device: CelDevice, key: Key) -> bool | _Failure:
        if device.list_type_attributes != self.list_type_attributes:
            raise ValueError(
                f"{device!r} was built with list_type_attributes={device.list_type_attributes}, but the selector "
                f"was compiled with list_type_attributes={self.list_type_attributes}"
            )
        error = device.error()
        outcome: bool | _Failure
        if error is not None:
            outcome = _Failure(*error)
        else:
            paths = self._facts.paths
            data = device.data(self._domains) if paths is None else device.projected_data(paths)
            self.evaluations += 1
            outcome = self._run(data, device)
        results = self._results
        if len(results) >= RESULT_CACHE_SIZE:
            del results[next(iter(results))]  # FIFO: cheap, and hits need no bookkeeping
        results[key] = outcome
        return outcome

    def _run(self, data: dict[str, Any], device: CelDevice) -> bool | _Failure:
        try:
            value = self._program.eval(data=data)
        except RuntimeError as error:
            if _BUDGET_EXCEEDED in str(error):
                return self._over_budget()
            return _Failure(
                f"cannot evaluate: {strip_status(str(error))}",
                "this construct is not supported by dratwin's CEL runtime (cel-expr-python)",
            )
        try:
            result = value.value()
        except (TypeError, RuntimeError):  # values with no Python form (optionals)
            result = None
        if result is True or result is False:  # checked first: type() comparisons cost more
            return result
        if value.type() == _ERROR:
            message, hint = runtime_failure(str(value.value()), self._facts.lookups, device.has)
            return _Failure(message, hint)
        return _Failure(
            f"the expression evaluated to a {_type_name(value.type())}, not a bool",
            'a selector must be a condition: compare the value, e.g. device.attributes["d"].x == true',
        )


    def _over_budget(self) -> _Failure:
        """cel-cpp stopped the loops: say whether Kubernetes would have stopped too, in words."""
        from dratwin.cel.cost import COST_LIMIT, RUNTIME_ITERATION_BUDGET

        cost = self.cost()
        if cost.exceeds_limit:
            return _Failure(
                f"the selector exceeded the CEL cost limit of {COST_LIMIT:,} (its estimated worst-case cost is "
                f"{cost.cost.high:,}); the API server does not accept it",
                "loop over fewer or smaller collections, or split it into several selectors",
            )
        return _Failure(
            f"the selector's loops ran {RUNTIME_ITERATION_BUDGET:,} times on this device, where dratwin's CEL runtime "
            f"stops; Kubernetes would go on (estimated cost {cost.cost.high:,}, limit {COST_LIMIT:,})",
            "a limit of dratwin, not of Kubernetes: loop over fewer or smaller collections to evaluate it here",
        )


class SelectorCompiler:
    """Compiles selectors in the DRA environment; results are cached per expression text.

    ``list_type_attributes`` (the DRAListTypeAttributes gate) is recorded on every selector; the
    devices it is matched against must be built with the same setting. ``includes()`` compiles
    either way, as in the scheduler's environment, which holds every library regardless of gates.
    """

    def __init__(self, *, list_type_attributes: bool = False) -> None:
        self.list_type_attributes = list_type_attributes
        self._cache: OrderedDict[str, CompiledSelector | _Failure] = OrderedDict()

    def compile(self, expression: str) -> CompiledSelector:
        """The compiled selector; raises :class:`CelCompileError` (with position and hint)."""
        cached = self._cache.get(expression)
        if cached is None:
            cached = self._compile(expression)
            self._cache[expression] = cached
            if len(self._cache) > COMPILE_CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(expression)
        if isinstance(cached, _Failure):
            raise CelCompileError(expression, cached.message, cached.line, cached.column, cached.hint)
        return cached

    def advise(self, expression: str, publications: Publications) -> list[Advice]:
        """What makes a selector that compiles fail or never match (see :mod:`dratwin.cel.advice`).

        Raises :class:`CelCompileError` like :meth:`compile` when it does not compile.
        """
        from dratwin.cel.advice import advise

        selector = self.compile(expression)
        return advise(selector.checked(), selector.cost(), publications)

    def _compile(self, expression: str) -> CompiledSelector | _Failure:
        size = len(expression.encode("utf-8"))
        if size > MAX_EXPRESSION_BYTES:
            return _Failure(
                f"the expression is {size} bytes long; the limit is {MAX_EXPRESSION_BYTES} bytes (10 KiB)",
                "split it into several selectors (all of them must match)",
            )
        facts = analyze(expression)
        try:
            program = environment().compile(facts.text)
        except RuntimeError as error:
            failure = parse_compile_error(expression, str(error))
            return _Failure(failure.message, failure.hint, failure.line, failure.column)
        if facts.problems:
            first = facts.problems[0]
            return _Failure(first.message, first.hint, *offset_position(expression, first.start))
        result_type = program.return_type()
        if result_type != _BOOL and result_type != _DYN:
            return _Failure(
                f"must evaluate to bool or the unknown type, not {_type_name(result_type)}",
                'a selector is a condition, e.g. device.driver == "gpu.example.com"',
            )
        for start, function, pattern in facts.regexes:
            reason = regex.re2_error(pattern)
            if reason is not None:
                return _Failure(
                    f"invalid regular expression in {function}(): {reason}",
                    "the pattern is RE2 syntax (as Go's regexp): no look-arounds or back-references",
                    *offset_position(expression, start),
                )
        return CompiledSelector(expression, program, facts, self.list_type_attributes)


def _type_name(cel_type: Any) -> str:
    """CEL's spelling of a type: ``MAP<STRING, INT>`` from cel-cpp becomes ``map(string, int)``."""
    text = str(cel_type.name()).replace("<", "(").replace(">", ")")
    return re.sub(r"\b[A-Z_]+\b", lambda m: m.group().lower(), text)
