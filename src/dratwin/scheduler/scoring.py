"""What a scheduler profile scores with: upstream's NodeResourcesFit strategies, or one of the FGD paper's
placement policies as an opt-in.

The strategies are kube-scheduler's own (``LeastAllocated`` is the default profile's). The policies
(Weng et al., "Beware of Fragmentation", USENIX ATC '23) are not part of upstream: a profile with one
scores with that policy alone, as the paper's simulator runs kube-scheduler (every default score plugin
disabled, the policy's plugin enabled); its filters stay upstream's. Results with a policy are reported
beside the faithful result, never instead of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dratwin.gpushare.names import PAPER_NAMES
from dratwin.scheduler.plugins.node_resources import ScoringStrategy

UPSTREAM_SCORING = tuple(s.value for s in ScoringStrategy)
OPT_IN_SCORING = tuple(PAPER_NAMES.values())
SCORING_NAMES = (*UPSTREAM_SCORING, *OPT_IN_SCORING)
DEFAULT_SCORING = ScoringStrategy.LEAST_ALLOCATED.value

_POLICY_OF = {paper: name for name, paper in PAPER_NAMES.items()}


@dataclass(frozen=True)
class Scoring:
    """A profile's scoring: NodeResourcesFit's ``strategy``, or with ``policy`` (a key of
    :data:`~dratwin.gpushare.names.PAPER_NAMES`) that policy instead of every score plugin."""

    strategy: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED
    policy: str | None = None

    @property
    def name(self) -> str:
        return PAPER_NAMES[self.policy] if self.policy is not None else self.strategy.value

    @property
    def upstream(self) -> bool:
        return self.policy is None


def scoring_named(name: str) -> Scoring:
    """The scoring called ``name`` (one of :data:`SCORING_NAMES`); a ValueError lists them."""
    if name in UPSTREAM_SCORING:
        return Scoring(ScoringStrategy(name))
    policy = _POLICY_OF.get(name)
    if policy is None:
        raise ValueError(f"unknown scoring {name!r}; upstream: {', '.join(UPSTREAM_SCORING)}; "
                         f"opt-in policies of the FGD paper: {', '.join(OPT_IN_SCORING)}")
    return Scoring(policy=policy)


def opt_in_note(scoring: Scoring) -> str | None:
    """The note a result carries when it was scored with an opt-in policy (None: upstream's scoring)."""
    if scoring.upstream:
        return None
    return (f"scoring {scoring.name}: an opt-in placement policy of the FGD paper, not upstream kube-scheduler: "
            f"it replaced every score plugin; {DEFAULT_SCORING} (the default) is what a real cluster does")


SCORING_HELP = (
    f"how nodes are scored: upstream's NodeResourcesFit strategies {' or '.join(UPSTREAM_SCORING)} "
    f"(default: {DEFAULT_SCORING}, kube-scheduler's default profile), or an opt-in placement policy of the FGD "
    f"paper ({', '.join(OPT_IN_SCORING)}: not upstream; it replaces every score plugin, as the paper's "
    "simulator runs it, and scores the GPU shares of DRA devices with a 'milli' capacity, as `dratwin trace "
    "import` publishes them)"
)

__all__ = [
    "DEFAULT_SCORING",
    "OPT_IN_SCORING",
    "SCORING_HELP",
    "SCORING_NAMES",
    "UPSTREAM_SCORING",
    "Scoring",
    "opt_in_note",
    "scoring_named",
]
