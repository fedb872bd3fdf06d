"""Kubernetes' CEL regex library (``find``, ``findAll``) on cel-cpp's RE2.

Kubernetes uses Go's regexp (RE2 syntax). Python's ``re`` accepts other syntax (look-arounds,
back-references) and reads some RE2 syntax differently (``[[:alpha:]]``), so the matching is done
by RE2 itself: through cel-cpp's ``regex.extract``/``regex.extractAll``, evaluated from inside the
function. ``extract`` returns the capture group when the pattern has one, so the pattern's groups
are made non-capturing and the whole pattern wrapped in one group first.

Known difference: ``findAll`` leaves out empty matches (cel-cpp's ``extractAll`` skips them; Go
keeps those that do not touch the previous match).
"""

from __future__ import annotations

import functools
from typing import Any

from cel_expr_python import cel

from dratwin.cel.library import function, overload

T = cel.Type


@functools.cache
def _programs() -> tuple[Any, Any, Any]:
    config = cel.NewEnvConfigFromYaml("extensions:\n  - name: regex\n  - name: optional\n")
    env = cel.NewEnv(config=config, variables={"s": T.STRING, "p": T.STRING})
    return (
        env.compile("s.matches(p)"),
        env.compile('regex.extract(s, p).orValue("")'),
        env.compile("regex.extractAll(s, p)"),
    )


@functools.lru_cache(maxsize=1024)
def re2_error(pattern: str) -> str | None:
    """Why RE2 rejects ``pattern`` (``None`` when it is valid)."""
    result = _programs()[0].eval(data={"s": "", "p": pattern})
    if result.type() == T.ERROR:
        text = str(result.value())
        return text.split(": ", 1)[1] if text[:1].isupper() and ": " in text else text
    return None


@functools.lru_cache(maxsize=1024)
def _whole_match(pattern: str) -> str:
    """``pattern`` with every group non-capturing, wrapped in one capturing group."""
    error = re2_error(pattern)
    if error is not None:
        raise ValueError(f"Illegal regex: {error}")
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("\\Q", i):  # literal text up to \E: parentheses there are not groups
                end = pattern.find("\\E", i + 2)
                stop = n if end < 0 else end + 2
                out.append(pattern[i:stop])
                i = stop
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) >= 0:
                out.append(pattern[i : end + 2])
                i = end + 2
                continue
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            start = i
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # a leading ] is a literal member of the class
                i += 1
            out.append(pattern[start:i])
            continue
        if c == "(":
            named = pattern.startswith("(?P<", i) or (
                pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i)
            )
            if named and (end := pattern.find(">", i)) >= 0:
                out.append("(?:")
                i = end + 1
                continue
            if not pattern.startswith("(?", i):
                out.append("(?:")
                i += 1
                continue
        out.append(c)
        i += 1
    return "(" + "".join(out) + ")"


def _find(text: str, pattern: str) -> str:
    result = _programs()[1].eval(data={"s": text, "p": _whole_match(pattern)})
    return str(result.value())


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    result = _programs()[2].eval(data={"s": text, "p": _whole_match(pattern)})
    matches = [str(m) for m in result.plain_value()]
    return matches if limit < 0 else matches[:limit]


def extension() -> cel.CelExtension:
    strings = T.List(T.STRING)
    return cel.CelExtension(
        "dratwin.k8s.regex",
        [
            function("find", overload("string_find_string", T.STRING, [T.STRING, T.STRING], _find, member=True)),
            function(
                "findAll",
                overload("string_find_all_string", strings, [T.STRING, T.STRING], _find_all, member=True),
                overload("string_find_all_string_int", strings, [T.STRING, T.STRING, T.INT], _find_all, member=True),
            ),
        ],
    )
