"""The conformance comparison rules, as a table: an expectation, an answer, the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders import answer, node_selector, result

from dratwin.differential.compare import (
    AGREE,
    DEVICES,
    ERROR,
    OUTCOME,
    PLACEHOLDER_SHARE_ID,
    TIMEOUT,
    compare,
    expect_from_answer,
    quantity,
)

GPU_1 = result("req-0", "driver-a", "pool-1", "dev-1")
GPU_2 = result("req-0", "driver-a", "pool-1", "dev-2")
CONFIG = [{"source": "FromClaim", "requests": [], "opaque": {"driver": "driver-a", "parameters": {"a": 1}}}]
REGION_1 = node_selector(("region", "In", ["region-1", "region-2"]))


@dataclass(frozen=True)
class Case:
    name: str
    upstream: dict[str, Any]  # an answer, turned into the expectation with expect_from_answer
    got: dict[str, Any]
    category: str
    mentions: str = ""  # a substring of the reported problem


CASES = [
    Case("same devices in another order", answer(claims={"claim-0": [GPU_1, GPU_2]}),
         answer(claims={"claim-0": [GPU_2, GPU_1]}), AGREE),
    Case("another device", answer(claims={"claim-0": [GPU_1]}), answer(claims={"claim-0": [GPU_2]}), DEVICES,
         "claim-0: devices differ"),
    Case("one device more", answer(claims={"claim-0": [GPU_1]}), answer(claims={"claim-0": [GPU_1, GPU_2]}),
         DEVICES, "devices differ"),
    Case("admin access absent and false are alike", answer(claims={"claim-0": [GPU_1]}),
         answer(claims={"claim-0": [{**GPU_1, "adminAccess": False}]}), AGREE),
    Case("admin access differs", answer(claims={"claim-0": [GPU_1]}),
         answer(claims={"claim-0": [{**GPU_1, "adminAccess": True}]}), DEVICES),
    Case("any generated shareID matches", answer(claims={"claim-0": [{**GPU_1, "shareID": "1234"}]}),
         answer(claims={"claim-0": [{**GPU_1, "shareID": "abcd"}]}), AGREE),
    Case("a shareID where none is expected", answer(claims={"claim-0": [GPU_1]}),
         answer(claims={"claim-0": [{**GPU_1, "shareID": "abcd"}]}), DEVICES),
    Case("consumed capacity compares exact quantities",
         answer(claims={"claim-0": [{**GPU_1, "consumedCapacity": {"memory": "1Gi"}}]}),
         answer(claims={"claim-0": [{**GPU_1, "consumedCapacity": {"memory": "1024Mi"}}]}), AGREE),
    Case("consumed capacity differs",
         answer(claims={"claim-0": [{**GPU_1, "consumedCapacity": {"memory": "1Gi"}}]}),
         answer(claims={"claim-0": [{**GPU_1, "consumedCapacity": {"memory": "2Gi"}}]}), DEVICES),
    Case("binding conditions are compared",
         answer(claims={"claim-0": [{**GPU_1, "bindingConditions": ["ready"]}]}),
         answer(claims={"claim-0": [GPU_1]}), DEVICES),
    Case("with config the device order counts", answer(claims={"claim-0": [GPU_1, GPU_2]}, config={"claim-0": CONFIG}),
         answer(claims={"claim-0": [GPU_2, GPU_1]}, config={"claim-0": CONFIG}), DEVICES, "(in order)"),
    Case("config differs", answer(claims={"claim-0": [GPU_1]}, config={"claim-0": CONFIG}),
         answer(claims={"claim-0": [GPU_1]}, config={"claim-0": []}), DEVICES, "config differs"),
    Case("config where none is expected", answer(claims={"claim-0": [GPU_1]}),
         answer(claims={"claim-0": [GPU_1]}, config={"claim-0": CONFIG}), DEVICES, "unexpected config"),
    Case("node selector values are a set", answer(claims={"claim-0": [GPU_1]}, node_selector=REGION_1),
         answer(claims={"claim-0": [GPU_1]}, node_selector=node_selector(("region", "In", ["region-2", "region-1"]))),
         AGREE),
    Case("node selector differs", answer(claims={"claim-0": [GPU_1]}, node_selector=REGION_1),
         answer(claims={"claim-0": [GPU_1]}, node_selector=node_selector(("region", "In", ["region-1"]))),
         DEVICES, "nodeSelector differs"),
    Case("an allocation nobody asked for", answer(claims={"claim-0": [GPU_1]}),
         answer(claims={"claim-0": [GPU_1], "claim-1": [GPU_2]}), DEVICES, "unexpected allocations for ['claim-1']"),
    Case("a claim without allocation", answer(claims={"claim-0": [GPU_1], "claim-1": [GPU_2]}),
         answer(claims={"claim-0": [GPU_1]}), DEVICES, "claim-1: no allocation"),
    Case("allocated against unsatisfiable", answer(claims={"claim-0": [GPU_1]}), answer("unsatisfiable"), OUTCOME),
    Case("unsatisfiable against allocated", answer("unsatisfiable"), answer(claims={"claim-0": [GPU_1]}), OUTCOME),
    Case("both unsatisfiable", answer("unsatisfiable"), answer("unsatisfiable"), AGREE),
    Case("error against unsatisfiable", answer("error", error="CEL runtime error"), answer("unsatisfiable"), ERROR,
         "want 'error' (CEL runtime error)"),
    Case("allocated against error", answer(claims={"claim-0": [GPU_1]}), answer("error", error="boom"), ERROR, "boom"),
    Case("error texts are not compared", answer("error", error="upstream's words"), answer("error", error="ours"),
         AGREE),
    Case("upstream timed out", answer("timeout"), answer("unsatisfiable"), TIMEOUT),
    Case("dratwin timed out", answer("unsatisfiable"), answer("timeout"), TIMEOUT),
    Case("both timed out", answer("timeout"), answer("timeout"), AGREE),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compare(case: Case) -> None:
    verdict = compare(expect_from_answer(case.upstream), case.got)
    assert verdict.category == case.category, verdict.problems
    assert verdict.agrees == (case.category == AGREE)
    if case.mentions:
        assert any(case.mentions in problem for problem in verdict.problems), verdict.problems


def test_expect_from_answer_is_the_conformance_format() -> None:
    upstream = answer(
        claims={"claim-0": [{**GPU_1, "shareID": "1234", "tolerations": [], "adminAccess": False}]},
        config={"claim-0": CONFIG},
        node_selector=REGION_1,
    )
    assert expect_from_answer(upstream) == {
        "result": "allocated",
        "allocations": {
            "claim-0": {
                "devices": [{**GPU_1, "shareID": PLACEHOLDER_SHARE_ID}],
                "config": CONFIG,
                "nodeSelector": REGION_1,
            }
        },
    }
    assert expect_from_answer(answer("error", error="bad class")) == {"result": "error", "errorContains": "bad class"}
    assert expect_from_answer(answer("unsatisfiable")) == {"result": "unsatisfiable"}


@pytest.mark.parametrize(
    ("text", "same_as"),
    [("1Gi", "1073741824"), ("1.5Gi", "1536Mi"), ("1k", "1000"), ("500m", "0.5"), ("1e3", "1k"), ("2", "2.0")],
)
def test_quantities_compare_by_value(text: str, same_as: str) -> None:
    assert quantity(text) == quantity(same_as)


def test_text_that_is_no_quantity_stays_text() -> None:
    assert quantity("lots") == "lots"
