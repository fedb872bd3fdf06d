"""Karpenter's scheduling requirements as an immutable value type.

A :class:`Requirement` is the set of values one label key may take: a finite set (``In``, or empty for
``DoesNotExist``) or the complement of one (``NotIn``, or ``Exists`` for the complement of the empty set),
optionally cut to an integer range (``Gt``/``Lt``, and Karpenter's ``Gte``/``Lte``). :class:`Requirements`
maps keys to requirements; NodePools, NodeClaims, instance types, offerings and pods are all turned into
Requirements and compared with :meth:`Requirements.compatible` (may a pod's requirements be met by a
node's?) and :meth:`Requirements.intersects` (do two constraint sets overlap on their common keys?).

Semantics and wording follow kubernetes-sigs/karpenter v1.14 ``pkg/scheduling/requirement.go`` and
``requirements.go`` (strings such as ``key zone, zone In [a] not in zone In [b]``), with three deliberate
differences, all for determinism (style rule 9): keys are visited in sorted order (upstream walks Go maps,
so which error comes first is random), :meth:`Requirement.any` picks the smallest value instead of a
random one, and typo hints come from sorted candidates plus a spelling match.

Bounds are stored as the exclusive ``greater_than``/``less_than`` of the Kubernetes operators; upstream
stores the inclusive ``>=``/``<=`` (``Gt 1`` becomes ``>=2``), which is what :meth:`Requirement.__str__`
prints. On integers the two are the same set.

The label vocabulary (well-known and restricted labels) is defined in :mod:`dratwin.api.karpenter`, next
to the objects that use it, and re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from dratwin.api.core import NodeSelectorRequirement, Pod, PodSpec
from dratwin.api.karpenter import (
    AUTO_MODE_WELL_KNOWN_LABELS,
    AWS_WELL_KNOWN_LABELS,
    CORE_WELL_KNOWN_LABELS,
    NORMALIZED_LABELS,
    RESTRICTED_LABEL_DOMAINS,
    RESTRICTED_LABELS,
    WELL_KNOWN_LABELS,
    WELL_KNOWN_VALUES,
    NodeSelectorRequirementWithMinValues,
)
from dratwin.api.validation_formats import close_match
from dratwin.errors import DratwinError

__all__ = [
    "ALLOW_UNDEFINED_WELL_KNOWN",
    "AUTO_MODE_WELL_KNOWN_LABELS",
    "AWS_WELL_KNOWN_LABELS",
    "CORE_WELL_KNOWN_LABELS",
    "NORMALIZED_LABELS",
    "OPERATORS",
    "RESTRICTED_LABELS",
    "RESTRICTED_LABEL_DOMAINS",
    "WELL_KNOWN_LABELS",
    "WELL_KNOWN_VALUES",
    "MinValuesShortfall",
    "Requirement",
    "RequirementError",
    "Requirements",
]

OPERATORS = ("DoesNotExist", "Exists", "Gt", "Gte", "In", "Lt", "Lte", "NotIn")
# Compatibility option of Karpenter's scheduler: well-known labels may be left undefined by the node side.
ALLOW_UNDEFINED_WELL_KNOWN: frozenset[str] = WELL_KNOWN_LABELS
_MAX_LEN = 2**63 - 1  # Go's math.MaxInt64: the size upstream gives a complement set
_INTEGER = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi accepts
_SHOWN_VALUES = 5
_MIN_HINT_MATCH = 4  # shorter keys match everything by substring; upstream would still hint, dratwin does not


class RequirementError(DratwinError, ValueError):
    """A node selector requirement that cannot be turned into a Requirement (unknown operator, bad bound)."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """The values a label ``key`` may take.

    ``complement`` False: exactly ``values`` (``In``; ``DoesNotExist`` when empty). ``complement`` True:
    anything but ``values`` (``NotIn``; ``Exists`` when empty). ``greater_than``/``less_than`` further
    restrict a complement to integers strictly between them; finite sets are filtered instead (an
    intersection drops the bounds of a non-complement result, as upstream does). ``min_values`` is the
    NodePool's ``minValues``: how many distinct values the launch must stay flexible over.
    """

    key: str
    complement: bool
    values: frozenset[str]
    greater_than: int | None = None
    less_than: int | None = None
    min_values: int | None = None

    @classmethod
    def create(
        cls, key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None
    ) -> Requirement:
        """From a node selector requirement; deprecated label keys are normalized (``beta.kubernetes.io/arch``).

        ``Gt N`` keeps ``> N``; ``Gte N`` becomes ``> N-1`` and ``Lte N`` ``< N+1``. RequirementError for an
        unknown operator or a bound that is not exactly one integer.
        """
        key = NORMALIZED_LABELS.get(key, key)
        items = list(values)
        if operator in ("In", "NotIn"):
            return cls(key, operator == "NotIn", frozenset(items), min_values=min_values)
        if operator in ("Exists", "DoesNotExist"):
            return cls(key, operator == "Exists", frozenset(), min_values=min_values)
        if operator not in ("Gt", "Gte", "Lt", "Lte"):
            raise RequirementError(
                f'requirement on "{key}": operator "{operator}" is not one of {", ".join(OPERATORS)}'
            )
        if len(items) != 1 or not _INTEGER.fullmatch(items[0]):
            raise RequirementError(f'requirement on "{key}": {operator} needs exactly one integer value, got {items}')
        bound = int(items[0])
        if operator in ("Gt", "Gte"):
            return cls(key, True, frozenset(), greater_than=bound if operator == "Gt" else bound - 1,
                       min_values=min_values)
        return cls(key, True, frozenset(), less_than=bound if operator == "Lt" else bound + 1, min_values=min_values)

    @classmethod
    def exists(cls, key: str) -> Requirement:
        return cls(key, True, frozenset())

    @property
    def operator(self) -> str:
        """In, NotIn, Exists or DoesNotExist (a bounded complement is an Exists or NotIn with bounds)."""
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def __len__(self) -> int:
        """How many values are allowed; a complement counts as ``2**63 - 1`` minus its exclusions (upstream)."""
        return _MAX_LEN - len(self.values) if self.complement else len(self.values)

    def values_list(self) -> list[str]:
        """The listed values, sorted (the allowed ones for In, the excluded ones for NotIn)."""
        return sorted(self.values)

    def has(self, value: str) -> bool:
        """Whether a node labelled ``key=value`` satisfies the requirement (bounds need an integer value)."""
        return (value in self.values) != self.complement and self._within_bounds(value)

    def any(self) -> str | None:
        """A value the requirement allows: the smallest listed one for In, the smallest allowed non-negative
        integer for Exists/NotIn (upstream picks randomly), None for DoesNotExist or an empty range."""
        if not self.complement:
            return min(self.values) if self.values else None
        candidate = 0 if self.greater_than is None else max(0, self.greater_than + 1)
        while str(candidate) in self.values:
            candidate += 1
        return str(candidate) if self.less_than is None or candidate < self.less_than else None

    def intersection(self, other: Requirement) -> Requirement:
        """The values both allow; ``min_values`` is the larger of the two."""
        if other.key != self.key:
            raise ValueError(f"cannot intersect requirements on different keys {self.key!r} and {other.key!r}")
        greater = _max_or_none(self.greater_than, other.greater_than)
        less = _min_or_none(self.less_than, other.less_than)
        min_values = _max_or_none(self.min_values, other.min_values)
        if greater is not None and less is not None and less - greater < 2:  # no integer in between
            return Requirement(self.key, False, frozenset(), min_values=min_values)
        complement = self.complement and other.complement
        if complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, greater, less))
        if not complement:
            greater = less = None
        return Requirement(self.key, complement, values, greater, less, min_values)

    def has_intersection(self, other: Requirement) -> bool:
        """Whether some value satisfies both; cheaper than ``len(intersection)``, for hot paths."""
        greater = _max_or_none(self.greater_than, other.greater_than)
        less = _min_or_none(self.less_than, other.less_than)
        if greater is not None and less is not None and less - greater < 2:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and _within(v, greater, less) for v in other.values)
        if other.complement:
            return any(v not in other.values and _within(v, greater, less) for v in self.values)
        return any(v in other.values and _within(v, greater, less) for v in self.values)

    def node_selector_requirements(self) -> list[NodeSelectorRequirementWithMinValues]:
        """As written on a NodeClaim: one entry, or Gte and Lte when bounded on both sides (NotIn values of a
        bounded requirement are dropped, as upstream does)."""
        entry = NodeSelectorRequirementWithMinValues
        bounds = []
        if self.greater_than is not None:
            bounds.append(entry(key=self.key, operator="Gte", values=[str(self.greater_than + 1)],
                                min_values=self.min_values))
        if self.less_than is not None:
            bounds.append(entry(key=self.key, operator="Lte", values=[str(self.less_than - 1)],
                                min_values=self.min_values))
        if bounds:
            return bounds
        return [entry(key=self.key, operator=self.operator, values=self.values_list(), min_values=self.min_values)]

    def __str__(self) -> str:
        """Upstream's ``Requirement.String``: ``zone In [a b]``, ``gen Exists >=6``, ``type In [...] minValues 3``."""
        operator = self.operator
        if operator in ("Exists", "DoesNotExist"):
            text = f"{self.key} {operator}"
        else:
            shown = self.values_list()
            if len(shown) > _SHOWN_VALUES:
                shown = [*shown[:_SHOWN_VALUES], f"and {len(shown) - _SHOWN_VALUES} others"]
            text = f"{self.key} {operator} [{' '.join(shown)}]"
        if self.greater_than is not None:
            text += f" >={self.greater_than + 1}"
        if self.less_than is not None:
            text += f" <={self.less_than - 1}"
        if self.min_values is not None:
            text += f" minValues {self.min_values}"
        return text

    def _within_bounds(self, value: str) -> bool:
        return _within(value, self.greater_than, self.less_than)


def _within(value: str, greater: int | None, less: int | None) -> bool:
    if greater is None and less is None:
        return True
    if not _INTEGER.fullmatch(value):
        return False  # bounds admit integers only
    number = int(value)
    return (greater is None or number > greater) and (less is None or number < less)


def _max_or_none(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min_or_none(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


@dataclass(frozen=True)
class MinValuesShortfall:
    """A requirement whose ``minValues`` the candidate instance types do not reach."""

    key: str
    min_values: int
    found: int

    def __str__(self) -> str:
        return (f'minValues requirement is not met for label "{self.key}": the instance types offer {self.found} '
                f"distinct value{'s' if self.found != 1 else ''}, {self.min_values} are required")


class _MinValuesCounter:
    """Distinct values per key with minValues, accumulated over instance-type requirements (scratch)."""

    def __init__(self, requirements: Requirements) -> None:
        self.wanted = {key: r.min_values for key, r in requirements.items() if r.min_values is not None}
        self.found: dict[str, set[str]] = {key: set() for key in self.wanted}

    def add(self, option: Requirements) -> None:
        for key, seen in self.found.items():
            requirement = option.get(key)
            if requirement is not None and not requirement.complement:
                seen.update(requirement.values)

    def shortfalls(self) -> list[MinValuesShortfall]:
        return [MinValuesShortfall(key, wanted, len(self.found[key]))
                for key, wanted in self.wanted.items() if len(self.found[key]) < wanted]


class Requirements(Mapping[str, Requirement]):
    """Requirements by label key; immutable (``add`` returns a new value), iterated in key order.

    Two requirements on one key are intersected, so a Requirements never holds more than one per key.
    """

    __slots__ = ("_by_key",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        by_key: dict[str, Requirement] = {}
        for requirement in requirements:
            existing = by_key.get(requirement.key)
            by_key[requirement.key] = requirement if existing is None else requirement.intersection(existing)
        self._by_key = dict(sorted(by_key.items()))

    # ---- constructors --------------------------------------------------------------------------------

    @classmethod
    def from_node_selector(
        cls, requirements: Iterable[NodeSelectorRequirementWithMinValues | NodeSelectorRequirement]
    ) -> Requirements:
        """From a NodePool's or NodeClaim's requirements (with minValues) or a node selector term's
        ``matchExpressions``; RequirementError for an operator or bound that cannot be read."""
        return cls(
            Requirement.create(r.key, r.operator, r.values,
                               r.min_values if isinstance(r, NodeSelectorRequirementWithMinValues) else None)
            for r in requirements
        )

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Requirements:
        """One single-valued ``In`` per label (a node's labels, a NodePool template's labels, a nodeSelector)."""
        return cls(Requirement.create(key, "In", [value]) for key, value in labels.items())

    @classmethod
    def from_pod(cls, pod: Pod | PodSpec) -> list[Requirements]:
        """The pod's hard node constraints: ``nodeSelector`` AND one required node affinity term, per term.

        Terms are ORed, and Karpenter tries them in order (``NewStrictPodRequirements`` takes the first and
        preference relaxation drops it when it cannot be met). ``matchFields`` is ignored, and a term
        without ``matchExpressions`` constrains nothing, as in Karpenter (kube-scheduler matches no node
        with an empty term).
        """
        spec = pod.spec if isinstance(pod, Pod) else pod
        base = cls.from_labels(spec.node_selector)
        affinity = spec.affinity.node_affinity if spec.affinity is not None else None
        required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
        terms = required.node_selector_terms if required is not None else []
        if not terms:
            return [base]
        return [base.add(cls.from_node_selector(term.match_expressions)) for term in terms]

    @classmethod
    def preferred_of(cls, pod: Pod | PodSpec) -> list[Requirements]:
        """The preferred node affinity terms, heaviest first (ties in written order).

        Karpenter adds the heaviest one to the pod's requirements and drops them one by one when the pod
        cannot be scheduled (``NewPodRequirements`` and ``Preferences.removePreferredNodeAffinityTerm``).
        """
        spec = pod.spec if isinstance(pod, Pod) else pod
        affinity = spec.affinity.node_affinity if spec.affinity is not None else None
        preferred = affinity.preferred_during_scheduling_ignored_during_execution if affinity else []
        ordered = sorted(preferred, key=lambda term: -term.weight)
        return [cls.from_node_selector(term.preference.match_expressions) for term in ordered]

    @classmethod
    def relaxations(cls, pod: Pod | PodSpec, respect_preferences: bool = True) -> list[Requirements]:
        """Every node requirement set Karpenter tries for a pod, in its order.

        First each required term (with the heaviest preference), then, on the last required term, the
        preferences one by one from the heaviest, and last no preference at all. ``respect_preferences``
        False is Karpenter's ``--preference-policy=Ignore``. (Pod affinity, topology spread and taint
        relaxations come between these steps but do not change node requirements.)
        """
        alternatives = cls.from_pod(pod)
        preferred = cls.preferred_of(pod) if respect_preferences else []
        if not preferred:
            return alternatives
        steps = [required.add(preferred[0]) for required in alternatives]
        steps += [alternatives[-1].add(preference) for preference in preferred[1:]]
        steps.append(alternatives[-1])
        return steps

    # ---- algebra ---------------------------------------------------------------------------------------

    def add(self, other: Requirements | Requirement) -> Requirements:
        """These requirements AND ``other`` (intersected per key); a new value, ``self`` is unchanged."""
        incoming = [other] if isinstance(other, Requirement) else list(other.values())
        return Requirements([*self._by_key.values(), *incoming])

    def for_key(self, key: str) -> Requirement:
        """The requirement on ``key``; Exists when the key is not constrained (upstream ``Get``)."""
        found = self._by_key.get(key)
        return found if found is not None else Requirement.exists(key)

    def compatible(self, other: Requirements, allow_undefined: AbstractSet[str] = frozenset()) -> str | None:
        """Can ``other`` (a pod's requirements) be met by nodes with these requirements (a NodeClaim's)?

        None when it can; otherwise Karpenter's reason. Every key of ``other`` must be defined here unless it
        is in ``allow_undefined`` (typically :data:`ALLOW_UNDEFINED_WELL_KNOWN`) or ``other`` only excludes
        values on it (NotIn, DoesNotExist); then the common keys must intersect (:meth:`intersects`).
        Karpenter's scheduler prefixes the reason with ``incompatible requirements, ``.
        """
        for key, requirement in other.items():
            if key in allow_undefined or key in self._by_key or requirement.operator in ("NotIn", "DoesNotExist"):
                continue
            return f'label "{key}" does not have known values{self._typo_hint(key, allow_undefined)}'
        return self.intersects(other)

    def is_compatible(self, other: Requirements, allow_undefined: AbstractSet[str] = frozenset()) -> bool:
        """:meth:`compatible` without building a reason, for hot paths."""
        for key, requirement in other.items():
            if key in allow_undefined or key in self._by_key or requirement.operator in ("NotIn", "DoesNotExist"):
                continue
            return False
        return self._first_disjoint(other) is None

    def intersects(self, other: Requirements) -> str | None:
        """None when every key both define has a common value, else why not (all such keys, ``; ``-joined).

        Keys defined on one side only are fine. Two requirements that both only exclude values (NotIn or
        DoesNotExist) never conflict: a node without the label satisfies both.
        """
        reasons = [f"key {key}, {other[key]} not in {self._by_key[key]}" for key in self._disjoint_keys(other)]
        return "; ".join(reasons) or None

    def _disjoint_keys(self, other: Requirements) -> Iterator[str]:
        for key, existing in self._by_key.items():
            incoming = other.get(key)
            if incoming is None or existing.has_intersection(incoming):
                continue
            if incoming.operator in ("NotIn", "DoesNotExist") and existing.operator in ("NotIn", "DoesNotExist"):
                continue
            yield key

    def _first_disjoint(self, other: Requirements) -> str | None:
        return next(self._disjoint_keys(other), None)

    def _typo_hint(self, key: str, allow_undefined: AbstractSet[str]) -> str:
        """Upstream's ``labelHint`` (a known key containing ``key`` or ending with its name part), made
        deterministic: a known key with the same name part wins, then upstream's rules over sorted
        candidates, then a spelling match."""
        name = key.split("/", 1)[1] if "/" in key else key
        candidates = [*sorted(allow_undefined), *self._by_key]
        same_name = [known for known in candidates if known.rsplit("/", 1)[-1] == name]
        if same_name:
            return f' (typo of "{same_name[0]}"?)'
        for known in candidates:
            contains = len(key) >= _MIN_HINT_MATCH and key in known
            if contains or (len(name) >= _MIN_HINT_MATCH and known.endswith(name)):
                return f' (typo of "{known}"?)'
        meant = close_match(key, candidates)
        return f' (typo of "{meant}"?)' if meant is not None and meant != key else ""

    # ---- derived values ------------------------------------------------------------------------------

    def labels(self) -> dict[str, str]:
        """The labels these requirements fix: every single-valued In (restricted labels excepted)."""
        return {
            key: next(iter(r.values))
            for key, r in self._by_key.items()
            if not r.complement and len(r.values) == 1 and key not in RESTRICTED_LABELS
        }

    @property
    def has_min_values(self) -> bool:
        return any(r.min_values is not None for r in self._by_key.values())

    def min_values_problems(self, options: Iterable[Requirements]) -> list[MinValuesShortfall]:
        """The ``minValues`` that ``options`` (the requirements of the compatible instance types) cannot meet:
        for each key with minValues, the distinct In values over all options must reach it. Sorted by key."""
        counter = _MinValuesCounter(self)
        for option in options:
            counter.add(option)
        return counter.shortfalls()

    def min_values_needed(self, options: Iterable[Requirements]) -> int | None:
        """How many of the first ``options`` (cheapest first) meet every ``minValues``: upstream's
        ``SatisfiesMinValues`` count; 0 without minValues, None when all of them together do not."""
        counter = _MinValuesCounter(self)
        if not counter.wanted:
            return 0
        for count, option in enumerate(options, 1):
            counter.add(option)
            if not counter.shortfalls():
                return count
        return None

    def node_selector_requirements(self) -> list[NodeSelectorRequirementWithMinValues]:
        """As written into a NodeClaim's ``spec.requirements``, in key order."""
        return [entry for r in self._by_key.values() for entry in r.node_selector_requirements()]

    # ---- Mapping and value protocol ----------------------------------------------------------------------

    def __getitem__(self, key: str) -> Requirement:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def __hash__(self) -> int:
        return hash(frozenset(self._by_key.items()))

    def __str__(self) -> str:
        """Upstream's ``Requirements.String``: sorted, ``, ``-joined, restricted labels left out."""
        return ", ".join(sorted(str(r) for key, r in self._by_key.items() if key not in RESTRICTED_LABELS))

    def __repr__(self) -> str:
        return f"Requirements({str(self)!r})"
