"""One node's image pulls: which finish when, with the node's bandwidth shared by pulls in flight.

The kubelet pulls one image at a time by default (``serializeImagePulls: true``); the EKS-optimized AMIs
(nodeadm's kubelet config) set it to false, so pulls run in parallel. In parallel the node's image
bandwidth is shared equally by the pulls in flight (processor sharing): a new pull slows those already
running, and their finish times move later. Serialized, a pull starts when the one before it ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _Pull:
    image: str
    remaining: float  # bytes left at NodePulls.clock
    started_at: float
    finish_at: float = 0.0


@dataclass
class NodePulls:
    bandwidth: float  # bytes per second; 0: pulls take no time
    serialize: bool
    clock: float = 0.0
    cached: dict[str, float] = field(default_factory=dict)  # image -> when its pull finished (or will)
    in_flight: list[_Pull] = field(default_factory=list)

    def pull(self, image: str, size: int, at: float) -> tuple[float, dict[str, float]]:
        """When ``image`` is on the node for a pod that asks at ``at``, and the images in flight whose
        finish time moved (image -> new finish)."""
        self._advance(at)
        if image in self.cached:
            return max(at, self.cached[image]), {}
        if self.bandwidth <= 0 or size <= 0:
            self.cached[image] = at
            return at, {}
        before = {p.image: p.finish_at for p in self.in_flight}
        if self.serialize:
            start = max([at, *(p.finish_at for p in self.in_flight)])
            pull = _Pull(image, float(size), start, start + size / self.bandwidth)
            self.in_flight.append(pull)
        else:
            self.in_flight.append(_Pull(image, float(size), at))
            self._project()
        for p in self.in_flight:
            self.cached[p.image] = p.finish_at
        moved = {p.image: p.finish_at for p in self.in_flight if p.image in before and p.finish_at != before[p.image]}
        return self.cached[image], moved

    def _advance(self, now: float) -> None:
        """Bytes transferred up to ``now``; finished pulls leave the flight."""
        if self.serialize:
            self.in_flight = [p for p in self.in_flight if p.finish_at > now]
            self.clock = max(self.clock, now)
            return
        while self.in_flight and self.clock < now:
            rate = self.bandwidth / len(self.in_flight)
            first = min(self.in_flight, key=lambda p: p.remaining)
            step = min(now - self.clock, first.remaining / rate)
            for p in self.in_flight:
                p.remaining -= step * rate
            self.clock += step
            self.in_flight = [p for p in self.in_flight if p.remaining > 1e-6]
        self.clock = max(self.clock, now)

    def _project(self) -> None:
        """Finish times of the pulls in flight if no other pull joins."""
        clock, left = self.clock, sorted(self.in_flight, key=lambda p: (p.remaining, p.started_at, p.image))
        done = 0.0  # bytes every remaining pull has received since self.clock
        for i, p in enumerate(left):
            rate = self.bandwidth / (len(left) - i)
            clock += (p.remaining - done) / rate
            done = p.remaining
            p.finish_at = clock
