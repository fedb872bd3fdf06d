"""The worst-case cost of a selector, estimated as the API server estimates it before storing an object.

Kubernetes rejects a DRA selector whose estimated cost exceeds ``CELSelectorExpressionMaxCost``
(1,000,000): ``resource.k8s.io`` validation compiles it and asks cel-go for the cost of the checked
tree, with the sizes of the ``device`` variable declared by the DRA compiler and the cost rules of
the Kubernetes CEL libraries. This module applies the same rules to the tree cel-cpp checked
(:mod:`dratwin.cel.ast`):

- constants cost 0, identifiers 1, a field select 1 more on maps and objects (``device.driver`` is
  an identifier and a select: 2), a call 1 plus its arguments unless the function has its own rule;
- string and list functions cost by the size of their inputs (0.1 per character, regular expressions
  by a quarter of their length per character of the subject), ``&&``/``||``/``?:`` by their branches;
- a comprehension (``all``, ``exists``, ``map``, ...) costs its range and its initial value, plus the
  largest size of the range times one loop step and condition; ``cel.bind`` costs its value and body;
- sizes come from literals, from what the functions return, and from the declared limits of a device:
  driver 63 characters, 32 domains of 32 attributes (or capacities) each, domains 63 and ids 32
  characters, attribute values 64 (characters, or elements of a list attribute).

Approximations: the overloads a call may resolve to are those cel-cpp lists, which for ``dyn``
arguments can differ from cel-go's list (only size-dependent overloads such as string comparisons
change the result); the Kubernetes URL, IP/CIDR, authorizer and format functions do not compile in
dratwin, so their rules are not needed.

The same pass counts the worst-case number of loop iterations, which matters because dratwin's CEL
runtime (cel-cpp) stops an evaluation after :data:`RUNTIME_ITERATION_BUDGET` iterations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from dratwin.cel.ast import (
    DYN,
    Call,
    CelType,
    CheckedAst,
    Comprehension,
    Expr,
    Ident,
    ListExpr,
    Literal,
    MapExpr,
    Select,
    StructExpr,
    children,
)

COST_LIMIT: Final = 1_000_000  # resource.k8s.io CELSelectorExpressionMaxCost, estimated and at run time
RUNTIME_ITERATION_BUDGET: Final = 10_000  # cel-cpp stops an evaluation when its loops reach this many steps
_MAX: Final = 2**64 - 1  # costs and sizes saturate like Go's uint64 arithmetic in cel-go
_STRING_FACTOR: Final = 0.1
_REGEX_FACTOR: Final = 0.25
_LIST_BASE, _MAP_BASE, _STRUCT_BASE = 10, 30, 40
_ACCUMULATORS = frozenset({"__result__", "@result"})


@dataclass(frozen=True, slots=True)
class Range:
    """A [low, high] interval of costs or sizes."""

    low: int
    high: int

    def __add__(self, other: Range) -> Range:
        return Range(min(self.low + other.low, _MAX), min(self.high + other.high, _MAX))

    def times(self, other: Range) -> Range:
        return Range(min(self.low * other.low, _MAX), min(self.high * other.high, _MAX))

    def scaled(self, factor: float) -> Range:
        return Range(_scale(self.low, factor), _scale(self.high, factor))

    def union(self, other: Range) -> Range:
        return Range(min(self.low, other.low), max(self.high, other.high))


def _scale(value: int, factor: float) -> int:
    """``ceil(value * factor)`` in floating point, as cel-go computes it (30 * 0.1 rounds up to 4)."""
    as_float = float(value)
    if as_float > 0 and factor > 0 and as_float > _MAX / factor:
        return _MAX
    product = math.ceil(as_float * factor)
    return _MAX if product >= 2.0**64 else int(product)


def _fixed(value: int) -> Range:
    return Range(value, value)


ZERO, ONE = _fixed(0), _fixed(1)
UNKNOWN = Range(0, _MAX)


@dataclass(frozen=True)
class CostEstimate:
    cost: Range
    iterations: int  # worst-case loop iterations of one evaluation

    @property
    def exceeds_limit(self) -> bool:
        return self.cost.high > COST_LIMIT


def estimate(checked: CheckedAst) -> CostEstimate:
    coster = _Coster(checked)
    cost = coster.cost(checked.root)
    return CostEstimate(cost, coster.iterations(checked.root))


# ---- the declared sizes of `device` --------------------------------------------------------------


@dataclass(frozen=True)
class _Decl:
    """A node of the DRA compiler's declaration of ``device``: the most elements (or characters) it has."""

    most: int
    key: _Decl | None = None
    element: _Decl | None = None
    fields: dict[str, _Decl] = field(default_factory=dict)


_ATTRIBUTE = _Decl(64)  # max(DeviceAttributeMaxValueLength 64, values of a list attribute 48)
_DOMAIN, _ID = _Decl(63), _Decl(32)
_DEVICE = _Decl(0, fields={
    "driver": _Decl(63),
    "attributes": _Decl(32, _DOMAIN, _Decl(32, _ID, _ATTRIBUTE)),
    "capacity": _Decl(32, _DOMAIN, _Decl(32, _ID, _Decl(0))),
    "allowMultipleAllocations": _Decl(1),
})
# Qualified identifiers of dratwin's environment, and the hidden whole-map variables.
_DEVICE_FIELDS = {"device.driver": "driver", "device.attributes": "attributes", "device._ttributes": "attributes",
                  "device.capacity": "capacity", "device._apacity": "capacity",
                  "device.allowMultipleAllocations": "allowMultipleAllocations"}


def _declared_size(path: tuple[str, ...]) -> Range | None:
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        step: _Decl | None
        if name in ("@items", "@values"):
            step = node.element
        elif name == "@keys":
            step = node.key
        elif name in node.fields:
            step = node.fields[name]
        else:
            # Any id in a domain's attribute map has the attribute's size, whatever its name.
            step = _ATTRIBUTE if node.element is _ATTRIBUTE else None
        if step is None:
            return None
        node = step
    return Range(0, node.most)


# ---- the estimator -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entries:
    """The sizes of the keys (indices) and values of a list or map."""

    container: str  # "list" or "map"
    key: Range
    value: Range

    def union(self, other: _Entries | None) -> _Entries | None:
        if other is None:
            return None
        return _Entries(self.container, self.key.union(other.key), self.value.union(other.value))


@dataclass
class _Local:
    path: tuple[str, ...]
    size: Range | None
    entries: _Entries | None


@dataclass(frozen=True)
class _Arg:
    """What a function rule may know about one argument (or the target)."""

    node: Expr
    path: tuple[str, ...]
    type: CelType
    size: Range | None


class _Coster:
    def __init__(self, checked: CheckedAst) -> None:
        self.checked = checked
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entries] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.range_sizes: dict[int, Range] = {}  # comprehension id -> size of its range

    # -- bookkeeping

    def type_of(self, node: Expr) -> CelType:
        return self.checked.type_of(node)

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path_of(self, node: Expr) -> tuple[str, ...]:
        if isinstance(node, Ident):
            found = self.local(node.name)
            if found is not None:
                return found.path
        return self.paths.get(node.id, ())

    def size_of(self, node: Expr) -> Range | None:
        known = self.sizes.get(node.id)
        if known is not None:
            return known
        literal = _literal_size(node)
        if literal is not None:
            return literal
        declared = _declared_size(self.path_of(node))
        if declared is not None:
            self.sizes[node.id] = declared
            return declared
        if _is_scalar(self.type_of(node)):
            return ONE
        if isinstance(node, Ident):
            found = self.local(node.name)
            if found is not None and found.size is not None:
                return found.size
        return None

    def size_or_unknown(self, node: Expr) -> Range:
        return self.size_of(node) or UNKNOWN

    def entries_of(self, node: Expr) -> _Entries | None:
        if node.id in self.entries:
            return self.entries[node.id]
        if isinstance(node, Ident):
            found = self.local(node.name)
            if found is not None:
                return found.entries
        return None

    def arg(self, node: Expr) -> _Arg:
        path = self.path_of(node)
        if path and path[0] in _ACCUMULATORS:
            path = ()
        return _Arg(node, path, self.type_of(node), self.size_of(node))

    def arg_size(self, arg: _Arg) -> Range:
        """The size a Kubernetes library rule sees: computed, else declared, else unknown."""
        if arg.size is not None:
            return arg.size
        return _declared_size(arg.path) or UNKNOWN

    # -- cost

    def cost(self, node: Expr) -> Range:
        if isinstance(node, Literal):
            return ZERO
        if isinstance(node, Ident):
            return self._ident(node)
        if isinstance(node, Select):
            return self._select(node)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, ListExpr):
            return self._list(node)
        if isinstance(node, MapExpr):
            return self._map(node)
        if isinstance(node, StructExpr):
            return sum((self.cost(value) for _, value in node.fields), ZERO) + _fixed(_STRUCT_BASE)
        if isinstance(node, Comprehension):
            return self._bind(node) if _is_bind(node) else self._comprehension(node)
        return ZERO

    def _ident(self, node: Ident) -> Range:
        found = self.local(node.name)
        if found is not None:
            self.paths[node.id] = found.path
            return ONE
        device_field = _DEVICE_FIELDS.get(node.name)
        if device_field is not None:
            # Kubernetes declares `device` as an object: the identifier and the field select cost 1 each.
            self.paths[node.id] = ("device", device_field)
            return _fixed(2)
        self.paths[node.id] = (node.name,)
        return ONE

    def _select(self, node: Select) -> Range:
        if node.test_only:
            return ONE + self.cost(node.operand)  # has(): the presence test and the operand
        total = self.cost(node.operand)
        if self.type_of(node.operand).kind in ("map", "message", "type_param"):
            total = total + ONE
        self.paths[node.id] = (*self.path_of(node.operand), node.field)
        return total

    def _call(self, node: Call) -> Range:
        if node.function == "dyn" and node.args:
            inner = node.args[0]
            total = ONE + self.cost(inner)
            self._copy_sizes(node, inner)
            return total
        arg_costs = [self.cost(a) for a in node.args]
        args = [self.arg(a) for a in node.args]
        if not node.overloads:
            return ZERO  # as cel-go: a call without a resolved overload is not costed
        total = ZERO
        target: _Arg | None = None
        if node.target is not None:
            total = total + self.cost(node.target)
            target = self.arg(node.target)
        function_cost: Range | None = None
        result_size: Range | None = None
        for overload in node.overloads:
            cost, size = self._function(node, overload, target, args, arg_costs)
            function_cost = cost if function_cost is None else function_cost.union(cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload in ("index_list", "index_map") and node.args:
                container = self.entries_of(node.args[0])
                result_size = container.value if container is not None else None
                suffix = "@items" if overload == "index_list" else "@values"
                self.paths[node.id] = (*self.path_of(node.args[0]), suffix)
            if result_size is None:
                result_size = self.size_of(node)
        if result_size is not None:
            self.sizes[node.id] = result_size
        return total + (function_cost or ZERO)

    def _function(self, node: Call, overload: str, target: _Arg | None, args: list[_Arg],
                  arg_costs: list[Range]) -> tuple[Range, Range | None]:
        arg_sum = sum(arg_costs, ZERO)
        library = self._kubernetes_rule(node.function, target, args)
        if library is not None:
            return library[0] + arg_sum, library[1]
        builtin = self._builtin_rule(node, overload, target, args, arg_costs)
        if builtin is not None:
            return builtin
        return ONE + arg_sum, None

    def _kubernetes_rule(self, function: str, target: _Arg | None,
                         args: list[_Arg]) -> tuple[Range, Range | None] | None:
        """The Kubernetes libraries' own cost rules (and DRA's for includes), by function name."""
        if function == "includes" and target is not None:
            return Range(0, 48), None  # DRA: a list attribute has at most 48 values, 1 per comparison
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            element = self._element(target)
            if element is None:  # a string target (indexOf on strings)
                return self.arg_size(target).scaled(_STRING_FACTOR), None
            per_element = ONE
            if element.type.kind in ("string", "bytes"):
                per_element = per_element + self.arg_size(element).scaled(_STRING_FACTOR)
            return self.arg_size(target).times(per_element), None
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            size = self.arg_size(target)
            return size.scaled(_STRING_FACTOR), size
        if function == "replace" and target is not None and len(args) >= 2:
            return self._replace(target, args)
        if function == "split" and target is not None:
            size = self.arg_size(target)
            most = size.high
            if len(args) > 1 and isinstance(args[1].node, Literal) and args[1].node.kind == "int":
                most = int(args[1].node.value)  # type: ignore[call-overload]
            return size.scaled(2 * _STRING_FACTOR), Range(0, most)
        if function == "join" and target is not None:
            return self._join(target, args)
        if function in ("find", "findAll") and target is not None and args:
            size = self.arg_size(target)
            subject = (size + ONE).scaled(_STRING_FACTOR)
            pattern = self.arg_size(args[0]).scaled(_REGEX_FACTOR)
            return subject.times(pattern), Range(0, size.high)
        if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return self.arg_size(args[0]).scaled(_STRING_FACTOR), None
        if function in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
                        "compareTo", "add", "sub", "major", "minor", "patch"):
            return ONE, None
        same = len(args) == 2 and args[0].type == args[1].type
        if function == "_==_" and same and args[0].type.kind == "message" and args[0].type.name in _CONSTANT_EQUALITY:
            return ONE, None
        return None

    def _element(self, container: _Arg) -> _Arg | None:
        """The element of a list (or map) argument, for rules that look at element sizes."""
        params = container.type.params
        if container.type.kind not in ("list", "map") or not params:
            return None
        path = (*container.path, "@items") if container.path else ()
        return _Arg(container.node, path, params[0], None)

    def _replace(self, target: _Arg, args: list[_Arg]) -> tuple[Range, Range]:
        size, old, new = self.arg_size(target), self.arg_size(args[0]), self.arg_size(args[1])
        if old.low == 0:  # replacing "" inserts the replacement around every character
            count_high, kept_high = (size.high + 1 if size.high < _MAX else size.high), size.high
        elif new.high <= old.low:
            count_high, kept_high = 0, size.high
        else:
            count_high, kept_high = math.ceil(size.high / old.low), 0
        if old.high == 0:
            count_low, kept_low = (size.low + 1 if size.low < _MAX else size.low), size.low
        elif old.high <= new.low:
            count_low, kept_low = 0, size.low
        else:
            count_low, kept_low = math.ceil(size.low / old.high), 0
        result = Range(count_low, count_high).times(new) + Range(kept_low, kept_high)
        return size.scaled(2 * _STRING_FACTOR), result

    def _join(self, target: _Arg, args: list[_Arg]) -> tuple[Range, Range]:
        result = ZERO
        items = self.arg_size(target)
        element = self._element(target)
        if element is not None:
            result = items.times(self.arg_size(element))
        if args:
            separators = Range(max(items.low - 1, 0), max(items.high - 1, 0))
            result = result + self.arg_size(args[0]).times(separators)
        return result.scaled(_STRING_FACTOR), result

    def _builtin_rule(self, node: Call, overload: str, target: _Arg | None, args: list[_Arg],
                      arg_costs: list[Range]) -> tuple[Range, Range | None] | None:
        """cel-go's own rules for the standard overloads whose cost depends on sizes."""
        arg_sum = sum(arg_costs, ZERO)
        if overload == "string_format" and target is not None:
            return self.arg_size(target).scaled(_STRING_FACTOR) + arg_sum, None
        if overload in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            size = args[0].size or UNKNOWN
            result = {"string_to_bytes": Range(size.low, min(size.high * 4, _MAX)),
                      "bytes_to_string": Range(size.low // 4, size.high),
                      "strings_quote": Range(size.low + 2, min(size.high * 2 + 2, _MAX))}[overload]
            return size.scaled(_STRING_FACTOR) + arg_sum, result
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return (args[0].size or UNKNOWN).scaled(_STRING_FACTOR) + arg_sum, None
        if overload == "in_list" and len(args) == 2:
            return (args[1].size or UNKNOWN).scaled(1) + arg_sum, None
        if overload == "matches_string" and target is not None and len(args) == 1:
            subject = ((target.size or UNKNOWN) + ONE).scaled(_STRING_FACTOR)
            return subject.times((args[0].size or UNKNOWN).scaled(_REGEX_FACTOR)) + arg_sum, None
        if overload == "contains_string" and target is not None and len(args) == 1:
            subject = (target.size or UNKNOWN).scaled(_STRING_FACTOR)
            return subject.times((args[0].size or UNKNOWN).scaled(_STRING_FACTOR)) + arg_sum, None
        if overload in ("logical_or", "logical_and") and len(arg_costs) == 2:
            left, right = arg_costs
            return Range(left.low, (left + right).high), None  # short-circuit: at least the left side
        if overload == "conditional" and len(args) == 3:
            size = (args[1].size or UNKNOWN).union(args[2].size or UNKNOWN)
            branches = self.entries_of(args[1].node)
            joined = branches.union(self.entries_of(args[2].node)) if branches is not None else None
            if joined is not None:
                self.entries[node.id] = joined
            return arg_costs[0] + arg_costs[1].union(arg_costs[2]), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = (args[0].size or UNKNOWN) + (args[1].size or UNKNOWN)
            first = self.entries_of(args[0].node)
            both = first.union(self.entries_of(args[1].node)) if first is not None else None
            if both is not None:
                self.entries[node.id] = both
            if overload == "add_list":
                return ONE + arg_sum, size
            return size.scaled(_STRING_FACTOR) + arg_sum, size
        if overload in _SIZED_COMPARISONS and len(args) == 2:
            smallest = min((args[0].size or UNKNOWN).high, (args[1].size or UNKNOWN).high)
            return Range(1 if smallest > 0 else 0, smallest).scaled(_STRING_FACTOR) + arg_sum, None
        return None

    def _copy_sizes(self, to: Expr, source: Expr) -> None:
        size = self.size_of(source)
        if size is not None:
            self.sizes[to.id] = size
        entries = self.entries_of(source)
        if entries is not None:
            self.entries[to.id] = entries

    def _list(self, node: ListExpr) -> Range:
        total = ZERO
        items: Range | None = None
        for element in node.elements:
            total = total + self.cost(element)
            size = self.size_or_unknown(element)
            items = size if items is None else items.union(size)
        self.entries[node.id] = _Entries("list", ONE, items or ZERO)
        return total + _fixed(_LIST_BASE)

    def _map(self, node: MapExpr) -> Range:
        total = ZERO
        keys: Range | None = None
        values: Range | None = None
        for key, value in node.entries:
            total = total + self.cost(key) + self.cost(value)
            key_size, value_size = self.size_or_unknown(key), self.size_or_unknown(value)
            keys = key_size if keys is None else keys.union(key_size)
            values = value_size if values is None else values.union(value_size)
        self.entries[node.id] = _Entries("map", keys or ZERO, values or ZERO)
        return total + _fixed(_MAP_BASE)

    def _bind(self, node: Comprehension) -> Range:
        total = self.cost(node.iter_range) + self.cost(node.accu_init)
        self.push(node.accu_var, self._local_of(node.accu_init))
        total = total + self.cost(node.result)
        self.pop(node.accu_var)
        self._copy_sizes(node, node.result)
        return total

    def _local_of(self, value: Expr) -> _Local:
        return _Local(self.path_of(value), self.size_of(value), self.entries_of(value))

    def _comprehension(self, node: Comprehension) -> Range:
        total = self.cost(node.iter_range) + self.cost(node.accu_init)
        self.push(node.accu_var, self._local_of(node.accu_init))
        container = self.entries_of(node.iter_range)
        kind = container.container if container is not None else self.type_of(node.iter_range).kind
        base = self.path_of(node.iter_range)
        if node.iter_var2:
            key_part = "@indices" if kind == "list" else "@keys"
            value_part = "@items" if kind == "list" else "@values"
            self.push(node.iter_var, _Local((*base, key_part), container.key if container else None, None))
            self.push(node.iter_var2, _Local((*base, value_part), container.value if container else None, None))
        elif kind == "list":
            self.push(node.iter_var, _Local((*base, "@items"), container.value if container else None, None))
        else:
            self.push(node.iter_var, _Local((*base, "@keys"), container.key if container else None, None))
        loop = self.cost(node.loop_condition) + self.cost(node.loop_step)
        self.pop(node.iter_var)
        if node.iter_var2:
            self.pop(node.iter_var2)
        total = total + self.cost(node.result)
        self.pop(node.accu_var)
        count = self.size_or_unknown(node.iter_range)
        self.range_sizes[node.id] = count
        total = total + count.times(loop)
        if isinstance(node.accu_init, Literal):
            size = self.size_of(node.accu_init)
            if size is not None:
                self.sizes[node.id] = size
        elif isinstance(node.accu_init, ListExpr | MapExpr):
            self.sizes[node.id] = count
            step_entries = self.entries_of(node.loop_step)
            if step_entries is not None:
                self.entries[node.id] = step_entries
        return total

    # -- loop iterations, from the range sizes found by the cost pass

    def iterations(self, node: Expr) -> int:
        if isinstance(node, Comprehension):
            outside = sum(self.iterations(n) for n in (node.iter_range, node.accu_init, node.result))
            if _is_bind(node):
                return outside
            per_step = 1 + self.iterations(node.loop_condition) + self.iterations(node.loop_step)
            count = self.range_sizes.get(node.id, UNKNOWN).high
            return min(outside + count * per_step, _MAX)
        return min(sum(self.iterations(child) for child in children(node)), _MAX)


_CONSTANT_EQUALITY = ("kubernetes.Quantity", "kubernetes.Semver")  # compared in one step, whatever their size
_SIZED_COMPARISONS = frozenset({
    "less_string", "greater_string", "less_equals_string", "greater_equals_string", "less_bytes", "greater_bytes",
    "less_equals_bytes", "greater_equals_bytes", "equals", "not_equals",
})


def _is_bind(node: Comprehension) -> bool:
    """``cel.bind`` expands to a loop over an empty list that never runs."""
    return (isinstance(node.iter_range, ListExpr) and not node.iter_range.elements
            and isinstance(node.loop_condition, Literal) and node.loop_condition.value is False
            and node.accu_var not in _ACCUMULATORS)


def _literal_size(node: Expr) -> Range | None:
    if isinstance(node, Literal):
        if node.kind == "string":
            return _fixed(len(str(node.value)))  # characters, as CEL's size()
        if node.kind == "bytes":
            return _fixed(len(node.value))  # type: ignore[arg-type]
        return ONE
    if isinstance(node, ListExpr):
        return _fixed(len(node.elements))
    if isinstance(node, MapExpr):
        return _fixed(len(node.entries))
    return None


def _is_scalar(cel_type: CelType) -> bool:
    if cel_type.kind in ("bool", "double", "int", "uint"):
        return True
    if cel_type.kind == "well_known":
        return cel_type.name in ("duration", "timestamp")
    if cel_type.kind == "abstract" and cel_type.name == "optional_type" and cel_type.params:
        return _is_scalar(cel_type.params[0])
    return False


__all__ = ["COST_LIMIT", "DYN", "RUNTIME_ITERATION_BUDGET", "CostEstimate", "Range", "estimate"]
