"""String formats of the Kubernetes API (DNS names, qualified names, label values, semver) and typo hints.

Every checker returns the list of things wrong with a value (empty when it is valid), worded for the
user; the rules are those of apimachinery's ``util/validation`` and the resource API.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
DRIVER_NAME_MAX = 63
C_IDENTIFIER_MAX = 32  # resource.DeviceMaxIDLength
LABEL_VALUE_MAX = 63

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUALIFIED_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
# semver.org 2.0.0: numeric parts without leading zeros, optional pre-release and build metadata.
_NUMBER = r"(0|[1-9][0-9]*)"
_PRERELEASE_ID = r"(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"{_NUMBER}\.{_NUMBER}\.{_NUMBER}(-{_PRERELEASE_ID}(\.{_PRERELEASE_ID})*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?"
)

_LABEL_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit"
_SUBDOMAIN_RULE = (
    "lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit"
)


def dns_label(value: str) -> list[str]:
    """An RFC 1123 label: request, device, counter and namespace names."""
    errors = []
    if len(value) > DNS_LABEL_MAX:
        errors.append(f"must be at most {DNS_LABEL_MAX} characters (has {len(value)})")
    if not _DNS_LABEL.fullmatch(value):
        errors.append(f"must be a DNS label: {_LABEL_RULE}")
    return errors


def dns_subdomain(value: str) -> list[str]:
    """An RFC 1123 subdomain: object names, device class names, node names."""
    errors = []
    if len(value) > DNS_SUBDOMAIN_MAX:
        errors.append(f"must be at most {DNS_SUBDOMAIN_MAX} characters (has {len(value)})")
    if not _DNS_SUBDOMAIN.fullmatch(value):
        errors.append(f"must be a DNS subdomain: {_SUBDOMAIN_RULE}")
    return errors


def driver_name(value: str) -> list[str]:
    """A DRA driver name (like a CSI driver name): a DNS subdomain of at most 63 characters; case is ignored."""
    errors = []
    if len(value) > DRIVER_NAME_MAX:
        errors.append(f"must be at most {DRIVER_NAME_MAX} characters (has {len(value)})")
    if not _DNS_SUBDOMAIN.fullmatch(value.lower()):
        errors.append(f"must be a DNS subdomain such as gpu.example.com: {_SUBDOMAIN_RULE}")
    return errors


def c_identifier(value: str) -> list[str]:
    """The id part of an attribute or capacity name: a C identifier of at most 32 characters."""
    errors = []
    if len(value) > C_IDENTIFIER_MAX:
        errors.append(f"the name part must be at most {C_IDENTIFIER_MAX} characters (has {len(value)})")
    if not _C_IDENTIFIER.fullmatch(value):
        errors.append("the name part must be a C identifier: letters, digits and '_', not starting with a digit")
    return errors


def resource_qualified_name(value: str) -> list[str]:
    """An attribute or capacity name: ``id`` or ``domain/id`` (domain like a driver name)."""
    return list(_resource_qualified_name(value))  # a copy: callers may extend it


@functools.lru_cache(maxsize=4096)  # 100,000 devices repeat the same few names
def _resource_qualified_name(value: str) -> tuple[str, ...]:
    return tuple(_check_resource_qualified_name(value))


def _check_resource_qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return ["must be `id` or `domain/id` with at most one '/'"]
    if len(parts) == 1:
        return c_identifier(value)
    domain, ident = parts
    errors = [f"domain {e}" for e in driver_name(domain)] if domain else ["the domain before '/' must not be empty"]
    errors += c_identifier(ident) if ident else ["the name after '/' must not be empty"]
    return errors


def fully_qualified_name(value: str) -> list[str]:
    """A constraint attribute: ``domain/id``, the domain is required."""
    errors = resource_qualified_name(value)
    if "/" not in value:
        errors.append("must be fully qualified as domain/name (e.g. resource.kubernetes.io/pcieRoot or "
                      f"gpu.nvidia.com/{value or 'name'})")
    return errors


def label_key(value: str) -> list[str]:
    """A label, annotation, taint or toleration key: ``[prefix/]name``."""
    if not value:
        return ["must not be empty"]
    prefix, slash, name = value.rpartition("/")
    errors = []
    if slash and value.count("/") > 1:
        return ["must be [prefix/]name with at most one '/'"]
    if slash:
        errors += [f"prefix {e}" for e in dns_subdomain(prefix)] if prefix else ["the prefix before '/' is empty"]
    if len(name) > LABEL_VALUE_MAX:
        errors.append(f"the name part must be at most {LABEL_VALUE_MAX} characters (has {len(name)})")
    if not _QUALIFIED_PART.fullmatch(name):
        errors.append("the name part must consist of letters, digits, '-', '_' or '.', "
                      "starting and ending with a letter or digit")
    return errors


def label_value(value: str) -> list[str]:
    if not value:
        return []
    errors = []
    if len(value) > LABEL_VALUE_MAX:
        errors.append(f"must be at most {LABEL_VALUE_MAX} characters (has {len(value)})")
    if not _QUALIFIED_PART.fullmatch(value):
        errors.append("must be empty or consist of letters, digits, '-', '_' or '.', "
                      "starting and ending with a letter or digit")
    return errors


def semver(value: str) -> list[str]:
    if _SEMVER.fullmatch(value):
        return []
    return ["must be a semantic version (semver.org 2.0.0) such as 1.2.3 or 1.2.3-rc.1, without a leading 'v' "
            "or leading zeros"]


def suggest_semver(value: str) -> str | None:
    """``v12.4`` → ``12.4.0``, ``535.104.05`` → ``535.104.5``: the closest valid version, when obvious."""
    numbers = value.lstrip("vV").split(".")
    if not 1 <= len(numbers) <= 3 or not all(n.isdigit() for n in numbers):
        return None
    fixed = ".".join(str(int(n)) for n in numbers + ["0"] * (3 - len(numbers)))
    return fixed if fixed != value else None


def suggest_dns(value: str, subdomain: bool) -> str | None:
    """A valid name close to ``value`` (lowercased, invalid characters replaced), or None."""
    allowed = "-." if subdomain else "-"
    fixed = "".join(c if c.isascii() and (c.isalnum() or c in allowed) else "-" for c in value.lower())
    fixed = re.sub(r"-+", "-", fixed)
    fixed = re.sub(r"[-.]*\.[-.]*", ".", fixed) if subdomain else fixed
    fixed = fixed.strip("-.")[: DNS_SUBDOMAIN_MAX if subdomain else DNS_LABEL_MAX].strip("-.")
    return fixed if fixed and fixed != value else None


def close_match(value: str, candidates: Iterable[str]) -> str | None:
    """The candidate the user most likely meant: same text ignoring case, else the nearest spelling."""
    options = sorted(set(candidates))
    for option in options:
        if option.lower() == value.lower():
            return option
    found = difflib.get_close_matches(value, options, n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(value: str, candidates: Iterable[str]) -> str:
    match = close_match(value, candidates)
    return f'did you mean "{match}"?' if match and match != value else ""


SHORT_TEXT = 60  # characters of a long value kept in a message
LONG_TEXT = 2 * SHORT_TEXT  # longer values are shortened; up to this, cutting would hide as much as it saves
_LONG_WORD = re.compile(rf"[^\s\"'/]{{{LONG_TEXT + 1},}}")  # a name, value or word; not its quotes


def shorten(text: str, keep: int = SHORT_TEXT) -> str:
    """A long value as its first ``keep`` characters and its length: ``aaaa… (1,000,000 characters)``.

    Values of up to :data:`LONG_TEXT` characters stay whole.
    """
    if len(text) <= max(keep, LONG_TEXT):
        return text
    return f"{text[:keep]}… ({len(text):,} characters)"


def shorten_words(text: str) -> str:
    """``text`` with every name or value longer than :data:`LONG_TEXT` shortened (quotes and slashes delimit them)."""
    if len(text) <= LONG_TEXT:
        return text
    return _LONG_WORD.sub(lambda match: shorten(match.group()), text)
