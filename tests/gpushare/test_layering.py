"""The GPU-sharing cores sit below the scheduler, the simulation and the trace replay: the layers import only
downwards, so the scheduler's score plugins and the simulation never pull in the trace readers."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import dratwin

SOURCE = Path(dratwin.__file__).parent


@dataclass(frozen=True)
class LayerCase:
    name: str
    package: str
    forbidden: tuple[str, ...]


CASES = [
    LayerCase("gpushare imports no layer above it", "gpushare",
              ("dratwin.trace", "dratwin.scheduler", "dratwin.sim", "dratwin.scenario", "dratwin.cli")),
    LayerCase("the scheduler does not import the trace", "scheduler", ("dratwin.trace",)),
    LayerCase("the simulation does not import the trace", "sim", ("dratwin.trace",)),
]


def imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_layers_import_only_downwards(case: LayerCase) -> None:
    files = sorted((SOURCE / case.package).rglob("*.py"))
    assert files, f"no module under {case.package}"
    offending = [
        f"{path.relative_to(SOURCE)} imports {module}"
        for path in files
        for module in imported_modules(path)
        if any(module == prefix or module.startswith(prefix + ".") for prefix in case.forbidden)
    ]
    assert offending == []
