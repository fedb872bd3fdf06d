"""The scheduler over time: kube-scheduler's queue (:mod:`dratwin.sim.queue`) feeding the twin's scheduler.

Each scheduling cycle is one engine action that pops one pod and runs
:meth:`dratwin.scheduler.scheduler.Scheduler.schedule_one` with the default profile and the twin's binder,
so placement is exactly what ``dratwin schedule`` decides. A pod that does not fit gets its
``PodScheduled=False`` condition and goes to the unschedulable pool; cluster events that free or add
capacity (a bound pod gone, a claim deleted or deallocated, a node or a ResourceSlice added) move the pool;
a new claim moves only the pods that use it, as DynamicResources' QueueingHint for claims says, and the
deletion of a pod that was never bound moves nothing (NodeResourcesFit's hint for pod deletions).

Gangs: the active pods of a gang are scheduled in one cycle; if one of them does not fit, the ones
placed are taken back (their claims restored, as the coscheduling Permit rejects a group) and all wait.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.core import Pod
from dratwin.cel import SelectorCompiler
from dratwin.cluster.state import PodRecord, pod_claim_keys
from dratwin.scheduler.binder import StateBinder, mark_unschedulable
from dratwin.scheduler.framework import PodInfo
from dratwin.scheduler.gates import scheduling_gates
from dratwin.scheduler.profile import Options, default_profile
from dratwin.scheduler.resources import remove_pod
from dratwin.scheduler.scheduler import Attempt, Scheduler
from dratwin.sim.engine import BOOKKEEPING, SCHEDULER, Engine, Slot
from dratwin.sim.queue import BACKOFF_FLUSH_SECONDS, LEFTOVER_FLUSH_SECONDS, SchedulingQueue
from dratwin.sim.store import Change, Store

Raw = dict[str, Any]

# How many pods behind a quiet failure are checked at a time (``_fail_quietly``): a run of retries stops at the
# first that is not certain, which may come early in a pool of thousands.
QUIET_PIECE = 256


class StoreBinder(StateBinder):
    """The twin's binder, with evictions through the store: a victim leaves with its record on the Deleted
    event, so its owner sees it go (a Job replaces it) and the resourceclaim controller releases its claims."""

    def __init__(self, store: Store) -> None:
        super().__init__(store.state)
        self.store = store

    def evict(self, victims: Sequence[PodInfo], preemptor: PodInfo) -> None:
        for victim in victims:
            record = self.store.state.pods.get(victim.key)
            if record is None:
                continue
            record.raw = preempted(record.raw)
            self.store.note("Preempted", "Pod", victim.key, f"Preempted by pod {preemptor.key}")
            self.store.delete_pod(victim.key)


def preempted(raw: Raw) -> Raw:
    """The victim as its owner last sees it: Failed, with the DisruptionTarget condition the scheduler adds."""
    status = dict(raw.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"})
    return {**raw, "status": {**status, "phase": "Failed", "conditions": conditions}}


@dataclass
class SchedulingController:
    engine: Engine
    store: Store
    options: Options
    compiler: SelectorCompiler | None = None
    queue: SchedulingQueue = field(default_factory=SchedulingQueue)
    messages: dict[str, str] = field(default_factory=dict)  # the last FailedScheduling message per pod
    gated: set[str] = field(default_factory=set)  # pods PreEnqueue holds back for their scheduling gates
    attempts: int = 0
    gang_of: dict[str, str] = field(default_factory=dict)
    gangs: dict[str, list[str]] = field(default_factory=dict)
    _cycle_due: bool = False
    _backoff_flush_at: float | None = None
    _leftover_flush_due: bool = False
    _scheduler: Scheduler | None = None
    on_unschedulable: list[Callable[[str], None]] = field(default_factory=list)  # the provisioner's trigger
    _node_epoch: int = 0  # nodes added or deleted so far
    _nodes_seen: int = -1
    # Claims a gang's take-back restored at this time: their events free nothing for anyone else.
    _restored: tuple[float, set[str]] = (-1.0, set())
    # Which pods that entered the unschedulable pool use each claim, read as they entered it (a pending pod's
    # claims are named when it is created, with it): the new-claim hint looks up its users, not the pool.
    _claim_users: dict[str, set[str]] = field(default_factory=dict)
    _claims_of: dict[str, tuple[Pod, list[str]]] = field(default_factory=dict)
    # Cycles due one after another at one instant run in one engine action (``Engine.continue_inline``), and
    # a retry whose failure is certain takes its shape's stamped verdict (``Scheduler.known_failure``): the
    # same run, event for event, without a trip through the heap and a cycle per waiting pod. Off: each
    # cycle is its own action and runs in full (the reference the tests compare with).
    inline_cycles: bool = True
    # Each waiting pod's object as its last failure left it, with what that failure wrote (with inline_cycles):
    # the same failure again on the same object writes nothing (``mark_unschedulable`` is idempotent): skipped.
    _marked: dict[str, tuple[Raw, str, str, str]] = field(default_factory=dict)
    # Waiting pods whose quiet retry ``_quiet_failures`` found certain in full, each with the verdict it took
    # (its shape and message: one tuple for all the pods of a shape). Until an input of that check changes,
    # the next retry needs only the verdict's stamp read (``_settled_count``): a pod's object changes with a
    # Pod event, its claims in the cluster's claim feed, and the classes and the node tree (a new scheduler
    # view) for every pod at once. Upstream has nothing of the kind: the retry itself is the same.
    _settled: dict[str, tuple[Any, str]] = field(default_factory=dict)
    _verdicts: dict[tuple[int, str], tuple[Any, str]] = field(default_factory=dict)  # one tuple per verdict
    _settled_view: tuple[Scheduler | None, int, int] = (None, -1, 0)  # scheduler, classes, claim changes seen

    def __post_init__(self) -> None:
        for kind in ("Pod", "ResourceClaim", "Node", "ResourceSlice"):
            self.store.subscribe(kind, self._on_change)

    @property
    def scheduler(self) -> Scheduler:
        state = self.store.state
        if self._scheduler is None or self._nodes_seen != self._node_epoch:
            # The node tree changed: a new scheduler view (its caches are per node position).
            profile = default_profile(state, self.options, self.compiler)
            rng = self._scheduler.rng if self._scheduler is not None else random.Random(self.options.seed)
            self._scheduler = Scheduler(state, profile, rng, StoreBinder(self.store))
            self._nodes_seen = self._node_epoch
        return self._scheduler

    def enqueue(self, pods: Sequence[PodInfo], gang: str | None = None) -> None:
        for info in pods:
            if gang is not None:
                self.gang_of[info.key] = gang
                self.gangs.setdefault(gang, []).append(info.key)
            record = self.store.state.pods.get(info.key)
            if record is not None and scheduling_gates(record.raw):
                self.gated.add(info.key)  # PreEnqueue (SchedulingGates): queued once its last gate is gone
                continue
            self.queue.add(info)
        self._kick()

    # ---- reacting to the cluster ----

    def _on_change(self, change: Change) -> None:
        if change.kind == "Pod":
            self._settled.pop(change.key, None)
            if change.key in self.gated:
                self._ungated(change)
                return
            if change.type == "Deleted":
                self.queue.delete(change.key)
                self._unindex_claims(change.key)
                self._marked.pop(change.key, None)
                self._forget_gang_member(change.key)
                # NodeResourcesFit's hint: the deletion of a pod that was never bound frees nothing.
                if change.pod is None or change.pod.pod.spec.node_name:
                    self._move()
            return
        if change.kind == "ResourceClaim":
            if change.time == self._restored[0] and change.key in self._restored[1]:
                return
            if change.type == "Added":
                self._move_users_of(change.key)
                return
            record = self.store.state.claims.get(change.key)
            if change.type == "Deleted" or (record is not None and record.claim.status.allocation is None):
                self._move()
            return
        if change.kind == "Node" and change.type in ("Added", "Deleted"):
            self._node_epoch += 1
        if change.type in ("Added", "Modified"):
            self._move()

    def _ungated(self, change: Change) -> None:
        """A gated pod changed: once its last gate is removed it enters the queue like a new pod."""
        record = self.store.state.pods.get(change.key)
        if change.type == "Deleted" or record is None:
            self.gated.discard(change.key)
        elif not scheduling_gates(record.raw):
            self.gated.discard(change.key)
            self.queue.add(record.info)
            self._kick()

    def _move(self) -> None:
        if self.queue.unschedulable:
            self.queue.move_all(self.engine.now())
            self._kick()

    def _move_users_of(self, claim_key: str) -> None:
        """DynamicResources' hint for a new claim: it may help only the pods that use it (an unrelated claim
        that appears holds no devices yet and frees none)."""
        pods, pool = self.store.state.pods, self.queue.unschedulable
        users = {key for key in self._claim_users.get(claim_key, ())
                 if key in pool and key in pods and claim_key in pod_claim_keys(pods[key].pod)}
        if users:
            self.queue.move(users, self.engine.now())
            self._kick()

    def _index_claims(self, key: str) -> None:
        record = self.store.state.pods.get(key)
        if record is None:
            return
        known = self._claims_of.get(key)
        if known is not None and known[0] is record.pod:
            return
        self._unindex_claims(key)
        claims = pod_claim_keys(record.pod)
        self._claims_of[key] = (record.pod, claims)
        for claim_key in claims:
            self._claim_users.setdefault(claim_key, set()).add(key)

    def _unindex_claims(self, key: str) -> None:
        known = self._claims_of.pop(key, None)
        for claim_key in known[1] if known is not None else ():
            users = self._claim_users.get(claim_key)
            if users is not None:
                users.discard(key)
                if not users:
                    del self._claim_users[claim_key]

    def _forget_gang_member(self, key: str) -> None:
        gang = self.gang_of.pop(key, None)
        if gang is not None:
            members = self.gangs.get(gang, [])
            if key in members:
                members.remove(key)
            if not members:
                self.gangs.pop(gang, None)

    # ---- timers ----

    def _kick(self) -> None:
        slot = self._next_cycle()
        if slot is not None:
            self.engine.fill(slot, self._cycle)

    def _next_cycle(self) -> Slot | None:
        """The next cycle's place in the engine's order when one is due now and none is yet; timers armed."""
        slot = None
        if not self._cycle_due and (self.queue.active_count() or
                                    (self.queue.pop_from_backoff and self.queue.next_backoff_end() is not None)):
            self._cycle_due = True
            slot = self.engine.reserve(self.engine.now(), SCHEDULER)
        self._arm_timers()
        return slot

    def _arm_timers(self) -> None:
        end = self.queue.next_backoff_end()
        if end is not None:
            # Upstream flushes backoffQ every second: the pod leaves at the first tick after its backoff. A
            # flush is due once per tick (an earlier end within the tick already armed changes nothing).
            tick = -(-end // BACKOFF_FLUSH_SECONDS) * BACKOFF_FLUSH_SECONDS
            if self._backoff_flush_at is None or tick < self._backoff_flush_at:
                self._backoff_flush_at = tick
                self.engine.at(tick, BOOKKEEPING, self._flush_backoff)
        if self.queue.unschedulable and not self._leftover_flush_due:
            self._leftover_flush_due = True
            now = self.engine.now()
            tick = (now // LEFTOVER_FLUSH_SECONDS + 1) * LEFTOVER_FLUSH_SECONDS
            self.engine.at(tick, BOOKKEEPING, self._flush_leftover)

    def _flush_backoff(self) -> None:
        self._backoff_flush_at = None
        self.queue.flush_backoff(self.engine.now())
        self._kick()

    def _flush_leftover(self) -> None:
        self._leftover_flush_due = False
        self.queue.flush_leftover(self.engine.now())
        self._kick()

    # ---- one cycle ----

    def _cycle(self) -> None:
        while True:
            self._cycle_due = False
            info = self.queue.pop(self.engine.clock.now())
            if info is not None and not (self.inline_cycles and self._fail_quietly(info.key)):
                gang = self.gang_of.get(info.key)
                if gang is None:
                    self._schedule_alone(info)
                else:
                    self._schedule_gang(info, gang)
            slot = self._next_cycle()
            if slot is None:
                return
            if not self.inline_cycles:
                self.engine.fill(slot, self._cycle)
                return
            if not self.engine.continue_inline(slot, self._cycle):
                return

    def _fail_quietly(self, key: str) -> bool:
        """A retry whose failure is certain and writes nothing new (its shape's stamped verdict; the pod's
        condition already says so; not a gang's): what ``_schedule_alone`` would do for it, the counts and
        the pool entry, without an Attempt and its bookkeeping (True). False, with nothing done, when any
        of that is not certain: the full cycle runs. Most attempts of a month are such retries.

        The pods behind it in activeQ whose retries are as certain follow in the same action, a piece of the
        queue's head at a time, each counted as the engine action its own cycle is (``Engine.ran_inline``):
        the cluster does not change between them (they write nothing), so the verdicts and timers are the same
        for each, and they run inline as long as nothing else falls due before the next cycle."""
        settled, quiet = self._quiet_prefix([key])
        if not (settled or quiet):
            return False
        engine, queue = self.engine, self.queue
        now = engine.now()
        self._tell_quiet([key], settled, quiet)
        queue.failed(key, now)
        done, armed = 1, False
        while True:
            keys = queue.head_keys(QUIET_PIECE)
            settled, quiet = self._quiet_prefix(keys) if keys else (0, [])
            if not (settled or quiet):
                break
            if not armed:
                self._arm_timers()  # as the first pod's cycle ends (a follower's failure changes none)
                armed = True
            if engine.due_before(SCHEDULER):
                break
            told = self._tell_quiet(keys, settled, quiet)
            queue.fail_head(keys[:told], now)
            engine.ran_inline(told)
            done += told
            if told < len(keys):
                break
        self.attempts += done
        return True

    def _quiet_prefix(self, keys: list[str]) -> tuple[int, list[tuple[PodRecord, str]]]:
        """How many leading pods are settled (``_settled_count``), and the records and messages of the quiet
        failures that follow them (``_quiet_failures``): together, the leading pods whose failures are certain
        and write nothing new."""
        settled = self._settled_count(keys)
        return settled, self._quiet_failures(keys[settled:] if settled else keys) if settled < len(keys) else []

    def _settled_count(self, keys: list[str]) -> int:
        """How many of the leading pods are settled and their verdicts still stand: their retries fail as the
        last did and write nothing new, as ``_quiet_failures`` would find (one look-up each)."""
        settled = self._settled
        if not settled:
            return 0
        scheduler = self.scheduler
        self._unsettle_changed(scheduler)
        stands: dict[int, bool] = {}
        count = 0
        for key in keys:
            verdict = settled.get(key)
            if verdict is None:
                break
            held = stands.get(id(verdict))
            if held is None:
                held = stands[id(verdict)] = scheduler.failure_stands(*verdict)
            if not held:
                break
            count += 1
        return count

    def _unsettle_changed(self, scheduler: Scheduler) -> None:
        """Settled pods whose inputs changed since they were settled are no longer: the users of each claim in
        the cluster's claim feed since the last look, and all of them for new classes or a new scheduler view
        (or a feed that no longer reaches back so far). A pod object's own changes come as Pod events."""
        state, settled = self.store.state, self._settled
        seen_by, classes, claims_seen = self._settled_view
        if seen_by is not scheduler or classes != len(state.classes):
            settled.clear()
            self._verdicts.clear()
        elif claims_seen != state.claim_changes:
            changed = state.claims_changed_since(claims_seen)
            if changed is None:
                settled.clear()
            else:
                users = self._claim_users
                for claim_key in changed:
                    for key in users.get(claim_key, ()):
                        settled.pop(key, None)
        self._settled_view = (scheduler, len(state.classes), state.claim_changes)

    def _settle(self, key: str, record: PodRecord, message: str) -> None:
        """A quiet failure checked in full: its next retry needs only its verdict read (``_settled_count``)."""
        scheduler = self.scheduler
        self._unsettle_changed(scheduler)
        shape = scheduler.shape_seen(record.info)
        if shape is not None:
            verdict = self._verdicts.setdefault((id(shape), message), (shape, message))
            self._settled[key] = verdict

    def _quiet_failures(self, keys: list[str]) -> list[tuple[PodRecord, str]]:
        """The records and messages of the leading pods, tried in this order, whose failures are certain and
        write nothing new (``_fail_quietly``), up to the first that is not."""
        pods, gang_of, marked_of = self.store.state.pods, self.gang_of, self._marked
        records = []
        for key in keys:
            record = pods.get(key)
            if record is None or key in gang_of:
                break
            records.append(record)
        failures = self.scheduler.leading_certain_failures([record.info for record in records]) if records else []
        quiet = []
        for key, record, failure in zip(keys, records, failures, strict=False):  # the shorter: a prefix
            message, marked = failure[1], marked_of.get(key)
            # The condition the last failure wrote, on the same object, with no error and no nominated node.
            if marked is None or marked[0] is not record.raw or marked[1] != message or marked[2] or marked[3]:
                break
            quiet.append((record, message))
        return quiet

    def _tell_quiet(self, keys: list[str], settled: int, quiet: list[tuple[PodRecord, str]]) -> int:
        """Each quiet failure's message, log entry and claims, and the unschedulable hooks told, in order; how
        many were done: a hook that makes something due before the next cycle ends the run after its pod.
        The first ``settled`` pods' messages and claims are as their last failures left them: only told."""
        messages, store, hooks, engine = self.messages, self.store, self.on_unschedulable, self.engine
        if settled and (store.keep_log or hooks):
            for told, key in enumerate(keys[:settled], 1):
                store.note("FailedScheduling", "Pod", key, messages[key])
                for hook in hooks:
                    hook(key)
                if hooks and engine.due_before(SCHEDULER):
                    return told
        told, claims_of = settled, self._claims_of
        for key, (record, message) in zip(keys[settled:], quiet, strict=False):
            messages[key] = message
            if store.keep_log:
                store.note("FailedScheduling", "Pod", key, message)
            claims = claims_of.get(key)
            if claims is None or claims[0] is not record.pod:
                self._index_claims(key)
            self._settle(key, record, message)
            told += 1
            if hooks:
                for hook in hooks:
                    hook(key)
                if engine.due_before(SCHEDULER):
                    break
        return told

    def _schedule_alone(self, info: PodInfo) -> None:
        attempt = self._attempt(info)
        if attempt.scheduled:
            self._scheduled(info.key)
        else:
            self._failed(info.key, attempt.message, attempt)

    def _scheduled(self, key: str) -> None:
        self._settled.pop(key, None)
        self.queue.delete(key)
        self._unindex_claims(key)
        self.messages.pop(key, None)
        self._marked.pop(key, None)
        node = self.store.state.pods[key].pod.spec.node_name
        self.store.note("Scheduled", "Pod", key, f"Successfully assigned {key} to {node}")

    def _attempt(self, info: PodInfo) -> Attempt:
        self.attempts += 1
        record = self.store.state.pods.get(info.key)
        pod_info = record.info if record is not None else info
        if self.inline_cycles:
            known = self.scheduler.known_failure(pod_info)
            if known is not None:
                return known
        return self.scheduler.schedule_one(pod_info)

    def _failed(self, key: str, message: str, attempt: Attempt | None) -> None:
        self._settled.pop(key, None)
        now = self.engine.now()
        self.messages[key] = message
        self.store.note("FailedScheduling", "Pod", key, message)
        if attempt is not None:
            self._mark(key, attempt)
        if key in self.queue.pods:
            self.queue.failed(key, now)
            self._index_claims(key)
        for hook in self.on_unschedulable:
            hook(key)

    def _mark(self, key: str, attempt: Attempt) -> None:
        record = self.store.state.pods.get(key)
        if record is None:
            return
        wrote = (record.raw, attempt.message, attempt.error, attempt.nominated_node)
        last = self._marked.get(key)
        if self.inline_cycles and last is not None and last[0] is wrote[0] and last[1:] == wrote[1:]:
            return
        mark_unschedulable(self.store.state, attempt)
        self._marked[key] = (record.raw, *wrote[1:])

    def _schedule_gang(self, first: PodInfo, gang: str) -> None:
        members = [first.key] + [k for k in self.gangs.get(gang, []) if k != first.key and self.queue.take(k)]
        state = self.store.state
        snapshots = {key: self._snapshot(key) for key in members}
        placed: list[str] = []
        failed: Attempt | None = None
        for key in members:
            attempt = self._attempt(self.queue.pods[key].info)
            if not attempt.scheduled:
                failed = attempt
                break
            placed.append(key)
        if failed is None:
            for key in members:
                self._scheduled(key)
            return
        for key in reversed(placed):
            self._take_back(key, snapshots[key])
        message = (f"gang {gang}: {len(placed)} of {len(members)} pods fit; waiting for all: "
                   f"{failed.pod}: {failed.message}")
        for key in members:
            if key in state.pods:
                self._failed(key, message, None)

    def _snapshot(self, key: str) -> tuple[Raw, Pod, dict[str, Raw | None]]:
        state = self.store.state
        record = state.pods[key]
        claims: dict[str, Raw | None] = {}
        for claim_key in pod_claim_keys(record.pod):
            claim = state.claims.get(claim_key)
            claims[claim_key] = claim.raw if claim is not None else None
        return record.raw, record.pod, claims

    def _take_back(self, key: str, snapshot: tuple[Raw, Pod, dict[str, Raw | None]]) -> None:
        """Undo a gang member's bind: off its node, its claims as they were (allocations released)."""
        state = self.store.state
        record = state.pods[key]
        node = state.nodes.get(record.pod.spec.node_name) if record.pod.spec.node_name else None
        if node is not None:
            remove_pod(node, record.info)
        raw, original, claims = snapshot
        now = self.engine.now()
        if self._restored[0] != now:
            self._restored = (now, set())
        self._restored[1].update(pod_claim_keys(record.pod))
        for claim_key in pod_claim_keys(record.pod):
            before = claims.get(claim_key)
            if before is None and claim_key in state.claims:
                state.delete_claim(claim_key)
            elif before is not None:
                state.update_claim(claim_key, before)
        record.raw, record.pod, record.info.pod = raw, original, original
        state.record("Modified", "Pod", key)
