"""KEDA's ScaledObject: activation, cooldown to zero, and the HPA above one replica.

Each case follows kedacore/keda v2 pkg/scaling/executor/scale_scaledobjects.go (RequestScale,
scaleToZeroOrIdle, scaleFromZeroOrIdle), pkg/scaling/scale_handler.go (activity of a trigger: value above
activationThreshold) and the docs' ScaledObject spec (pollingInterval 30, cooldownPeriod 300,
minReplicaCount 0, maxReplicaCount 100). A case is a list of polls: time, current replicas, the metric and
the value activity is decided on; each expects a count and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from tests.builders.autoscaling import autoscaler

from dratwin.autoscaling import AutoscalerSettingsError, KedaAutoscaler, KedaConfig, MetricSpec


@dataclass(frozen=True)
class Poll:
    at: float
    replicas: int
    value: float | None
    desired: int
    reason: str
    activation: float | None = None


@dataclass(frozen=True)
class Case:
    name: str
    polls: tuple[Poll, ...]
    min_replicas: int = 0
    settings: tuple[tuple[str, float], ...] = ()


CASES = [
    # Inactive at zero: nothing happens; the first value above the activation threshold scales to 1.
    Case("activation-from-zero", (Poll(0, 0, 0, 0, "Inactive"), Poll(30, 0, 7, 1, "ScaledFromZero"))),
    # activationThreshold: 5 is not above 10; 11 is.
    Case(
        "activation-threshold",
        (Poll(0, 0, 5, 0, "Inactive"), Poll(30, 0, 11, 1, "ScaledFromZero")),
        settings=(("activationThreshold", 10),),
    ),
    # From zero the target goes to minReplicaCount when it is above 1 (scaleFromZeroOrIdle).
    Case("activation-to-min", (Poll(0, 0, 7, 2, "ScaledFromZero"),), min_replicas=2),
    # Inactive after being active: cooling down until lastActiveTime + cooldownPeriod has passed, then to zero
    # from any count (KEDA, not the HPA, takes it there).
    Case(
        "cooldown-to-zero",
        (
            Poll(0, 3, 40, 3, "ActiveLeftToHpa"),
            Poll(30, 3, 0, 3, "CoolingDown"),
            Poll(300, 3, 0, 3, "CoolingDown"),
            Poll(330, 3, 0, 0, "ScaledToZero"),
        ),
    ),
    # Activity renews lastActiveTime: the cooldown counts from the last active poll.
    Case(
        "cooldown-restarts",
        (
            Poll(0, 2, 40, 2, "ActiveLeftToHpa"),
            Poll(200, 2, 40, 2, "ActiveLeftToHpa"),
            Poll(330, 2, 0, 2, "CoolingDown"),
            Poll(510, 2, 0, 0, "ScaledToZero"),
        ),
    ),
    # Never active since creation: initialCooldownPeriod (0) applies, so the first inactive poll scales to 0.
    Case("never-active-scales-to-zero", (Poll(30, 2, 0, 0, "ScaledToZero"),)),
    # With minReplicaCount > 0 KEDA never goes to zero; below the minimum it raises the target.
    Case(
        "inactive-keeps-minimum",
        (Poll(0, 2, 0, 2, "Inactive"), Poll(30, 1, 0, 2, "BelowMinReplicaCount")),
        min_replicas=2,
    ),
    # The GPU-utilization gap (kedacore/keda#7538): at zero replicas DCGM utilization is 0 and never activates;
    # deciding activity on the request rate does.
    Case(
        "gpu-util-activation-gap",
        (Poll(0, 0, 0, 0, "Inactive"), Poll(30, 0, 0, 1, "ScaledFromZero", activation=12.0)),
    ),
    # A scaler error is neither active nor inactive: nothing changes.
    Case("scaler-error", (Poll(0, 2, None, 2, "TriggerError"),)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_polls(case: Case) -> None:
    spec = autoscaler("keda", target=50, min_replicas=case.min_replicas, **dict(case.settings))
    keda = KedaAutoscaler(KedaConfig.from_spec(spec))
    for poll in case.polls:
        decision = keda.poll(poll.at, poll.replicas, poll.value, poll.activation)
        assert (decision.desired_replicas, decision.reason) == (poll.desired, poll.reason), f"poll at {poll.at}"


def test_hpa_above_one_replica() -> None:
    # KEDA's HPA: External metric, AverageValue target, min max(minReplicaCount, 1), max maxReplicaCount.
    config = KedaConfig.from_spec(autoscaler("keda", target=50, min_replicas=0, max_replicas=100))
    assert (config.hpa.metric, config.hpa.min_replicas, config.hpa.max_replicas) == (
        MetricSpec("External", 50, cpu=False),
        1,
        100,
    )
    keda = KedaAutoscaler(config)
    # The HPA leaves a target at zero alone (ScalingDisabled): zero is KEDA's to leave.
    assert keda.sync(0, 0, value=0).reason == "ScalingDisabled"
    # Sum of GPU utilization 250 over 3 replicas against 50 per replica: ceil(250 / 50) = 5, within the
    # controller's max(2 × 3, 4) (KEDA sets no spec.behavior by default); from 2 that limit is 4.
    assert keda.sync(15, 2, value=250).desired_replicas == 4
    decision = keda.sync(30, 3, value=250)
    assert (decision.desired_replicas, decision.reason) == (5, "MetricRatio")


def test_cpu_trigger_is_always_active() -> None:
    config = KedaConfig.from_spec(autoscaler("keda", metric="cpu", target=70, min_replicas=1))
    assert config.hpa.metric == MetricSpec("Resource", 70)
    keda = KedaAutoscaler(config)
    assert keda.poll(0, 0, None).reason == "ScaledFromZero"


BAD = [
    ("cpu-to-zero", autoscaler("keda", metric="cpu", min_replicas=0), "autoscaler.min_replicas"),
    ("unknown-setting", autoscaler("keda", cooldown=60), "autoscaler.settings.cooldown"),
    ("negative-cooldown", autoscaler("keda", cooldownPeriod=-1), "autoscaler.settings.cooldownPeriod"),
]


@pytest.mark.parametrize(("spec", "path"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_settings_name_the_field(spec: object, path: str) -> None:
    with pytest.raises(AutoscalerSettingsError) as error:
        KedaConfig.from_spec(spec)  # type: ignore[arg-type]
    assert error.value.path == path
