"""Texts for the loader's tests: large dumps in kubectl's layout, and hostile inputs."""

from __future__ import annotations


def alias_bomb() -> str:
    """The 'billion laughs': nine anchors, each nine aliases of the one before (under 500 bytes)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def dump_entry(index: int) -> str:
    """One ConfigMap as ``kubectl get -o yaml`` lists it inside a ``kind: List`` (entries at column 0)."""
    return (
        f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: config-{index}\n    namespace: default\n"
        f"    labels:\n      app: demo\n      tier: 'true'\n  data:\n    index: '{index}'\n"
        f"    note: a plain sentence, with a comma and a colon:inside it\n"
    )


def large_manifest(entries: int = 3000, extra: str = "", at: int = 2500) -> str:
    """A ``kind: List`` of ``entries`` ConfigMaps (past the fast path's threshold); ``extra`` is written inside
    entry ``at``, right after its ``kind`` line."""
    parts = ["apiVersion: v1\nitems:\n"]
    for index in range(entries):
        entry = dump_entry(index)
        if index == at and extra:
            head, _, rest = entry.partition("  kind: ConfigMap\n")
            entry = head + "  kind: ConfigMap\n" + extra + rest
        parts.append(entry)
    parts.append("kind: List\nmetadata:\n  resourceVersion: ''\n")
    return "".join(parts)


def line_of(text: str, needle: str) -> int:
    """The 1-based line ``needle`` first appears on."""
    return text[: text.index(needle)].count("\n") + 1
