"""Kueue's ``waitForPodsReady``: its settings with Kueue's defaults, the PodsReady condition, the requeue backoff.

At Kueue ``ff69552``: ``apis/config/v1beta2/defaults.go`` (timeout 30 min, recoveryTimeout = timeout,
requeuingStrategy timestamp Eviction, backoffBaseSeconds 60, backoffMaxSeconds 3600, no backoffLimitCount:
requeued for ever); ``jobframework/reconciler.go`` generatePodsReadyCondition (the reasons and messages);
``workload.go`` UpdateRequeueState (the n-th requeue waits ``60 s × 2^(n-1)``, capped). Upstream adds a
jitter of at most 0.01 % of the wait (``wait.Backoff`` Jitter 0.0001); the twin leaves it out so that a run
is a function of its inputs (a 60 s wait is 6 ms longer at most upstream).

:class:`PodsReadyWatch` is the workload controller's part that keeps the condition and acts on the timeouts
(``reconcileNotReadyTimeout``); the Kueue controller (:mod:`.kueue`) tells it of each admission and pod change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dratwin.api.kueue import Configuration
from dratwin.scenario.quantities import NotationError, parse_duration
from dratwin.sim.engine import CONTROLLER, Engine
from dratwin.sim.kueue_records import WorkloadRecord
from dratwin.sim.kueue_status import PODS_READY_TIMEOUT, find_condition, new_condition
from dratwin.sim.workloads import timestamp

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


SetConditions = Callable[[WorkloadRecord, list[dict[str, str]]], None]
Evict = Callable[[WorkloadRecord, str, str, float], None]  # record, reason, message, requeue backoff (s)


@dataclass
class PodsReadyWatch:
    """PodsReady of the admitted Workloads and the evictions of those not ready in time. It owns no state of
    its own: the ready pods and the clocks are on each :class:`WorkloadRecord`, the condition on the Workload."""

    engine: Engine
    settings: PodsReadySettings
    workload: Callable[[str], dict[str, Any]]  # the stored Workload, by key
    succeeded_of: Callable[[str], int]  # the Job's succeeded pods (status.succeeded), by Job key
    set_conditions: SetConditions
    evict: Evict
    deactivate: Callable[[WorkloadRecord], None]  # past backoffLimitCount

    def admitted(self, record: WorkloadRecord) -> None:
        """Admitted=True: the condition is written and the timeout's clock starts."""
        self.sync(record)
        serial = record.admissions
        self.engine.at(self.engine.now() + self.settings.timeout, CONTROLLER, lambda: self._check(record, serial))

    def sync(self, record: WorkloadRecord) -> None:
        """generatePodsReadyCondition: ready when ready + succeeded pods reach the PodSets' count."""
        assert record.admitted is not None
        wanted = sum(p.count for p in record.admitted.assignment.pod_sets)
        ready = len(record.ready_pods) + self.succeeded_of(record.job_key) >= wanted
        current = find_condition(self.workload(record.key), "PodsReady")
        status, reason, message = pods_ready_condition(ready, current)
        if current is not None and (current.get("status"), current.get("reason")) == (status, reason):
            return
        now = self.engine.now()
        self.set_conditions(record, [new_condition("PodsReady", status, reason, message, timestamp(now))])
        if reason != WAIT_FOR_RECOVERY:
            return
        if current is None or current.get("reason") != reason:
            record.recovering_since = now
        serial = record.admissions
        self.engine.at(now + self.settings.recovery_timeout, CONTROLLER, lambda: self._check(record, serial))

    def _check(self, record: WorkloadRecord, serial: int) -> None:
        """reconcileNotReadyTimeout: still admitted (the same admission) and not ready after the timeout."""
        settings = self.settings
        if record.admitted is None or record.admissions != serial or record.finished_at:
            return
        current = find_condition(self.workload(record.key), "PodsReady")
        if current is not None and current.get("status") == "True":
            return
        recovering = current is not None and current.get("reason") == WAIT_FOR_RECOVERY
        since = record.recovering_since if recovering else record.admitted_at
        limit = settings.recovery_timeout if recovering else settings.timeout
        if since is not None and self.engine.now() - since < limit:
            return  # a later transition restarted the clock: its own timer comes
        if settings.backoff_limit is not None and record.requeue_count + 1 > settings.backoff_limit:
            self.deactivate(record)
            return
        record.requeue_count += 1
        self.evict(record, PODS_READY_TIMEOUT, f"Exceeded the PodsReady timeout {record.key}",
                   settings.backoff(record.requeue_count))
