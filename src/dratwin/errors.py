"""The exception tree of dratwin.

An expected "no" (a claim that does not fit on a node) is returned as a value; exceptions are for bad
input and for problems the user has to fix::

    DratwinError
    ├── InputError               a file cannot be read or parsed, an unknown kind (exit status 2)
    ├── ObjectDecodeError        an object's fields have the wrong shape (field path included)
    ├── QuantityError            a Kubernetes quantity that does not parse
    ├── CelError
    │   ├── CelCompileError      a selector that does not compile (position and hint)
    │   └── CelRuntimeError      a selector that fails on a device (missing attribute, wrong type)
    └── AllocationError          the allocator rejects its input (upstream returns an error)
"""

from __future__ import annotations


class DratwinError(Exception):
    """Root of every error dratwin raises on purpose."""


class InputError(DratwinError):
    """A file that cannot be read or parsed, or an object of a kind dratwin does not know."""


class ObjectDecodeError(DratwinError):
    """An object whose fields do not have the types the API defines."""


class QuantityError(DratwinError, ValueError):
    """A string that is not a Kubernetes quantity."""


class CelError(DratwinError):
    """A problem with a CEL device selector."""


class CelCompileError(CelError):
    """A CEL expression that does not compile in the DRA environment.

    ``line`` and ``column`` are 1-based positions inside the expression (0 when unknown).
    """

    def __init__(self, expression: str, message: str, line: int = 0, column: int = 0, hint: str = "") -> None:
        self.expression = expression
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f" at line {self.line}, column {self.column}" if self.line else ""
        text = f"CEL compile error{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class CelRuntimeError(CelError):
    """A CEL expression that failed while evaluating one device."""

    def __init__(self, expression: str, message: str, hint: str = "") -> None:
        self.expression = expression
        self.message = message
        self.hint = hint
        text = f"CEL runtime error: {message}"
        super().__init__(f"{text} ({hint})" if hint else text)


class AllocationError(DratwinError):
    """The allocator refuses its input, as upstream returns an error (not "cannot allocate").

    ``subject`` names the object at fault as ``(kind, name)`` (``("ResourceClaim", "ns/name")``),
    ``location`` where it was written (``file:line``) once a caller that knows it has added it."""

    def __init__(self, message: str, *, subject: tuple[str, str] | None = None, location: str = "") -> None:
        self.message = message
        self.subject = subject
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)

    def locate(self, location: str) -> None:
        """Say where the subject was written; the first location given is kept."""
        if location and not self.location:
            self.location = location
            self.args = (f"{location}: {self.message}",)
