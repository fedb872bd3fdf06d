"""Kueue's ``waitForPodsReady``: its settings with Kueue's defaults, the PodsReady condition, the requeue backoff.

At Kueue ``ff69552``: ``apis/config/v1beta2/defaults.go`` (timeout 30 min, recoveryTimeout = timeout,
requeuingStrategy timestamp Eviction, backoffBaseSeconds 60, backoffMaxSeconds 3600, no backoffLimitCount:
requeued for ever); ``jobframework/reconciler.go`` generatePodsReadyCondition (the reasons and messages);
``workload.go`` UpdateRequeueState (the n-th requeue waits ``60 s × 2^(n-1)``, capped). Upstream adds a
jitter of at most 0.01 % of the wait (``wait.Backoff`` Jitter 0.0001); the twin leaves it out so that a run
is a function of its inputs (a 60 s wait is 6 ms longer at most upstream).
"""

from __future__ import annotations

from dataclasses import dataclass

from dratwin.api.kueue import Configuration
from dratwin.scenario.quantities import NotationError, parse_duration

DEFAULT_TIMEOUT_SECONDS = 30 * 60.0
DEFAULT_BACKOFF_BASE_SECONDS = 60.0
DEFAULT_BACKOFF_MAX_SECONDS = 3600.0
EVICTION_TIMESTAMP = "Eviction"

WAIT_FOR_START = "WaitForStart"
WAIT_FOR_RECOVERY = "WaitForRecovery"
STARTED = "Started"
RECOVERED = "Recovered"
NOT_READY_MESSAGE = "Not all pods are ready or succeeded"
RECOVERY_MESSAGE = "At least one pod has failed, waiting for recovery"
READY_MESSAGE = "All pods reached readiness and the workload is running"


@dataclass(frozen=True)
class PodsReadySettings:
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    recovery_timeout: float = DEFAULT_TIMEOUT_SECONDS
    requeue_at_eviction: bool = True  # requeuingStrategy.timestamp Eviction: the queue orders by eviction time
    backoff_base: float = DEFAULT_BACKOFF_BASE_SECONDS
    backoff_max: float = DEFAULT_BACKOFF_MAX_SECONDS
    backoff_limit: int | None = None  # backoffLimitCount; None: requeued for ever
    block_admission: bool = False

    def backoff(self, count: int) -> float:
        """The wait before the ``count``-th requeue (1 for the first)."""
        return float(min(self.backoff_base * (1 << max(count - 1, 0)), self.backoff_max))


def pods_ready_settings(config: Configuration) -> tuple[PodsReadySettings | None, list[str]]:
    """The settings when ``waitForPodsReady`` is in the Configuration (on), else None; and notes about them."""
    wait = config.wait_for_pods_ready
    if wait is None:
        return None, []
    notes: list[str] = []
    timeout = _seconds(wait.timeout, DEFAULT_TIMEOUT_SECONDS, "timeout", notes)
    recovery = _seconds(wait.recovery_timeout, timeout, "recoveryTimeout", notes)
    strategy = wait.requeuing_strategy
    settings = PodsReadySettings(
        timeout, recovery,
        requeue_at_eviction=(strategy is None or (strategy.timestamp or EVICTION_TIMESTAMP) == EVICTION_TIMESTAMP),
        backoff_base=float(strategy.backoff_base_seconds) if strategy and strategy.backoff_base_seconds is not None
        else DEFAULT_BACKOFF_BASE_SECONDS,
        backoff_max=float(strategy.backoff_max_seconds) if strategy and strategy.backoff_max_seconds is not None
        else DEFAULT_BACKOFF_MAX_SECONDS,
        backoff_limit=strategy.backoff_limit_count if strategy is not None else None,
        block_admission=bool(wait.block_admission))
    if settings.block_admission:
        notes.append("Kueue Configuration waitForPodsReady.blockAdmission: true is not modelled: Workloads are "
                     "admitted without waiting for the admitted ones to have their pods ready")
    return settings, notes


def _seconds(text: str | None, default: float, name: str, notes: list[str]) -> float:
    if not text:
        return default
    try:
        return parse_duration(text)
    except NotationError as error:
        notes.append(f"Kueue Configuration waitForPodsReady.{name}: {text!r} {error.message}: using {default:g} s")
        return default


def pods_ready_condition(ready: bool, current: dict[str, str] | None) -> tuple[str, str, str]:
    """(status, reason, message) of PodsReady for an admitted Workload whose pods are ``ready`` or not."""
    if ready:
        recovering = current is not None and current.get("reason") in (WAIT_FOR_RECOVERY, RECOVERED)
        return "True", RECOVERED if recovering else STARTED, READY_MESSAGE
    if current is None or current.get("status") != "True":
        if current is not None and current.get("reason") == WAIT_FOR_RECOVERY:
            return "False", WAIT_FOR_RECOVERY, RECOVERY_MESSAGE
        return "False", WAIT_FOR_START, NOT_READY_MESSAGE
    return "False", WAIT_FOR_RECOVERY, RECOVERY_MESSAGE
