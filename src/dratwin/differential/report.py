"""Writing what a differential run found: one case file per disagreement, and the summary.

A disagreement is written as a conformance-format case whose ``expect`` is upstream's answer, so
that the conformance runner (or ``dratwin allocate``) reproduces it on its own. The header comments
say what differs, which upstream variant answered, how long each side took, and dratwin's answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dratwin.differential.casefile import Case, write_case
from dratwin.differential.compare import AGREE, CATEGORIES, TIMEOUT, expect_from_answer
from dratwin.differential.judge import CRASH, ORACLE_FAILED, ORDER_DEPENDENT, Judgement

DISAGREEMENTS = "disagreements"
ORDER_DEPENDENT_DIR = "order-dependent"
SUMMARY_ORDER = (AGREE, ORDER_DEPENDENT, *CATEGORIES, CRASH, ORACLE_FAILED)


def slug(category: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


def case_comments(case: Case, judgement: Judgement, dratwin: Mapping[str, Any], module: str) -> list[str]:
    upstream = judgement.upstream
    lines = [
        f"{case['name']}: {case.get('source', '')}",
        f"{judgement.category}: dratwin and upstream ({module or 'k8s.io/dynamic-resource-allocation'}) disagree"
        if judgement.is_disagreement
        else f"{judgement.category}: upstream's answer depends on the order of the pools",
        *(f"  {problem}" for problem in judgement.problems),
        f"expect = upstream's {judgement.variant} variant (structured.NewAllocator's choice for these features), "
        f"{upstream.get('steps', 0)} search steps, {float(upstream.get('seconds', 0.0)):.3f} s",
    ]
    if upstream.get("error"):
        lines.append(f"upstream error: {upstream['error']}")
    if judgement.variants_disagree:
        lines.append(f"upstream's other variants answer differently: {', '.join(judgement.variants_disagree)}")
    if len(judgement.alternatives) > 1:
        lines.append(f"upstream's answers over {upstream.get('runs', 0)} pool orders:")
        lines += [f"  {_short(a)}" for a in judgement.alternatives]
        lines.append("dratwin's answer is " + ("one of them" if judgement.dratwin_matches_one else "none of them"))
    lines.append(f"dratwin ({float(dratwin.get('seconds', 0.0)):.3f} s): {_short(dratwin)}")
    if dratwin.get("traceback"):
        lines += ["dratwin's traceback (innermost last):", *str(dratwin["traceback"]).rstrip().splitlines()[-8:]]
    lines.append("Order of devices within a claim is not significant unless the claim expectation has 'config'.")
    return lines


def _short(answer: Mapping[str, Any]) -> str:
    result = str(answer.get("result"))
    if result in ("error", TIMEOUT, CRASH):
        return f"{result}: {answer.get('error', '')}"
    if result != "allocated":
        return result
    claims = []
    for key, allocation in (answer.get("allocations") or {}).items():
        devices = [
            f"{d.get('request')}->{d.get('driver')}/{d.get('pool')}/{d.get('device')}"
            for d in (allocation.get("devices") or {}).get("results") or []
        ]
        claims.append(f"{key.split('/')[-1]}: {', '.join(devices) or 'no devices'}")
    return "allocated " + "; ".join(claims)


def write_finding(
    folder: Path, case: Case, judgement: Judgement, dratwin: Mapping[str, Any], module: str
) -> Path | None:
    """Write a disagreement (or an order-dependent case) as a case file; None for agreements."""
    if judgement.is_disagreement and judgement.category != ORACLE_FAILED:
        path = folder / DISAGREEMENTS / slug(judgement.category) / f"{case['name']}.yaml"
    elif judgement.category == ORDER_DEPENDENT:
        path = folder / ORDER_DEPENDENT_DIR / f"{case['name']}.yaml"
    else:
        return None
    written = dict(case)
    written["expect"] = expect_from_answer(judgement.upstream)
    return write_case(path, written, case_comments(case, judgement, dratwin, module))


@dataclass
class Tally:
    """Counts and case names per category, for the summary."""

    categories: Counter[str] = field(default_factory=Counter)
    variants: Counter[str] = field(default_factory=Counter)
    names: dict[str, list[str]] = field(default_factory=dict)
    order_dependent_unmatched: list[str] = field(default_factory=list)
    variants_disagree: int = 0
    dratwin_seconds: list[tuple[float, str]] = field(default_factory=list)
    upstream_seconds: list[tuple[float, str]] = field(default_factory=list)

    def add(self, name: str, judgement: Judgement, dratwin: Mapping[str, Any]) -> None:
        self.categories[judgement.category] += 1
        self.variants[judgement.variant or "none"] += 1
        self.names.setdefault(judgement.category, []).append(name)
        if judgement.category == ORDER_DEPENDENT and not judgement.dratwin_matches_one:
            self.order_dependent_unmatched.append(name)
        self.variants_disagree += bool(judgement.variants_disagree)
        self.dratwin_seconds.append((float(dratwin.get("seconds", 0.0)), name))
        self.upstream_seconds.append((float(judgement.upstream.get("seconds", 0.0)), name))

    @property
    def disagreements(self) -> int:
        return sum(n for category, n in self.categories.items() if category not in (AGREE, ORDER_DEPENDENT))


def summary_lines(tally: Tally, header: str, folder: Path) -> list[str]:
    total = sum(tally.categories.values())
    lines = [header, "  variant upstream picked: " + ", ".join(f"{v} {n}" for v, n in sorted(tally.variants.items()))]
    for category in SUMMARY_ORDER:
        count = tally.categories.get(category, 0)
        note = ""
        if category == ORDER_DEPENDENT:
            matched = count - len(tally.order_dependent_unmatched)
            note = f"  skipped: stable's pool order is random; dratwin gives one of upstream's answers in {matched}"
        lines.append(f"  {category:<16} {count:>6}{note}")
    lines.append(f"  (upstream's variants answer differently from each other in {tally.variants_disagree} of {total})")
    lines.append(f"  time: dratwin {sum(s for s, _ in tally.dratwin_seconds):.1f} s, "
                 f"upstream {sum(s for s, _ in tally.upstream_seconds):.1f} s (the picked variant's Allocate calls)")
    slowest = sorted(tally.dratwin_seconds, reverse=True)[:3]
    if slowest:
        lines.append("  slowest for dratwin: " + ", ".join(f"{name} {s:.2f} s" for s, name in slowest))
    where = folder / DISAGREEMENTS
    lines.append(f"{tally.disagreements} disagreements" + (f", written to {where}/" if tally.disagreements else ""))
    return lines


def write_summary(path: Path, tally: Tally, extra: Mapping[str, Any]) -> None:
    body = {
        **extra,
        "counts": dict(tally.categories),
        "variants": dict(tally.variants),
        "disagreements": tally.disagreements,
        "orderDependentUnmatched": tally.order_dependent_unmatched,
        "cases": {category: names for category, names in tally.names.items() if category != AGREE},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
