"""Large inputs: the fast path reads what the exact reader reads, and errors still name the right line."""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.builders.inputs import large_manifest, line_of

from dratwin.api import yaml_fast
from dratwin.api.codec import dump_json, dump_yaml, format_json, write_list
from dratwin.api.loader import load_text
from dratwin.api.validation import validate_objects
from dratwin.api.yaml_reader import read_documents
from dratwin.cluster.generate import generate_groups
from dratwin.cluster.generate_options import NodeGroup
from dratwin.errors import InputError


def test_a_large_list_dump_is_read_natively_with_the_lines_of_its_entries() -> None:
    text = large_manifest()
    assert yaml_fast.read_fast(text) is not None
    objects = load_text(text, "dump.yaml")
    assert len(objects) == 3000
    entry = objects[2345]
    assert entry.name == "config-2345"
    assert entry.source.line == line_of(text, "name: config-2345") - 3  # the line of its "- apiVersion"
    assert entry.line_of(("data", "note")) == line_of(text, "name: config-2345") + 7
    assert entry.line_of(("metadata", "labels", "nope")) == line_of(text, "name: config-2345") + 2


def test_an_error_deep_in_a_generated_dump_names_its_line() -> None:
    cluster = generate_groups([NodeGroup("p5.48xlarge", 14)])
    buffer = io.StringIO()
    write_list(iter(cluster.objects), buffer)
    text = buffer.getvalue()
    target = cluster.slices[-3]["metadata"]["name"]
    start = text.index(f"name: {target}")
    bad = text.index("dra.net/numaNode:", start)
    text = text[:bad] + "dra.net/numa..node:" + text[bad + len("dra.net/numaNode:"):]
    assert len(text) > yaml_fast.FAST_MIN_CHARS and yaml_fast.read_fast(text) is not None
    problems = [p for p in validate_objects(load_text(text, "cluster.yaml"), None) if p.is_error]
    assert [(p.object, p.line) for p in problems] == [(f"ResourceSlice {target}", line_of(text, "dra.net/numa..node:"))]


def test_documents_and_lists_read_alike() -> None:
    text = large_manifest(entries=40)
    as_documents = "---\n".join(dump_yaml([o.raw]) for o in load_text(text))
    assert [o.raw for o in load_text(as_documents)] == [o.raw for o in load_text(text)]


# ---- keys go-yaml types: the exact reader reads them -----------------------------------------------


@dataclass
class KeyCase:
    name: str
    extra: str  # written inside one entry of a large dump
    native: bool  # whether the fast path still reads it


KEY_CASES = [
    KeyCase("boolean-key", "  data2:\n    yes: 1\n", native=False),
    KeyCase("boolean-key-in-a-sequence-entry", "  list:\n  - on: 1\n", native=False),
    KeyCase("null-key", "  data2:\n    ~: 1\n", native=False),
    KeyCase("quoted-boolean-key", "  data2:\n    'yes': 1\n", native=False),  # a string either way, read exactly
    KeyCase("word-ending-like-one", "  data2:\n    generation: 1\n    version: 2\n    policy: 3\n", native=True),
    KeyCase("in-a-comment", "  # no: this is a comment\n", native=True),
    KeyCase("inside-a-quoted-value", "  note2: 'a yes: b'\n", native=True),
]


def _read(text: str) -> list[Any] | str:
    try:
        return [o.raw for o in load_text(text)]
    except InputError as error:
        return str(error)


@pytest.mark.parametrize("case", KEY_CASES, ids=[c.name for c in KEY_CASES])
def test_keys_go_yaml_types_leave_the_fast_path(case: KeyCase, monkeypatch: pytest.MonkeyPatch) -> None:
    text = large_manifest(extra=case.extra)
    assert (yaml_fast.read_fast(text) is not None) == case.native
    read = _read(text)
    monkeypatch.setattr(yaml_fast, "FAST_MIN_CHARS", len(text) + 1)
    assert read == _read(text)  # the exact reader's objects, or its error (a null key is refused)


# ---- the fast path agrees with the exact reader --------------------------------------------------


def test_both_paths_give_the_same_objects_sources_and_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# head\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: a\n---\n---\n" + large_manifest()
    assert yaml_fast.read_fast(text) is not None
    fast = load_text(text, "m.yaml")
    monkeypatch.setattr(yaml_fast, "FAST_MIN_CHARS", len(text) + 1)
    exact = load_text(text, "m.yaml")
    assert [(o.raw, o.source) for o in fast] == [(o.raw, o.source) for o in exact]
    for path in [("metadata", "name"), ("data", "note"), ("metadata", "labels", "tier")]:
        assert [o.line_of(path) for o in fast[::250]] == [o.line_of(path) for o in exact[::250]]


TOKENS = [
    "yes", "no", "y", "n", "on", "off", "True", "TRUE", "true", "false", "~", "null", "Null", "", "017", "08",
    "0x1F", "0o17", "0b101", "1_000", "+1", "-0", "1e3", "1.5e3", "1.", ".5", "1:20", "10.0.0.1", "9.0.0",
    "2026-01-02", "2026-01-02T03:04:05Z", "1.5", "42", "-7", "12345678901234567890", ".inf", ".nan", "<<",
    "'yes'", "'017'", '"1"', "'a: b'", "plain words", "é-unicode", "a#b", "x:y", "[]", "{}", "[1, 2]",
    "!!str 1", "&a 1", "*a", "|", "- x", "@x", "%x", "a: b",
]


@st.composite
def documents(draw: st.DrawFn) -> str:
    # Keys in number forms JSON lacks (1.0, 0x10) are the one difference the fast path leaves (yaml_fast).
    keys = draw(st.lists(st.sampled_from(["a", "b", "kind", "1", "-2", "yes", "on", "true", "~", "x-y", "'q'", "n"]),
                         min_size=1, max_size=4))
    lines = []
    for key in keys:
        if draw(st.booleans()):
            lines.append(f"{key}: {draw(st.sampled_from(TOKENS))}")
        else:
            lines.append(f"{key}:")
            lines += [f"- {draw(st.sampled_from(TOKENS))}" for _ in range(draw(st.integers(1, 3)))]
    return "\n".join(lines) + "\n"


def _exact(text: str) -> list[Any] | InputError:
    try:
        return [d.value for d in read_documents(text, "t.yaml") if d.value is not None]
    except InputError as error:
        return error


@given(st.lists(documents(), min_size=1, max_size=3))
@settings(max_examples=300, deadline=None)
def test_the_fast_path_reads_what_the_exact_reader_reads(texts: list[str]) -> None:
    text = "---\n".join(texts)
    saved, yaml_fast.FAST_MIN_CHARS = yaml_fast.FAST_MIN_CHARS, 0
    try:
        fast = yaml_fast.read_fast(text)
    finally:
        yaml_fast.FAST_MIN_CHARS = saved
    if fast is None:
        return  # the exact reader reads it
    exact = _exact(text)
    assert not isinstance(exact, InputError), f"fast path accepted what the exact reader refuses: {exact}"
    assert [d.value for d in fast] == exact, text


# ---- output --------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_json_output_is_the_standard_librarys_text(value: Any) -> None:
    assert format_json(value) == json.dumps(value, indent=4, ensure_ascii=False, default=str)


def test_json_output_keeps_nan_as_the_standard_library_writes_it() -> None:
    assert format_json({"x": math.nan}) == json.dumps({"x": math.nan}, indent=4)


@dataclass(frozen=True)
class Streamed:
    name: str
    objects: list[dict[str, Any]]


STREAMED = [
    Streamed("a generated cluster",
             generate_groups([NodeGroup("p5.48xlarge", 2), NodeGroup("g6e.12xlarge", 1)]).objects),
    Streamed("nothing", []),
    Streamed("literal blocks and nesting", [{"a": "x\n\n  y\n", "b": {"c": [1, {"d": "e"}, []]}, "e": {}}]),
]


@pytest.mark.parametrize("case", STREAMED, ids=[c.name for c in STREAMED])
@pytest.mark.parametrize("output", ["yaml", "json"])
def test_a_streamed_list_is_the_text_of_the_whole_list(case: Streamed, output: str) -> None:
    buffer = io.StringIO()
    write_list(iter(case.objects), buffer, output)
    whole = {"apiVersion": "v1", "items": case.objects, "kind": "List", "metadata": {"resourceVersion": ""}}
    assert buffer.getvalue() == (dump_json([whole]) if output == "json" else dump_yaml([whole]))
