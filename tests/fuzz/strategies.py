"""Hypothesis strategies for hostile and mutated input: text, YAML shapes, mutated real manifests, CEL.

Seeds are the repository's own manifests (examples/, tests/data/drivers/) and the objects of the
allocator conformance cases, so mutations start from what users and upstream really write and stray
from it one edit at a time: a key dropped or renamed, a value of the wrong type, null, an empty or huge
value, deeper nesting, an older apiVersion.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from tests.fuzz.harness import FuzzInput

REPO = Path(__file__).resolve().parents[2]
Json = Any

KEYS = ["apiVersion", "kind", "metadata", "name", "namespace", "spec", "status", "devices", "requests",
        "exactly", "deviceClassName", "count", "allocationMode", "selectors", "cel", "expression",
        "constraints", "matchAttribute", "firstAvailable", "driver", "pool", "nodeName", "attributes",
        "capacity", "sharedCounters", "consumesCounters", "containers", "resources", "claims",
        "resourceClaims", "resourceClaimTemplateName", "template", "replicas", "labels", "value", "string",
        "int", "bool", "version", "results", "allocation", "taints", "tolerations", "requirements"]
API_VERSIONS = ["v1", "resource.k8s.io/v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2",
                "resource.k8s.io/v1alpha3", "apps/v1", "batch/v1", "karpenter.sh/v1", "karpenter.k8s.aws/v1",
                "scheduling.k8s.io/v1alpha1", "kueue.x-k8s.io/v1beta1", "example.com/v1"]
KINDS = ["Pod", "Node", "Namespace", "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
         "DeviceTaintRule", "Deployment", "Job", "StatefulSet", "NodePool", "NodeClaim", "EC2NodeClass", "List",
         "Workload", "ComputeDomain", "MPIJob"]


@functools.cache
def seed_objects() -> tuple[Json, ...]:
    """Every object of the repository's manifests and a sample of conformance cases, as plain data."""
    found: list[Json] = []
    files = sorted((REPO / "examples").rglob("*.yaml")) + sorted((REPO / "tests" / "data" / "drivers").glob("*.yaml"))
    for path in files:
        if "karpenter-dra-instance" in path.name:
            continue
        found += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    for path in sorted((REPO / "conformance" / "random").glob("*.yaml"))[::15]:
        found += yaml.safe_load(path.read_text())["objects"]
    return tuple(found)


def scalars() -> st.SearchStrategy[Json]:
    return st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
        st.sampled_from(["", "0", "1.5.5Gi", "abc", "-1", "40GB", "9.0", "1e309", "gpu.nvidia.com", "*", "~"]),
    )


def values(depth: int = 3) -> st.SearchStrategy[Json]:
    keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=8))
    return st.recursive(scalars(), lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=12 if depth else 1)


def objects() -> st.SearchStrategy[Json]:
    """A value shaped like a Kubernetes object, with arbitrary content."""
    return st.fixed_dictionaries(
        {"apiVersion": st.sampled_from(API_VERSIONS), "kind": st.sampled_from(KINDS)},
        optional={"metadata": st.one_of(values(), st.fixed_dictionaries({"name": st.text(max_size=20)})),
                  "spec": values(), "status": values()},
    )


def _paths(value: Json, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _set(root: Json, path: tuple[Any, ...], new: Json) -> Json:
    if not path:
        return new
    parent = root
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = new
    return root


def _get(root: Json, path: tuple[Any, ...]) -> Json:
    for part in path:
        root = root[part]
    return root


MUTATIONS: list[str] = ["drop", "replace", "null", "rename", "wrap", "empty", "huge", "duplicate", "version"]


@st.composite
def mutated(draw: st.DrawFn, count: int = 3) -> Json:
    """A seed object with one to ``count`` random edits."""
    obj = copy.deepcopy(draw(st.sampled_from(seed_objects())))
    for _ in range(draw(st.integers(1, count))):
        path = draw(st.sampled_from(_paths(obj)))
        edit = draw(st.sampled_from(MUTATIONS))
        current = _get(obj, path)
        if edit == "drop" and path:
            parent = _get(obj, path[:-1])
            del parent[path[-1]]
        elif edit == "replace":
            obj = _set(obj, path, draw(values()))
        elif edit == "null":
            obj = _set(obj, path, None)
        elif edit == "rename" and path and isinstance(path[-1], str):
            parent = _get(obj, path[:-1])
            parent[draw(st.sampled_from([path[-1].lower(), path[-1] + "s", path[-1][:-1], path[-1].upper()]))] = \
                parent.pop(path[-1])
        elif edit == "wrap":
            obj = _set(obj, path, draw(st.sampled_from([[current], {"value": current}, [[current]]])))
        elif edit == "empty":
            obj = _set(obj, path, draw(st.sampled_from([{}, [], ""])))
        elif edit == "huge":
            obj = _set(obj, path, draw(st.sampled_from(["x" * 100_000, list(range(300)), 10**40])))
        elif edit == "duplicate" and isinstance(current, list) and current:
            current.extend(copy.deepcopy(current))
        elif edit == "version" and isinstance(obj, dict):
            obj["apiVersion"] = draw(st.sampled_from(API_VERSIONS))
        if not isinstance(obj, dict):
            break
    return obj


def render(value: Json, as_json: bool) -> str:
    if as_json:
        return json.dumps(value, default=str)
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


def render_all(docs: list[Json], as_json: bool) -> str:
    if as_json:
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, default=str)
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)


def _first(docs: list[Json], kind: str) -> Json | None:
    return next((d for d in docs if isinstance(d, dict) and d.get("kind") == kind), None)


def _name(doc: Json, default: str) -> str:
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else default


COMMANDS: dict[str, Callable[[list[Json]], list[str]]] = {
    "validate": lambda docs: ["validate", "-f", "{in.yaml}"],
    "validate-json": lambda docs: ["validate", "-f", "{in.yaml}", "-o", "json"],
    "schedule": lambda docs: ["schedule", "-f", "{in.yaml}", "-o", "json"],
    "explain": lambda docs: ["explain", f"pod/default/{_name(_first(docs, 'Pod') or {}, 'p')}", "-f", "{in.yaml}"],
    "plan": lambda docs: ["plan", "-f", "{in.yaml}", "-o", "json"],
    "allocate": lambda docs: ["allocate", "-f", "{in.yaml}", "--node", _name(_first(docs, "Node") or {}, "n1")],
    "simulate": lambda docs: ["simulate", "{in.yaml}", "--until", "2h", "-o", "json"],
    "allocate-raw": lambda docs: ["allocate", "-f", "{in.yaml}", "--node", _name(_first(docs, "Node") or {}, "n1"),
                                  "--skip-validation", "-o", "json"],
}


@st.composite
def cli_inputs(draw: st.DrawFn, documents: st.SearchStrategy[Json]) -> FuzzInput:
    docs = draw(st.lists(documents, min_size=1, max_size=6))
    command = draw(st.sampled_from(sorted(COMMANDS)))
    text = render_all(docs, draw(st.booleans())) if len(docs) > 1 or draw(st.booleans()) else render(docs[0], False)
    return FuzzInput(tuple(COMMANDS[command](docs)), {"in.yaml": text})


CEL_ATOMS = ['device.driver', 'device.attributes["gpu.nvidia.com"].productName', 'device.attributes["dra.net"].rdma',
             'device.capacity["gpu.nvidia.com"].memory', 'device.attributes["gpu.nvidia.com"].cudaComputeCapability',
             'device.allowMultipleAllocations', 'quantity("40Gi")', 'quantity("40GB")', 'semver("9.0.0")',
             'semver("9.0")', '"gpu.nvidia.com"', "1", "0.5", "true", "[1, 2, 3]", '{"a": 1}', "null",
             'device.attributes["x.example.com"]', "device"]
CEL_FORMS = ["{a} == {b}", "{a} < {b}", "{a}.compareTo({b}) > 0", "{a}.isGreaterThan({b})", "has({a})", "!{a}",
             "{a} && {b}", "{a} || {b}", "{a} in {b}", "size({a}) > 0", "{a}.startsWith({b})", "[{a}, {b}].all(x, x)",
             "{a}.matches({b})", "cel.bind(v, {a}, v == {b})", "{a}.?foo.orValue({b})", "({a})", "{a}[{b}]",
             "{a} + {b}", "{a} / 0 == 1", "[1,2,3].map(x, [1,2,3].map(y, [1,2,3].map(z, x*y*z))).size() > 0"]


@st.composite
def cel_expressions(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=40))
    expression = draw(st.sampled_from(CEL_ATOMS))
    for _ in range(draw(st.integers(1, 4))):
        form = draw(st.sampled_from(CEL_FORMS))
        expression = form.format(a=expression, b=draw(st.sampled_from(CEL_ATOMS)))
    return expression


def _nested(depth: int, flavour: str) -> str:
    if flavour == "json":
        return "[" * depth + "]" * depth
    if flavour == "json-object":
        return '{"a":' * depth + "1" + "}" * depth
    if flavour == "yaml-flow":
        return "a: " + "[" * depth + "]" * depth + "\n"
    return "".join(" " * i + "a:\n" for i in range(depth)) + " " * depth + "b\n"


def _bomb(levels: int, fanout: int) -> str:
    lines = [f'l0: &l0 [{", ".join(["lol"] * fanout)}]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * fanout)}]")
    return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  annotations:\n" + "\n".join(
        "    " + line for line in lines) + "\n"


HOSTILE_SNIPPETS = [
    "? [a, b]\n: c\n", "? {a: 1}\n: c\n", "1: a\n2: b\n", "apiVersion: v1\nkind: Pod\nkind: Pod\n",
    "\ufeffapiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", "apiVersion: v1\n\tkind: Pod\n",
    "--- !!python/object:os.system\nx: 1\n", "a: !!binary aGVsbG8=\n", "a: 2026-12-01\nb: 2026-12-01T10:00:00Z\n",
    "---\n---\n---\n", "# only a comment\n", "apiVersion: v1\nkind: List\nitems: 5\n",
    "apiVersion: v1\nkind: List\nitems:\n- 5\n- [a]\n", "base: &b {apiVersion: v1, kind: Namespace}\nx:\n  <<: *b\n",
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: \"\\x00\\x1b[31m\"\n", '{"apiVersion": "v1", "kind": 5}',
    "[1, 2, 3]", '"just a string"', "null", "apiVersion: [v1]\nkind: {a: b}\n", "%YAML 1.2\n---\na: 1\n",
    "a: *undefined\n", "&a [*a]\n", "a: '\n", "\x00\x01\x02", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "
    + "n" * 1_000_000 + "\n",
]


@st.composite
def hostile_texts(draw: st.DrawFn) -> str:
    """Inputs that break naive YAML/JSON handling: deep nesting, alias bombs, odd keys and tags, garbage."""
    kind = draw(st.sampled_from(["nested", "bomb", "snippet", "mixed"]))
    if kind == "nested":
        return _nested(draw(st.integers(50, 3000)), draw(st.sampled_from(["json", "json-object", "yaml-flow",
                                                                          "yaml-block"])))
    if kind == "bomb":
        return _bomb(draw(st.integers(2, 9)), draw(st.integers(2, 12)))
    if kind == "snippet":
        return draw(st.sampled_from(HOSTILE_SNIPPETS))
    parts = draw(st.lists(st.sampled_from(HOSTILE_SNIPPETS[:20]), min_size=2, max_size=4))
    return "\n---\n".join(parts)


def _node(name: str) -> Json:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


@st.composite
def _partitionable_slices(draw: st.DrawFn, node: str) -> list[Json]:
    """GPUs offered whole or in parts that consume a shared counter set per GPU, in one or two slices."""
    gpus = draw(st.integers(1, 3))
    budget = draw(st.integers(4, 16))
    counters = [{"name": f"{node}-gpu-{g}", "counters": {"mem": {"value": str(budget)}}} for g in range(gpus)]
    devices: list[Json] = []
    for g in range(gpus):
        whole = [{"counterSet": f"{node}-gpu-{g}", "counters": {"mem": {"value": str(budget)}}}]
        devices.append({"name": f"gpu-{g}", "attributes": {"type": {"string": "gpu"}}, "consumesCounters": whole})
        for k in range(draw(st.integers(1, 7))):
            size = draw(st.integers(1, budget))
            devices.append({"name": f"gpu-{g}-part-{k}", "attributes": {"type": {"string": "part"},
                                                                        "size": {"int": size}},
                            "consumesCounters": [{"counterSet": f"{node}-gpu-{g}",
                                                  "counters": {"mem": {"value": str(size)}}}]})
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    meta = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice"}
    return [{**meta, "metadata": {"name": f"{node}-counters"},
             "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": pool, "sharedCounters": counters}},
            {**meta, "metadata": {"name": f"{node}-devices"},
             "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": pool, "devices": devices}}]


@st.composite
def scheduling_scenarios(draw: st.DrawFn) -> list[Json]:
    """A valid small cluster of partitionable GPUs and pods whose claims ask for parts of them."""
    docs: list[Json] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}]
    for n in range(draw(st.integers(1, 3))):
        docs += [_node(f"n{n}"), *draw(_partitionable_slices(f"n{n}"))]
    for p in range(draw(st.integers(1, 6))):
        requests = []
        for r in range(draw(st.integers(1, 3))):
            selector = draw(st.sampled_from(['device.attributes["gpu.example.com"].type == "part"',
                                             'device.attributes["gpu.example.com"].type == "gpu"',
                                             'device.attributes["gpu.example.com"].size >= 2']))
            requests.append({"name": f"r{r}", "exactly": {"deviceClassName": "gpu", "count": draw(st.integers(1, 3)),
                                                          "selectors": [{"cel": {"expression": selector}}]}})
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": f"t{p}", "namespace": "default"},
                     "spec": {"spec": {"devices": {"requests": requests}}}})
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{p}", "namespace": "default"},
                     "spec": {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": f"t{p}"}],
                              "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}]}})
    return docs


TRACE = REPO / "tests" / "data" / "trace"
CSV_EDITS = ["drop-cell", "garbage-cell", "negative", "huge", "drop-line", "extra-cell", "empty-file", "bom"]


@st.composite
def trace_folders(draw: st.DrawFn) -> dict[str, str]:
    """The repository's small Alibaba-format trace with a few edits to its CSV cells, lines and files."""
    files = {name: (TRACE / name).read_text(encoding="utf-8") for name in ("node_list.csv", "pod_list.csv")}
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(sorted(files)))
        lines = files[name].splitlines()
        edit = draw(st.sampled_from(CSV_EDITS))
        row = draw(st.integers(0, max(len(lines) - 1, 0)))
        cells = lines[row].split(",") if lines else [""]
        column = draw(st.integers(0, len(cells) - 1))
        if edit == "empty-file":
            lines = []
        elif edit == "drop-line" and lines:
            del lines[row]
        elif edit == "bom":
            lines = ["\ufeff" + "\n".join(lines)]
        else:
            cells[column] = {"drop-cell": "", "garbage-cell": draw(st.text(max_size=12)), "negative": "-5",
                             "huge": "9" * 40, "extra-cell": cells[column] + ",x"}.get(edit, cells[column])
            if lines:
                lines[row] = ",".join(cells)
        files[name] = "\n".join(lines) + "\n"
    return files
