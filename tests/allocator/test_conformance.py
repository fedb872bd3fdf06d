"""The upstream-derived allocator conformance suite, run in-process through the ``allocate`` command.

Each case in conformance/ (the converted upstream table, its DRAListTypeAttributes extension and the
random cases labelled by upstream) is fed to ``dratwin allocate ... -o json`` exactly as the suite's
own runner does, and compared with the runner's own comparison functions, so that ``make test`` checks
the same contract as ``conformance/run``. Cases under ``$DRATWIN_SHARED/conformance`` are run too.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import io
import json
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import CONFORMANCE, shared_folder

from dratwin.cli.main import main

FOLDERS = ("allocator", "allocator-listtypeattributes", "random")


def _cases() -> list[Path]:
    """The repository's cases, then those of the reference folder that the repository does not hold."""
    cases = [path for folder in FOLDERS for path in sorted((CONFORMANCE / folder).glob("*.yaml"))]
    shared = shared_folder()
    if shared is not None:
        known = {(p.parent.name, p.name) for p in cases}
        extra = sorted((shared / "conformance").glob("*/*.yaml"))
        cases += [p for p in extra if (p.parent.name, p.name) not in known]
    return cases


CASES = _cases()


def _runner() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("conformance_run", str(CONFORMANCE / "run"))
    spec = importlib.util.spec_from_loader("conformance_run", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


RUNNER = _runner()


def _allocate(case: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    objects = tmp_path / "objects.yaml"
    objects.write_text(yaml.safe_dump_all(case["objects"], sort_keys=False))
    enabled = set(case.get("features") or [])
    gates = [
        f"{gate}={'true' if feature in enabled else 'false'}"
        for feature, names in RUNNER.GATES.items()
        for gate in names
    ]
    argv = ["allocate", "-f", str(objects), "--node", case["node"]]
    for claim in case.get("allocate") or []:
        argv += ["--claim", f"default/{claim}"]
    argv += ["--feature-gates", ",".join(gates), "--skip-validation", "-o", "json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv)
    return dict(json.loads(out.getvalue()))


def test_the_suite_is_there() -> None:
    counts = {folder: len(list((CONFORMANCE / folder).glob("*.yaml"))) for folder in FOLDERS}
    assert counts == {"allocator": 132, "allocator-listtypeattributes": 14, "random": 300}


@pytest.mark.conformance
@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_conformance_case(path: Path, tmp_path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    output = _allocate(case, tmp_path)
    expect = case["expect"]
    assert output.get("result") == expect["result"], output.get("error")
    if expect["result"] != "allocated":
        return
    allocations = output.get("allocations") or {}
    problems: list[str] = []
    for claim, want in (expect.get("allocations") or {}).items():
        problems += RUNNER.compare_claim(claim, want, allocations.get(f"default/{claim}"))
    extra = {key.split("/")[-1] for key in allocations} - set(expect.get("allocations") or {})
    assert not extra, f"unexpected allocations {sorted(extra)}"
    assert not problems, problems
