"""The trace replay benchmark: its synthetic stand-in has the published trace's size, and one run reports."""

from __future__ import annotations

import pytest

from dratwin.benchmarks import trace_bench


def test_the_synthetic_trace_has_the_published_size() -> None:
    nodes, pods = trace_bench.synthetic_trace()
    assert (len(nodes), sum(n.gpus for n in nodes), len(pods)) == (1213, 6212, 8152)
    assert trace_bench.synthetic_trace() == (nodes, pods)


def test_one_policy_runs_once_and_reports_against_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRATWIN_SHARED", raising=False)
    monkeypatch.setattr(trace_bench, "POLICY_NAMES", ("random",))
    [result] = trace_bench.run(repeats=1)
    assert result.name == "trace.replay_random" and result.unit == "s" and result.target == 5.0
    assert result.value > 0 and "synthetic trace" in result.detail
