"""The upstream benchmark group on a small cluster; without Go it reports dratwin's figures only."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dratwin.benchmarks import upstream_bench


def test_preallocated_claims_fill_random_nodes_without_overfilling() -> None:
    claims = upstream_bench.preallocated_claims(45, nodes=5)
    assert claims == upstream_bench.preallocated_claims(45, nodes=5)
    per_node = Counter(c["status"]["allocation"]["devices"]["results"][0]["pool"] for c in claims)
    assert sum(per_node.values()) == 45 and max(per_node.values()) <= upstream_bench.DEVICES
    devices = {(r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]}
    assert len(devices) == 45


def test_claims_carry_the_api_servers_defaults() -> None:
    shape = upstream_bench.SHAPES[-1]
    claim = upstream_bench.objects_for(shape, nodes=2)[-1]
    for request in claim["spec"]["devices"]["requests"]:
        assert request["exactly"]["allocationMode"] == "ExactCount" and request["exactly"]["count"] == 1
    assert claim["spec"]["devices"]["constraints"]


def test_without_go_only_dratwin_is_measured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(upstream_bench, "_oracle", lambda: (None, "no Go oracle (Go is not installed)"))
    results = upstream_bench.run(repeats=1, min_repeat_s=0.0001, shapes=upstream_bench.SHAPES[:2], nodes=4)
    assert [r.name for r in results] == ["upstream.empty_500nodes.dratwin", "upstream.half_500nodes.dratwin"]
    assert all(r.value > 0 and "Go is not installed" in r.detail for r in results)
    assert "reporting dratwin only" in capsys.readouterr().err


def test_with_an_oracle_each_shape_has_go_and_the_ratio(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[dict[str, object]] = []

    def fake_bench(binary: Path, spec: dict[str, object]) -> dict[str, object]:
        seen.append(spec)
        return {"perCallNs": [2000.0, 2000.0], "number": 10, "allocatedNodes": ["node-0", "node-1"],
                "variant": "incubating", "module": "m v1", "goVersion": "go1.26"}

    monkeypatch.setattr(upstream_bench.oracle, "bench", fake_bench)
    results = upstream_bench.measure(upstream_bench.SHAPES[0], tmp_path / "oracle", "", repeats=1,
                                     min_repeat_s=0.0001, nodes=2)
    dratwin, go, ratio = results
    assert go.value == pytest.approx(2.0) and go.unit == "µs"
    assert ratio.value == pytest.approx(dratwin.value / go.value) and ratio.unit == "x"
    assert "both allocate on the same nodes" in dratwin.detail
    assert seen[0]["nodes"] == ["node-0", "node-1"] and seen[0]["claims"] == ["default/bench-claim"]
    assert "consumableCapacity" in seen[0]["features"]  # type: ignore[operator]
