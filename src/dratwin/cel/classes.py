"""Which DeviceClasses select a device: every selector of the class true for it.

A class whose selector cannot be evaluated for the device (a CEL error) does not select it, as the
allocator treats such a device as unsuitable for that class.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from dratwin.api.resource import DeviceClass
from dratwin.cel.compiler import SelectorCompiler
from dratwin.cel.device_view import CelDevice
from dratwin.errors import CelError


def classes_selecting(
    classes: Mapping[str, DeviceClass], compiler: SelectorCompiler, view: CelDevice
) -> Iterator[str]:
    """The names of ``classes`` that select the device ``view``, in name order."""
    for name, device_class in sorted(classes.items()):
        try:
            if all(
                s.cel is not None and compiler.compile(s.cel.expression).matches(view)
                for s in device_class.spec.selectors
            ):
                yield name
        except CelError:
            continue
