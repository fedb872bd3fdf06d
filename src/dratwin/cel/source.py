"""What a selector's text says about the device, read from its tokens before it is compiled.

cel-expr-python does not expose the parsed expression, so a small CEL tokenizer (strings, comments,
identifiers, numbers, punctuation) finds how ``device.attributes`` and ``device.capacity`` are used:

- **lookups** ``device.attributes["d"].id`` (also ``["d"]["id"]``, ``.?id``, ``[?"id"]``, ``.d.id``):
  Kubernetes returns an empty map for a domain the device lacks, so every string literal (and every
  domain written as ``.d``) is added as an empty domain before evaluation;
- **whole-map uses** (``"d" in device.attributes``, ``device.attributes.size()``, iteration): these
  must see the device's real domains, so they are renamed to the hidden variables that hold the maps
  without the added domains (same length, so error positions do not move);
- **projection**: when every use is a lookup down to a literal id, the result depends only on the
  values at those ``(domain, id)`` paths (plus the driver and allowMultipleAllocations), so results
  can be shared between devices that agree on them, and only those values need to be sent to CEL.

It also finds known gaps (functions cel-expr-python cannot run) and constant regular expressions.
Tokenizing happens only on text that is then compiled, so a tokenizer error just means "no facts".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from dratwin.cel.environment import DEVICE_FIELDS, HIDDEN_FIELD

ATTRIBUTE, CAPACITY = "attributes", "capacity"
# `"d" in device.attributes`: whether the device has the domain at all (the id is "").
ATTRIBUTE_DOMAIN, CAPACITY_DOMAIN = "attributes-domain", "capacity-domain"
DOMAIN_KIND = {ATTRIBUTE: ATTRIBUTE_DOMAIN, CAPACITY: CAPACITY_DOMAIN}
Path = tuple[str, str, str]  # (kind, domain, id)

# Functions cel-expr-python 0.1.3 declares but cannot evaluate ("No overload found in reference
# resolve step for cel.@mapInsert"): two-variable comprehensions that build maps.
UNRUNNABLE = {
    "transformMap": "two-variable transformMap() cannot be evaluated by cel-expr-python 0.1.3 (no map-building "
    "step in its runtime); use transformList() or map()",
    "transformMapEntry": "transformMapEntry() cannot be evaluated by cel-expr-python 0.1.3 (no map-building step "
    "in its runtime); use transformList() or map()",
}
REGEX_FUNCTIONS = frozenset({"matches", "find", "findAll"})
# Tokens after which a new operand starts, and tokens that end an operand of `in` (lower precedence).
_OPERAND_START = frozenset({"(", "&&", "||", ",", "?", ":", "[", "{"})
_OPERAND_END = frozenset({"&&", "||", ")", "?", ":", ",", "]", "}", "==", "!="})

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<raw>(?:[rR][bB]?|[bB][rR])(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"[^"\n]*"|'[^'\n]*'))
  | (?P<string>[bB]?(?:\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\"|'''(?:\\[\s\S]|[^\\])*?'''
                     |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<punct>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
  | (?P<bad>.)
    """,
    re.VERBOSE,
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "`": "`",
    "?": "?",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}


class Token(NamedTuple):  # a NamedTuple: tokenizing creates many, and these are cheap to create
    kind: str  # "string", "number", "ident", "punct"
    text: str
    start: int
    value: str | None = None  # decoded string literal; None when it holds escapes not decoded here


class TokenizeError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Problem:
    """Something the text uses that dratwin cannot run; reported as a compile error at ``start``."""

    start: int
    message: str
    hint: str


@dataclass
class SourceFacts:
    """What :func:`analyze` learnt. ``paths`` is ``None`` when the expression is not projectable."""

    text: str  # the text to compile: whole-map uses renamed to the hidden variables
    domains: frozenset[str] = frozenset()
    paths: tuple[Path, ...] | None = ()
    lookups: tuple[Path, ...] = ()  # every literal (kind, domain, id) lookup, for error messages
    problems: list[Problem] = field(default_factory=list)
    regexes: list[tuple[int, str, str]] = field(default_factory=list)  # (start, function, pattern)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "space":
            continue
        if kind == "bad":
            raise TokenizeError(f"unexpected character at {match.start()}")
        word = match.group()
        if kind == "raw":
            tokens.append(Token("string", word, match.start(), _body(word)))
        elif kind == "string":
            body = _body(word)
            tokens.append(Token("string", word, match.start(), _unescape(body) if "\\" in body else body))
        else:
            tokens.append(Token(kind or "", word, match.start()))
    return tokens


def _body(literal: str) -> str:
    quote_at = min(i for i in (literal.find('"'), literal.find("'")) if i >= 0)
    width = 3 if literal[quote_at : quote_at + 3] in ('"""', "'''") else 1
    return literal[quote_at + width : len(literal) - width]


def _unescape(body: str) -> str | None:
    """Simple escapes decoded; None for \\x, \\u and octal ones (rare in selectors, not decoded here)."""
    if any(m.group(1) not in _SIMPLE_ESCAPES for m in _ESCAPE.finditer(body)):
        return None
    return _ESCAPE.sub(lambda m: _SIMPLE_ESCAPES[m.group(1)], body)


def analyze(text: str) -> SourceFacts:
    """Facts about ``text``; on a tokenizer error, the text unchanged and no facts (not projectable)."""
    try:
        tokens = tokenize(text)
    except TokenizeError:
        return SourceFacts(text, paths=None)
    return _Analyzer(text, tokens).run()


class _Analyzer:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.domains: set[str] = {t.value for t in tokens if t.kind == "string" and t.value is not None}
        self.paths: list[Path] = []
        self.projectable = True
        self.renames: list[Token] = []
        self.problems: list[Problem] = []
        self.regexes: list[tuple[int, str, str]] = []

    def is_(self, index: int, kind: str, text: str | None = None) -> bool:
        if index >= len(self.tokens):
            return False
        token = self.tokens[index]
        return token.kind == kind and (text is None or token.text == text)

    def run(self) -> SourceFacts:
        for i, token in enumerate(self.tokens):
            if token.kind != "ident":
                continue
            after_dot = i > 0 and self.is_(i - 1, "punct", ".")
            if token.text == "device" and not after_dot:
                self._device(i)
            elif after_dot and token.text in UNRUNNABLE and self.is_(i + 1, "punct", "("):
                self.problems.append(
                    Problem(token.start, f"{token.text}() is not supported by dratwin", UNRUNNABLE[token.text])
                )
            elif after_dot and token.text in REGEX_FUNCTIONS and self.is_(i + 1, "punct", "("):
                pattern = self.tokens[i + 2] if i + 2 < len(self.tokens) else None
                if (
                    pattern is not None
                    and pattern.kind == "string"
                    and pattern.value is not None
                    and (self.is_(i + 3, "punct", ")") or self.is_(i + 3, "punct", ","))
                ):
                    self.regexes.append((pattern.start, token.text, pattern.value))
        text = self.text
        for token in sorted(self.renames, key=lambda t: t.start, reverse=True):
            hidden = HIDDEN_FIELD[token.text]
            text = text[: token.start] + hidden + text[token.start + len(token.text) :]
        lookups = tuple(dict.fromkeys(self.paths))
        return SourceFacts(
            text=text,
            domains=frozenset(self.domains),
            paths=lookups if self.projectable else None,
            lookups=lookups,
            problems=self.problems,
            regexes=self.regexes,
        )

    def _device(self, i: int) -> None:
        device = self.tokens[i]
        if not (self.is_(i + 1, "punct", ".") and self.is_(i + 2, "ident")):
            if self.is_(i + 1, "punct", ","):
                # `device` as a comprehension or cel.bind variable would shadow the device's fields.
                self.problems.append(
                    Problem(
                        device.start,
                        "the name device cannot be rebound in dratwin",
                        "pick another variable name; device is reserved for the device's fields",
                    )
                )
            return
        field_token = self.tokens[i + 2]
        if field_token.text not in DEVICE_FIELDS:
            return  # the checker reports the unknown field
        in_has = i >= 2 and self.is_(i - 1, "punct", "(") and self.is_(i - 2, "ident", "has")
        if in_has and self.is_(i + 3, "punct", ")"):
            self.problems.append(
                Problem(
                    self.tokens[i - 2].start,
                    f"has(device.{field_token.text}) is not supported by dratwin",
                    "the fields of device are always present (Kubernetes returns true); remove the has() test",
                )
            )
            return
        if field_token.text in (ATTRIBUTE, CAPACITY):
            self._map_use(field_token.text, field_token, i + 3, self._member(i))

    def _member(self, i: int) -> str | None:
        """The literal ``x`` of ``"x" in device...`` when the device operand starts at ``i``."""
        if i < 2 or not (self.is_(i - 1, "ident", "in") and self.is_(i - 2, "string")):
            return None
        if i >= 3 and not (self.tokens[i - 3].kind == "punct" and self.tokens[i - 3].text in _OPERAND_START):
            return None  # e.g. `a == "x" in m`: the left operand of `in` is not the string
        return self.tokens[i - 2].value

    def _ends_operand(self, j: int) -> bool:
        return j >= len(self.tokens) or (self.tokens[j].kind == "punct" and self.tokens[j].text in _OPERAND_END)

    def _map_use(self, kind: str, field_token: Token, j: int, member: str | None) -> None:
        """Classify the use of a device map whose next token is at ``j``; ``member`` is the ``x`` of
        ``"x" in ...`` around it."""
        domain: str | None = None
        if self.is_(j, "punct", "[") and self.is_(j + 1, "string") and self.is_(j + 2, "punct", "]"):
            domain, j = self.tokens[j + 1].value, j + 3
        elif self.is_(j, "punct", ".") and self.is_(j + 1, "ident") and not self.is_(j + 2, "punct", "("):
            domain, j = self.tokens[j + 1].text, j + 2
            self.domains.add(domain)
        elif self.is_(j, "punct", "[") or (self.is_(j, "punct", ".") and self.is_(j + 1, "punct", "?")):
            self.projectable = False  # a computed or optional domain: a lookup, but not a fixed path
            return
        else:
            # The map as a whole: it must not see the added empty domains.
            self.renames.append(field_token)
            if member is not None and self._ends_operand(j):
                self.paths.append((DOMAIN_KIND[kind], member, ""))  # depends only on that domain's presence
            else:
                self.projectable = False
            return
        if domain is None:
            self.projectable = False
            return
        ident = self._leaf(j)
        if ident is None and member is not None and self._ends_operand(j):
            ident = member  # `"id" in device.attributes["d"]` depends only on that id's presence
        if ident is None:
            self.projectable = False  # the domain's map as a whole (iteration, size, bind)
        else:
            self.paths.append((kind, domain, ident))

    def _leaf(self, j: int) -> str | None:
        """The id looked up at ``j`` (``.id``, ``.?id``, ``["id"]``, ``[?"id"]``), or None."""
        if self.is_(j, "punct", "."):
            k = j + 2 if self.is_(j + 1, "punct", "?") else j + 1
            if self.is_(k, "ident") and not self.is_(k + 1, "punct", "("):
                return self.tokens[k].text
            return None
        if self.is_(j, "punct", "["):
            k = j + 2 if self.is_(j + 1, "punct", "?") else j + 1
            if self.is_(k, "string") and self.is_(k + 1, "punct", "]"):
                return self.tokens[k].value
        return None
