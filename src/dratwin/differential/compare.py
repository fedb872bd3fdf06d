"""Comparing an allocator's answer with an expectation, by the conformance suite's rules.

An *answer* is what ``dratwin allocate -o json`` prints (and what the oracle prints per variant):
``{"result": "allocated" | "unsatisfiable" | "error" | "timeout", "allocations": {"ns/claim":
AllocationResult}, "error": "..."}``. An *expectation* is a case's ``expect`` mapping. The rules:

- the result kinds must be equal; error texts are never compared (they are reported);
- per claim, devices are a multiset (request, driver, pool, device, adminAccess, tolerations,
  shareID as "a generated one", consumedCapacity as exact quantities, binding conditions), unless
  the expectation has ``config``: then the devices' order and the config must match exactly;
- node selectors are compared as sets of terms of sets of requirements with sets of values;
- absent, null, false and empty are alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

PLACEHOLDER_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

AGREE = "agree"
OUTCOME = "outcome differs"
DEVICES = "devices differ"
ERROR = "error vs not"
TIMEOUT = "timeout"
CATEGORIES = (OUTCOME, DEVICES, ERROR, TIMEOUT)

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)$")


@dataclass(frozen=True)
class Verdict:
    """How an answer relates to an expectation: a category (``agree`` or one of CATEGORIES) and why."""

    category: str
    problems: tuple[str, ...] = field(default=())

    @property
    def agrees(self) -> bool:
        return self.category == AGREE


def quantity(value: Any) -> Decimal | str:
    """A Kubernetes quantity as an exact number; text that is not one is compared as written."""
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if match is None:
        return text
    number, suffix = match.groups()
    try:
        amount = Decimal(number)
    except InvalidOperation:
        return text
    if suffix in _BINARY:
        return amount * (Decimal(2) ** _BINARY[suffix])
    if suffix[:1] in ("e", "E"):
        return amount.scaleb(int(suffix[1:]))
    return amount.scaleb(_DECIMAL[suffix])


def _exact(value: Any) -> str:
    """A quantity's exact value as text, the same for every way of writing it (1Gi, 1024Mi)."""
    amount = quantity(value)
    return str(amount.normalize()) if isinstance(amount, Decimal) else amount


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def device_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    """One device result, normalized: what must be equal for two results to be the same."""
    consumed = entry.get("consumedCapacity") or {}
    return (
        entry.get("request"),
        entry.get("driver"),
        entry.get("pool"),
        entry.get("device"),
        bool(entry.get("adminAccess")),
        _frozen(entry.get("tolerations") or []),
        "<generated>" if entry.get("shareID") else None,
        tuple(sorted((str(name), _exact(amount)) for name, amount in consumed.items())),
        tuple(entry.get("bindingConditions") or ()),
        tuple(entry.get("bindingFailureConditions") or ()),
    )


def selector_key(selector: Mapping[str, Any] | None) -> frozenset[Any] | None:
    if not selector:
        return None
    terms = set()
    for term in selector.get("nodeSelectorTerms") or []:
        parts = tuple(
            frozenset(
                (r.get("key"), r.get("operator"), frozenset(r.get("values") or [])) for r in term.get(kind) or []
            )
            for kind in ("matchExpressions", "matchFields")
        )
        terms.add(parts)
    return frozenset(terms)


def compare_claim(name: str, want: Mapping[str, Any], got: Mapping[str, Any] | None) -> list[str]:
    """Problems of one claim's allocation (``got``: an AllocationResult) against its expectation."""
    if got is None:
        return [f"{name}: no allocation in the answer"]
    devices = (got.get("devices") or {}).get("results") or []
    config = (got.get("devices") or {}).get("config") or []
    wanted = want.get("devices") or []
    problems = []
    if "config" in want:
        if [device_key(d) for d in devices] != [device_key(d) for d in wanted]:
            problems.append(f"{name}: devices (in order) differ: want {_names(wanted)}, got {_names(devices)}")
        if _frozen(config) != _frozen(want["config"] or []):
            problems.append(f"{name}: config differs: want {want['config']}, got {config}")
    else:
        if sorted(map(repr, map(device_key, devices))) != sorted(map(repr, map(device_key, wanted))):
            problems.append(f"{name}: devices differ: want {_names(wanted)}, got {_names(devices)}")
        if config:
            problems.append(f"{name}: unexpected config {config}")
    if selector_key(want.get("nodeSelector")) != selector_key(got.get("nodeSelector")):
        problems.append(f"{name}: nodeSelector differs: want {want.get('nodeSelector')}, got {got.get('nodeSelector')}")
    return problems


def _names(devices: list[Mapping[str, Any]]) -> list[str]:
    """Devices as ``request->driver/pool/device`` plus what else is set, for readable messages."""
    shown = []
    for entry in devices:
        text = f"{entry.get('request')}->{entry.get('driver')}/{entry.get('pool')}/{entry.get('device')}"
        extras = [k for k in ("adminAccess", "shareID", "tolerations", "bindingConditions") if entry.get(k)]
        if entry.get("consumedCapacity"):
            extras.append(f"consumed {dict(entry['consumedCapacity'])}")
        shown.append(f"{text} ({', '.join(extras)})" if extras else text)
    return shown


def compare(expect: Mapping[str, Any], answer: Mapping[str, Any]) -> Verdict:
    """The verdict on ``answer`` against the expectation ``expect`` (see the module docstring)."""
    want, got = expect.get("result"), answer.get("result")
    if want != got and TIMEOUT in (want, got):
        return Verdict(TIMEOUT, (f"result {got!r}, want {want!r}",))
    if (want == "error") != (got == "error"):
        detail = answer.get("error") if got == "error" else expect.get("errorContains")
        return Verdict(ERROR, (f"result {got!r}, want {want!r}" + (f" ({detail})" if detail else ""),))
    if want != got:
        return Verdict(OUTCOME, (f"result {got!r}, want {want!r}",))
    if want != "allocated":
        return Verdict(AGREE)
    allocations = answer.get("allocations") or {}
    problems: list[str] = []
    wanted = expect.get("allocations") or {}
    for claim, claim_want in wanted.items():
        claim_got = allocations.get(f"default/{claim}", allocations.get(claim))
        problems += compare_claim(claim, claim_want, claim_got)
    extra = sorted({key.split("/")[-1] for key in allocations} - set(wanted))
    if extra:
        problems.append(f"unexpected allocations for {extra}")
    return Verdict(DEVICES, tuple(problems)) if problems else Verdict(AGREE)


def expect_from_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """An answer as a case's ``expect``: claims by name, device results with the fields the rules
    read, generated shareIDs as the placeholder, config kept (which makes the order significant)."""
    result = answer.get("result")
    if result == "error":
        return {"result": "error", "errorContains": str(answer.get("error") or "")}
    if result != "allocated":
        return {"result": result}
    allocations: dict[str, Any] = {}
    for key, allocation in (answer.get("allocations") or {}).items():
        devices = allocation.get("devices") or {}
        entry: dict[str, Any] = {"devices": [_expected_device(d) for d in devices.get("results") or []]}
        if devices.get("config"):
            entry["config"] = devices["config"]
        if allocation.get("nodeSelector"):
            entry["nodeSelector"] = allocation["nodeSelector"]
        allocations[key.split("/")[-1]] = entry
    return {"result": "allocated", "allocations": allocations}


_DEVICE_FIELDS = (
    "request", "driver", "pool", "device", "adminAccess", "tolerations", "shareID", "consumedCapacity",
    "bindingConditions", "bindingFailureConditions",
)


def _expected_device(entry: Mapping[str, Any]) -> dict[str, Any]:
    kept = {name: entry[name] for name in _DEVICE_FIELDS if entry.get(name)}
    if "shareID" in kept:
        kept["shareID"] = PLACEHOLDER_SHARE_ID
    return kept
