"""The names, uids and hashes the API server and the workload controllers give the objects they create.

Each follows the upstream function named in its docstring; the random parts are drawn from the ``rng``
the caller passes, so that a seed makes a run reproducible.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from typing import Any

from dratwin.api.codec import split_api_version

Raw = dict[str, Any]

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""``k8s.io/apimachinery/pkg/util/rand`` alphanums: no vowels (no words), no 0/1/3 (no look-alikes)."""

RANDOM_SUFFIX_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = 58  # names.MaxGeneratedNameLength: 63 minus the random suffix
MAX_SUBDOMAIN_LENGTH = 253


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped onto :data:`SAFE_ALPHABET`."""
    return "".join(SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in text.encode())


def random_suffix(rng: random.Random, length: int = RANDOM_SUFFIX_LENGTH) -> str:
    """``utilrand.String(5)``, drawn from ``rng``."""
    return "".join(rng.choice(SAFE_ALPHABET) for _ in range(length))


def generated_name(generate_name: str, rng: random.Random) -> str:
    """The name the API server gives an object created with ``generateName`` (base cut to 58 characters)."""
    return generate_name[:MAX_GENERATED_NAME_LENGTH] + random_suffix(rng)


def template_hash(template: Any) -> str:
    """A stable hash of a pod template in the shape of ``controller.ComputeHash`` (FNV-32a, safe-encoded)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    value = 0x811C9DC5
    for byte in data.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(value))


_UID_NAMESPACE = uuid.UUID("6f1c8e2a-3b7d-5e4f-9a10-d7a7f1e0c0de")


def object_uid(api_version: str, kind: str, namespace: str, name: str) -> str:
    """A deterministic uid for an object that has none: the same object always gets the same uid.

    It is ``uuid.uuid5(_UID_NAMESPACE, "group/kind/namespace/name")``, computed without the UUID object
    (seven times faster; every pod and generated claim gets one)."""
    group = split_api_version(api_version)[0]
    digest = bytearray(hashlib.sha1(_UID_NAMESPACE.bytes + f"{group}/{kind}/{namespace}/{name}".encode()).digest())
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    text = digest[:16].hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def controller_reference(api_version: str, kind: str, name: str, uid: str) -> Raw:
    """``metav1.NewControllerRef``: controller and blockOwnerDeletion set."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def pods_prefix(controller_name: str) -> str:
    """``controller.getPodsPrefix``: ``<name>-`` unless that would not be a valid name prefix."""
    prefix = f"{controller_name}-"
    return prefix if len(prefix) <= MAX_SUBDOMAIN_LENGTH else controller_name


def indexed_job_generate_name(job_name: str, index: int) -> str:
    """``podGenerateNameWithIndex``: ``<job>-<index>-``, the job name cut so the index survives."""
    append = f"-{index}-"
    prefix = job_name + append
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(append)] + append
    return prefix
