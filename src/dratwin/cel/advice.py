"""Selectors that compile but can never work, found on the checked tree at validation time.

Kubernetes accepts these selectors, and they fail (or never match) only when the scheduler runs them:

- a lookup of an attribute or capacity that no device publishes (``productname`` for ``productName``,
  an attribute written as a capacity), judged against the input's ResourceSlices and the known
  driver shapes (:mod:`dratwin.api.driver_shapes`), only for domains one of them knows; a domain or
  driver name that is a near miss of a known one;
- literals that fail whenever they are evaluated: ``quantity("40GB")``, ``semver("9.0")``;
- an attribute compared with a value of another type: a version with a string (``==`` is always
  false, ``<`` and ``compareTo`` are runtime errors), a string with a number, ...;
- ``compareTo``/``isGreaterThan``/``isLessThan`` between a quantity or version and another type,
  which Kubernetes' checker refuses (dratwin's checker declares these methods on any type);
- an estimated cost over the limit the API server enforces (:mod:`dratwin.cel.cost`), and loops that
  dratwin's CEL runtime cannot finish.

Everything is read from the tree cel-cpp checked (:mod:`dratwin.cel.ast`), not from the text.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterator
from dataclasses import dataclass

from dratwin.api.driver_shapes import Publications
from dratwin.api.validation_formats import close_match, suggest_semver
from dratwin.cel import values
from dratwin.cel.ast import Call, CheckedAst, Comprehension, Expr, Ident, Literal, Select, children, walk
from dratwin.cel.cost import COST_LIMIT, RUNTIME_ITERATION_BUDGET, CostEstimate
from dratwin.cel.semver import SemverError
from dratwin.cel.semver import parse as parse_semver
from dratwin.cel.semver import parse_normalized as parse_semver_normalized
from dratwin.errors import QuantityError

_MAPS = {"device.attributes": "attributes", "device._ttributes": "attributes", "device.capacity": "capacity",
         "device._apacity": "capacity"}
_INDEX = ("_[_]", "_[?_]", "_?._")
_EQUALITY = ("_==_", "_!=_")
_ORDERING = ("_<_", "_<=_", "_>_", "_>=_")
_COMPARE_METHODS = ("compareTo", "isGreaterThan", "isLessThan")
_LITERAL_TYPES = {"string": "string", "int": "int", "uint": "int", "double": "int", "bool": "bool"}
_QUANTITY, _SEMVER = "kubernetes.Quantity", "kubernetes.Semver"


class Level(enum.StrEnum):
    ERROR = "error"  # the API server refuses the object
    WARNING = "warning"  # accepted, but the selector fails or never matches


@dataclass(frozen=True)
class Advice:
    level: Level
    message: str
    hint: str
    offset: int  # 0-based position in the expression; -1 for the whole expression


@dataclass(frozen=True)
class _Lookup:
    kind: str  # attributes or capacity
    domain: str
    ident: str
    guarded: bool  # has(), `in` or an optional lookup: a missing id gives false, not an error
    start: int

    def text(self) -> str:
        return f'device.{self.kind}["{self.domain}"].{self.ident}'


def advise(checked: CheckedAst, cost: CostEstimate, publications: Publications) -> list[Advice]:
    found = list(_Walker(checked, publications).run())
    found.extend(_cost_advice(cost))
    return sorted(found, key=lambda a: a.offset)


def start_of(node: Expr) -> int:
    """Where the text of ``node`` begins (cel-cpp places a select or call at its operator)."""
    starts = [n.offset - (len("device") if isinstance(n, Ident) and n.name.startswith("device.") else 0)
              for n in walk(node) if n.offset >= 0]
    return min(starts, default=-1)


def _cost_advice(cost: CostEstimate) -> Iterator[Advice]:
    if cost.exceeds_limit:
        yield Advice(
            Level.ERROR,
            f"too complex: the estimated worst-case cost is {_count(cost.cost.high)}, over the limit of "
            f"{COST_LIMIT:,} the API server allows for a selector",
            "nested loops multiply: loop over fewer or smaller collections, or split the condition into several "
            "selectors (each has its own limit)",
            -1,
        )
    elif cost.iterations >= RUNTIME_ITERATION_BUDGET:
        yield Advice(
            Level.WARNING,
            f"its loops may run {_count(cost.iterations)} times for one device; Kubernetes evaluates it "
            f"(estimated cost {cost.cost.high:,}, limit {COST_LIMIT:,}), but dratwin's CEL runtime stops at "
            f"{RUNTIME_ITERATION_BUDGET:,} iterations",
            "dratwin reports a runtime error for devices where the loops run that long",
            -1,
        )


def _count(value: int) -> str:
    return f"{value:,}" if value < 2**64 - 1 else "unbounded"


class _Walker:
    def __init__(self, checked: CheckedAst, publications: Publications) -> None:
        self.checked = checked
        self.pubs = publications
        self.bound: dict[str, tuple[str, str]] = {}  # cel.bind variables holding one domain's map

    def run(self) -> Iterator[Advice]:
        yield from self._visit(self.checked.root)

    def _visit(self, node: Expr) -> Iterator[Advice]:
        lookup = self._lookup(node)
        if lookup is not None:
            yield from self._check_lookup(lookup)
        elif not isinstance(node, Ident) and self._domain_map(node) is not None:
            yield from self._check_domain(node)
        if isinstance(node, Call):
            yield from self._check_call(node)
        if isinstance(node, Comprehension):
            yield from self._comprehension(node)
            return
        for child in children(node):
            yield from self._visit(child)

    def _comprehension(self, node: Comprehension) -> Iterator[Advice]:
        yield from self._visit(node.iter_range)
        yield from self._visit(node.accu_init)
        domain = self._domain_map(node.accu_init)
        saved = dict(self.bound)
        for name in (node.iter_var, node.iter_var2, node.accu_var):
            self.bound.pop(name, None)
        if domain is not None and node.accu_var not in ("@result", "__result__"):
            self.bound[node.accu_var] = domain  # cel.bind(d, device.attributes["x"], d.y)
        for part in (node.loop_condition, node.loop_step, node.result):
            yield from self._visit(part)
        self.bound = saved

    # -- lookups of attributes and capacities

    def _domain_map(self, node: Expr) -> tuple[str, str] | None:
        """(attributes|capacity, domain) when ``node`` is one domain's map: ``device.attributes["d"]``."""
        if isinstance(node, Ident):
            return self.bound.get(node.name)
        if isinstance(node, Call) and node.function == "_[_]" and len(node.args) == 2:
            base, key = node.args
            if isinstance(base, Ident) and base.name in _MAPS and _string(key) is not None:
                return _MAPS[base.name], str(_string(key))
        if (isinstance(node, Select) and not node.test_only and isinstance(node.operand, Ident)
                and node.operand.name in _MAPS):
            return _MAPS[node.operand.name], node.field
        return None

    def _lookup(self, node: Expr) -> _Lookup | None:
        """An id looked up in one domain's map: ``.x``, ``["x"]``, ``.?x``, ``[?"x"]``, ``has(...)``, ``"x" in``."""
        if isinstance(node, Select):
            domain = self._domain_map(node.operand)
            if domain is not None:
                return _Lookup(*domain, node.field, node.test_only, start_of(node))
        elif isinstance(node, Call) and node.function in _INDEX and len(node.args) == 2:
            domain, ident = self._domain_map(node.args[0]), _string(node.args[1])
            if domain is not None and ident is not None:
                return _Lookup(*domain, ident, node.function != "_[_]", start_of(node))
        elif isinstance(node, Call) and node.function == "@in" and len(node.args) == 2:
            domain, ident = self._domain_map(node.args[1]), _string(node.args[0])
            if domain is not None and ident is not None:
                return _Lookup(*domain, ident, True, start_of(node))
        return None

    def _check_domain(self, node: Expr) -> Iterator[Advice]:
        """A domain no driver publishes, close to one that does (``gpu.nvidia.co``)."""
        found = self._domain_map(node)
        if found is None:
            return
        kind, domain = found
        if self.pubs.knows_domain(domain):
            return
        meant = _near(domain, self.pubs.domains())
        if meant is not None:
            yield Advice(Level.WARNING, f'no driver publishes {kind} in domain "{domain}": '
                         f'device.{kind}["{domain}"] is always empty', f'did you mean "{meant}"?', start_of(node))

    def _check_lookup(self, lookup: _Lookup) -> Iterator[Advice]:
        pubs, domain, ident = self.pubs, lookup.domain, lookup.ident
        if not pubs.knows_domain(domain):
            return
        attributes, capacities = pubs.attribute_ids(domain), pubs.capacity_ids(domain)
        present = ident in (attributes if lookup.kind == "attributes" else capacities)
        if present:
            return
        what = "attribute" if lookup.kind == "attributes" else "capacity"
        if pubs.from_input(domain):
            source = ("neither the input's ResourceSlices nor the known drivers publish" if pubs.known(domain)
                      else "no device in the input's ResourceSlices has")
        else:
            source = "no known driver publishes"
        effect = ("so the test is always false" if lookup.guarded
                  else "looking it up is a runtime error wherever it is evaluated, which stops the allocation")
        message = f'{lookup.text()}: {source} {what} "{ident}" in domain "{domain}", {effect}'
        yield Advice(Level.WARNING, message, self._lookup_hint(lookup, attributes, capacities), lookup.start)

    def _lookup_hint(self, lookup: _Lookup, attributes: dict[str, set[str]], capacities: set[str]) -> str:
        domain, ident = lookup.domain, lookup.ident
        same = attributes if lookup.kind == "attributes" else capacities
        other_kind = "capacity" if lookup.kind == "attributes" else "attributes"
        other = capacities if lookup.kind == "attributes" else attributes
        meant = close_match(ident, same)
        if meant is not None:
            return f"did you mean {meant}?"
        if ident in other:
            return f'{ident} is {"a capacity" if other_kind == "capacity" else "an attribute"}: write ' \
                   f'device.{other_kind}["{domain}"].{ident}'
        listed = ", ".join(sorted(same)[:12]) + (", ..." if len(same) > 12 else "")
        kind_word = "attributes" if lookup.kind == "attributes" else "capacities"
        return f"{kind_word} of {domain}: {listed}" if same else f"devices of {domain} publish no {kind_word}"

    # -- calls: drivers, literals, comparisons

    def _check_call(self, node: Call) -> Iterator[Advice]:
        if node.function in _EQUALITY and len(node.args) == 2:
            yield from self._check_driver(node)
            yield from self._check_equality(node)
        elif node.function in _ORDERING and len(node.args) == 2:
            yield from self._check_ordering(node)
        elif node.function in _COMPARE_METHODS and node.target is not None and len(node.args) == 1:
            yield from self._check_compare_method(node)
        elif node.function in ("quantity", "isQuantity") and node.args and _string(node.args[0]) is not None:
            yield from _check_quantity_literal(node, str(_string(node.args[0])))
        elif node.function in ("semver", "isSemver") and node.args and _string(node.args[0]) is not None:
            yield from _check_semver_literal(node)

    def _check_driver(self, node: Call) -> Iterator[Advice]:
        left, right = node.args
        literal = _string(right) if _is_driver(left) else _string(left) if _is_driver(right) else None
        if literal is None or literal in self.pubs.drivers:
            return
        meant = _near(literal, self.pubs.drivers)
        if meant is not None and meant != literal:
            yield Advice(Level.WARNING, f'no known driver is called "{literal}": device.driver is never '
                         f'"{literal}"', f'did you mean "{meant}"?', start_of(node))

    def _attribute_type(self, node: Expr) -> str | None:
        """The one type every device publishing the looked-up attribute gives it, if known."""
        if not isinstance(node, Select | Call):
            return None
        lookup = self._lookup(node)
        if lookup is None or lookup.kind != "attributes":
            return None
        kinds = self.pubs.attribute_ids(lookup.domain).get(lookup.ident, set())
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _operand_type(self, node: Expr) -> str | None:
        """version, quantity, string, int or bool for an attribute of known type, a literal or semver()/quantity()."""
        attribute = self._attribute_type(node)
        if attribute is not None:
            return attribute
        if isinstance(node, Literal):
            return _LITERAL_TYPES.get(node.kind)
        static = self.checked.type_of(node)
        if static.kind == "message":
            return {_QUANTITY: "quantity", _SEMVER: "version"}.get(static.name)
        return None

    def _check_equality(self, node: Call) -> Iterator[Advice]:
        left, right = node.args
        for attribute, other in ((left, right), (right, left)):
            kind = self._attribute_type(attribute)
            other_kind = self._operand_type(other)
            if kind is None or other_kind is None or kind == other_kind:
                continue
            outcome = "false" if node.function == "_==_" else "true"
            lookup = self._lookup(attribute)
            assert lookup is not None
            yield Advice(Level.WARNING, f"{lookup.text()} is {_a(kind)}, compared with {_a(other_kind)}: values of "
                         f"different types are never equal, so this is always {outcome}",
                         _conversion_hint(kind, other), start_of(node))
            return

    def _check_ordering(self, node: Call) -> Iterator[Advice]:
        left, right = node.args
        for attribute, other in ((left, right), (right, left)):
            kind = self._attribute_type(attribute)
            if kind is None:
                continue
            lookup = self._lookup(attribute)
            assert lookup is not None
            other_kind = self._operand_type(other)
            if kind == "version":
                hint = f'compare versions with {lookup.text()}.compareTo(semver("1.2.3")) >= 0'
                yield Advice(Level.WARNING, f"{lookup.text()} is {_a(kind)}, which {node.function[1:-1]} cannot "
                             "compare: a runtime error wherever it is evaluated", hint, start_of(node))
                return
            if other_kind is not None and other_kind != kind:
                yield Advice(Level.WARNING, f"{lookup.text()} is {_a(kind)}, compared with {_a(other_kind)}: a runtime "
                             "error wherever it is evaluated", _conversion_hint(kind, other), start_of(node))
                return

    def _check_compare_method(self, node: Call) -> Iterator[Advice]:
        assert node.target is not None
        target, argument = node.target, node.args[0]
        static = self.checked.type_of(target)
        argument_kind = self._operand_type(argument)
        if static.kind == "message" and static.name in (_QUANTITY, _SEMVER):
            static_kind = "quantity" if static.name == _QUANTITY else "version"
            if argument_kind is not None and argument_kind != static_kind:
                yield Advice(Level.ERROR, f"{node.function}() of {_a(static_kind)} takes {_a(static_kind)}, not "
                             f"{_a(argument_kind)}: the API server's CEL checker refuses this expression",
                             _conversion_hint(static_kind, argument), start_of(node))
            return
        kind = self._attribute_type(target)
        if kind is None:
            return
        lookup = self._lookup(target)
        assert lookup is not None
        if kind != "version":
            yield Advice(Level.WARNING, f"{lookup.text()} is {_a(kind)}: {node.function}() exists only for "
                         "quantities and versions, a runtime error wherever it is evaluated",
                         "compare it with == or < instead", start_of(node))
        elif argument_kind is not None and argument_kind != "version":
            yield Advice(Level.WARNING, f"{lookup.text()} is a version, compared with {_a(argument_kind)}: "
                         f"{node.function}() is a runtime error wherever it is evaluated",
                         _conversion_hint(kind, argument), start_of(node))


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _near(value: str, candidates: set[str]) -> str | None:
    """A driver or domain name the user probably meant: same text ignoring case, or one typo away."""
    match = close_match(value, candidates)
    if match is None or match.lower() == value.lower():
        return match
    return match if difflib.SequenceMatcher(None, value, match).ratio() >= 0.85 else None


def _is_driver(node: Expr) -> bool:
    return isinstance(node, Ident) and node.name == "device.driver"


def _string(node: Expr) -> str | None:
    if isinstance(node, Literal) and node.kind == "string":
        return str(node.value)
    return None


def _conversion_hint(kind: str, other: Expr) -> str:
    text = _string(other)
    if kind == "version":
        version = suggest_semver(text) if text is not None else None
        return f'write the other side as a version: semver("{version or text or "1.2.3"}")'
    if kind == "quantity":
        return f'write the other side as a quantity: quantity("{text or "40Gi"}")'
    if kind == "int" and text is not None and text.lstrip("-").isdigit():
        return f"write the number without quotes: {text}"
    if kind == "string" and isinstance(other, Literal) and other.kind != "string":
        return f'quote the value: "{other.value}"'
    if kind == "bool" and text in ("true", "false"):
        return f"write {text} without quotes"
    return f"compare it with {_a(kind)}"


def _check_quantity_literal(node: Call, text: str) -> Iterator[Advice]:
    try:
        values.parse_quantity(text)
    except QuantityError as error:
        detail = str(error)
        hint = detail[detail.index("did you mean"):] if "did you mean" in detail else \
            "a quantity is a number with an optional suffix such as 80Gi, 500m, 2k or 1e3"
        if node.function == "quantity":
            yield Advice(Level.WARNING, f'quantity("{text}") is not a valid quantity: evaluating it is a runtime '
                         "error", hint, start_of(node))
        else:
            yield Advice(Level.WARNING, f'isQuantity("{text}") is always false', hint, start_of(node))
    except ValueError:
        return  # a valid quantity the parser cannot represent exactly


def _check_semver_literal(node: Call) -> Iterator[Advice]:
    text = str(_string(node.args[0]))
    normalize = len(node.args) > 1 and isinstance(node.args[1], Literal) and node.args[1].value is True
    if len(node.args) > 1 and not isinstance(node.args[1], Literal):
        return  # normalization decided at run time
    try:
        (parse_semver_normalized if normalize else parse_semver)(text)
    except SemverError as error:
        fixed = suggest_semver(text)
        hint = f'write semver("{fixed}")' if fixed else f"{error}"
        if fixed and not normalize:
            hint += f' or semver("{text}", true), which accepts a missing minor or patch and a leading v'
        call = f'{node.function}("{text}"{", true" if normalize else ""})'
        effect = ("is always false" if node.function == "isSemver"
                  else "is not a valid version: evaluating it is a runtime error wherever it is evaluated")
        yield Advice(Level.WARNING, f"{call} {effect}", hint, start_of(node))
