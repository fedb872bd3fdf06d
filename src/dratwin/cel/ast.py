"""The checked syntax tree of a compiled selector, read from cel-cpp's serialized ``CheckedExpr``.

cel-expr-python exposes no parse tree, but ``Expression.serialize()`` returns the checked expression
as a protobuf ``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr``: the tree after macro
expansion (``all``, ``exists``, ``has``, ``cel.bind`` become comprehensions and test-only selects),
the type the checker gave every node, the overloads each call resolved to, and the source offset of
every node. The messages are declared here from their public field numbers (no ``.proto`` file or
generated code), as :mod:`dratwin.cel.values` does for Quantity and Semver, and converted into the
small immutable nodes below, which the cost estimator and the selector advice walk.

Qualified variables come out as one identifier: ``device.attributes`` is ``Ident("device.attributes")``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64,
    "double": _F.TYPE_DOUBLE, "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES,
}
# message -> fields (name, number, type, repeated, oneof index or None); "Outer.Inner" is a nested type.
# Only the parts of cel/expr/syntax.proto and checked.proto that the tree needs; unknown fields
# (durations, timestamps, macro calls, ...) are skipped by the parser.
_SCHEMA: dict[str, list[tuple[str, int, str, bool, int | None]]] = {
    "Constant": [
        ("null_value", 1, "int32", False, 0), ("bool_value", 2, "bool", False, 0),
        ("int64_value", 3, "int64", False, 0), ("uint64_value", 4, "uint64", False, 0),
        ("double_value", 5, "double", False, 0), ("string_value", 6, "string", False, 0),
        ("bytes_value", 7, "bytes", False, 0),
    ],
    "Expr": [
        ("id", 2, "int64", False, None), ("const_expr", 3, "Constant", False, 0),
        ("ident_expr", 4, "Expr.Ident", False, 0), ("select_expr", 5, "Expr.Select", False, 0),
        ("call_expr", 6, "Expr.Call", False, 0), ("list_expr", 7, "Expr.CreateList", False, 0),
        ("struct_expr", 8, "Expr.CreateStruct", False, 0), ("comprehension_expr", 9, "Expr.Comprehension", False, 0),
    ],
    "Expr.Ident": [("name", 1, "string", False, None)],
    "Expr.Select": [("operand", 1, "Expr", False, None), ("field", 2, "string", False, None),
                    ("test_only", 3, "bool", False, None)],
    "Expr.Call": [("target", 1, "Expr", False, None), ("function", 2, "string", False, None),
                  ("args", 3, "Expr", True, None)],
    "Expr.CreateList": [("elements", 1, "Expr", True, None)],
    "Expr.CreateStruct": [("message_name", 1, "string", False, None),
                          ("entries", 2, "Expr.CreateStruct.Entry", True, None)],
    "Expr.CreateStruct.Entry": [("id", 1, "int64", False, None), ("field_key", 2, "string", False, 0),
                                ("map_key", 3, "Expr", False, 0), ("value", 4, "Expr", False, None)],
    "Expr.Comprehension": [
        ("iter_var", 1, "string", False, None), ("iter_range", 2, "Expr", False, None),
        ("accu_var", 3, "string", False, None), ("accu_init", 4, "Expr", False, None),
        ("loop_condition", 5, "Expr", False, None), ("loop_step", 6, "Expr", False, None),
        ("result", 7, "Expr", False, None), ("iter_var2", 8, "string", False, None),
    ],
    "Type": [
        ("dyn", 1, "Type.Empty", False, 0), ("null", 2, "int32", False, 0), ("primitive", 3, "int32", False, 0),
        ("wrapper", 4, "int32", False, 0), ("well_known", 5, "int32", False, 0),
        ("list_type", 6, "Type.ListType", False, 0), ("map_type", 7, "Type.MapType", False, 0),
        ("function", 8, "Type.Empty", False, 0), ("message_type", 9, "string", False, 0),
        ("type_param", 10, "string", False, 0), ("type", 11, "Type", False, 0), ("error", 12, "Type.Empty", False, 0),
        ("abstract_type", 14, "Type.AbstractType", False, 0),
    ],
    "Type.Empty": [],
    "Type.ListType": [("elem_type", 1, "Type", False, None)],
    "Type.MapType": [("key_type", 1, "Type", False, None), ("value_type", 2, "Type", False, None)],
    "Type.AbstractType": [("name", 1, "string", False, None), ("parameter_types", 2, "Type", True, None)],
    "Reference": [("name", 1, "string", False, None), ("overload_id", 3, "string", True, None)],
    "SourceInfo": [("positions", 4, "SourceInfo.PositionsEntry", True, None)],
    "SourceInfo.PositionsEntry": [("key", 1, "int64", False, None), ("value", 2, "int32", False, None)],
    "CheckedExpr": [
        ("reference_map", 2, "CheckedExpr.ReferenceMapEntry", True, None),
        ("type_map", 3, "CheckedExpr.TypeMapEntry", True, None),
        ("expr", 4, "Expr", False, None), ("source_info", 5, "SourceInfo", False, None),
    ],
    "CheckedExpr.ReferenceMapEntry": [("key", 1, "int64", False, None), ("value", 2, "Reference", False, None)],
    "CheckedExpr.TypeMapEntry": [("key", 1, "int64", False, None), ("value", 2, "Type", False, None)],
}
_MAP_ENTRIES = {"SourceInfo.PositionsEntry", "CheckedExpr.ReferenceMapEntry", "CheckedExpr.TypeMapEntry"}
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}


@functools.cache
def _checked_expr_class() -> Any:
    file = descriptor_pb2.FileDescriptorProto(name="dratwin_cel_checked.proto", package="cel.expr", syntax="proto3")
    declared: dict[str, descriptor_pb2.DescriptorProto] = {}
    for name in _SCHEMA:  # parents come before their nested types in the table
        outer, _, inner = name.rpartition(".")
        message = declared[outer].nested_type.add(name=inner) if outer else file.message_type.add(name=name)
        declared[name] = message
        if name in _MAP_ENTRIES:
            message.options.map_entry = True
    for name, fields in _SCHEMA.items():
        message = declared[name]
        if any(oneof is not None for *_, oneof in fields):
            message.oneof_decl.add(name="kind")
        for field_name, number, type_name, repeated, oneof in fields:
            entry = message.field.add(name=field_name, number=number,
                                      label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
            if type_name in _SCALARS:
                entry.type = _SCALARS[type_name]
            else:
                entry.type = _F.TYPE_MESSAGE
                entry.type_name = f".cel.expr.{type_name}"
            if oneof is not None:
                entry.oneof_index = oneof
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr"))


# ---- the tree ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CelType:
    """A checked type: ``kind`` is dyn, bool, int, uint, double, string, bytes, null, list, map, message
    (``name`` is the message, e.g. kubernetes.Quantity), abstract (``name``: optional_type, ...), type_param,
    type, error, wrapper or well_known; ``params`` are the element types of lists, maps and abstract types."""

    kind: str
    name: str = ""
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        if self.kind in ("list", "map") or (self.kind == "abstract" and self.params):
            inner = ", ".join(map(str, self.params))
            return f"{self.name or self.kind}({inner})"
        return self.name or self.kind


DYN = CelType("dyn")


@dataclass(frozen=True, slots=True)
class Expr:
    id: int
    offset: int  # 0-based position in the compiled text; -1 when unknown


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    value: object  # None, bool, int, float, str or bytes
    kind: str  # null, bool, int, uint, double, string, bytes


@dataclass(frozen=True, slots=True)
class Ident(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(frozen=True, slots=True)
class Call(Expr):
    function: str
    target: Expr | None
    args: tuple[Expr, ...]
    overloads: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ListExpr(Expr):
    elements: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class MapExpr(Expr):
    entries: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, slots=True)
class StructExpr(Expr):
    message: str
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class Comprehension(Expr):
    iter_var: str
    iter_var2: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


@dataclass(frozen=True)
class CheckedAst:
    root: Expr
    types: dict[int, CelType] = field(default_factory=dict)

    def type_of(self, node: Expr) -> CelType:
        return self.types.get(node.id, DYN)


def checked_ast(serialized: bytes) -> CheckedAst:
    """The tree of ``Expression.serialize()``; ValueError when the bytes are not a CheckedExpr."""
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    if not wrapper.type_url.endswith("cel.expr.CheckedExpr"):
        raise ValueError(f"not a checked CEL expression: {wrapper.type_url}")
    message = _checked_expr_class()()
    message.ParseFromString(wrapper.value)
    positions = dict(message.source_info.positions)
    overloads = {key: tuple(ref.overload_id) for key, ref in message.reference_map.items()}
    types = {key: _type(value) for key, value in message.type_map.items()}
    return CheckedAst(_Builder(positions, overloads).expr(message.expr), types)


def _type(message: Any) -> CelType:
    kind = message.WhichOneof("kind")
    if kind == "primitive":
        return CelType(_PRIMITIVES.get(message.primitive, "dyn"))
    if kind == "list_type":
        return CelType("list", params=(_type(message.list_type.elem_type),))
    if kind == "map_type":
        return CelType("map", params=(_type(message.map_type.key_type), _type(message.map_type.value_type)))
    if kind == "message_type":
        return CelType("message", message.message_type)
    if kind == "abstract_type":
        abstract = message.abstract_type
        return CelType("abstract", abstract.name, tuple(_type(p) for p in abstract.parameter_types))
    if kind == "type_param":
        return CelType("type_param", message.type_param)
    if kind == "type":
        return CelType("type", params=(_type(message.type),))
    if kind == "well_known":
        return CelType(kind, _WELL_KNOWN.get(message.well_known, ""))
    if kind in ("null", "error", "wrapper"):
        return CelType(kind)
    return DYN


class _Builder:
    def __init__(self, positions: dict[int, int], overloads: dict[int, tuple[str, ...]]) -> None:
        self.positions = positions
        self.overloads = overloads

    def expr(self, message: Any) -> Expr:
        node_id, offset = int(message.id), self.positions.get(message.id, -1)
        kind = message.WhichOneof("kind")
        if kind == "const_expr":
            value, literal_kind = _constant(message.const_expr)
            return Literal(node_id, offset, value, literal_kind)
        if kind == "ident_expr":
            return Ident(node_id, offset, message.ident_expr.name)
        if kind == "select_expr":
            select = message.select_expr
            return Select(node_id, offset, self.expr(select.operand), select.field, select.test_only)
        if kind == "call_expr":
            call = message.call_expr
            target = self.expr(call.target) if call.HasField("target") else None
            return Call(node_id, offset, call.function, target, tuple(self.expr(a) for a in call.args),
                        self.overloads.get(message.id, ()))
        if kind == "list_expr":
            return ListExpr(node_id, offset, tuple(self.expr(e) for e in message.list_expr.elements))
        if kind == "struct_expr":
            return self._struct(node_id, offset, message.struct_expr)
        if kind == "comprehension_expr":
            c = message.comprehension_expr
            return Comprehension(node_id, offset, c.iter_var, c.iter_var2, self.expr(c.iter_range), c.accu_var,
                                 self.expr(c.accu_init), self.expr(c.loop_condition), self.expr(c.loop_step),
                                 self.expr(c.result))
        return Literal(node_id, offset, None, "null")  # an empty node: only in malformed input

    def _struct(self, node_id: int, offset: int, struct: Any) -> Expr:
        if struct.message_name:
            fields = tuple((e.field_key, self.expr(e.value)) for e in struct.entries)
            return StructExpr(node_id, offset, struct.message_name, fields)
        entries = tuple((self.expr(e.map_key), self.expr(e.value)) for e in struct.entries)
        return MapExpr(node_id, offset, entries)


def _constant(constant: Any) -> tuple[object, str]:
    kind = constant.WhichOneof("kind")
    if kind == "bool_value":
        return bool(constant.bool_value), "bool"
    if kind == "int64_value":
        return int(constant.int64_value), "int"
    if kind == "uint64_value":
        return int(constant.uint64_value), "uint"
    if kind == "double_value":
        return float(constant.double_value), "double"
    if kind == "string_value":
        return str(constant.string_value), "string"
    if kind == "bytes_value":
        return bytes(constant.bytes_value), "bytes"
    return None, "null"


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``node``, in source order."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return (node.target, *node.args) if node.target is not None else node.args
    if isinstance(node, ListExpr):
        return node.elements
    if isinstance(node, MapExpr):
        return tuple(part for entry in node.entries for part in entry)
    if isinstance(node, StructExpr):
        return tuple(value for _, value in node.fields)
    if isinstance(node, Comprehension):
        return (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
    return ()


def walk(node: Expr) -> list[Expr]:
    """Every node of the tree, parents before children."""
    found: list[Expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(reversed(children(current)))
    return found
