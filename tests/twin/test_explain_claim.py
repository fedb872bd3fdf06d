"""``dratwin explain claim/NS/NAME`` speaks of a ResourceClaim of its own as a claim, never as a pod's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.builders.manifests import gpu_class, gpu_request, gpu_slice, manifest, node, pod, resource_claim

from dratwin.cli.main import main

CASES = [
    ("allocated", [pod("p", claims={"gpu": "shared"})], "claim default/shared: Allocated"),
    ("unused", [], "claim default/shared: Pending"),
]


@pytest.mark.parametrize(("pods", "first_line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_standalone_claim_is_called_a_claim(
    pods: list[dict[str, object]], first_line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cluster.yaml"
    objects = [gpu_class(), node("n1"), gpu_slice("n1", 1), resource_claim("shared", gpu_request()), *pods]
    path.write_text(manifest(*objects))
    main(["explain", "claim/default/shared", "-f", str(path)])
    text = capsys.readouterr().out
    assert text.splitlines()[0] == first_line
    assert "pod claim" not in text
    main(["explain", "claim/default/shared", "-f", str(path), "-o", "json"])
    body = json.loads(capsys.readouterr().out)
    assert body["claim"] == "default/shared" and "pod" not in body
