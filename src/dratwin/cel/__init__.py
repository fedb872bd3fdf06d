"""The DRA CEL environment: compile device selectors and match them against devices.

::

    compiler = SelectorCompiler(list_type_attributes=False)
    selector = compiler.compile('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) > 0')
    selector.matches(CelDevice.build("gpu.nvidia.com", device))   # bool, or CelRuntimeError

Errors: :class:`dratwin.errors.CelCompileError` from ``compile``, :class:`dratwin.errors.CelRuntimeError`
from ``matches``. Built on cel-expr-python (cel-cpp); see :mod:`dratwin.cel.environment` for what the
environment contains and what it does not.
"""

from dratwin.cel.compiler import CompiledSelector, SelectorCompiler
from dratwin.cel.device_view import CelDevice

__all__ = ["CelDevice", "CompiledSelector", "SelectorCompiler"]
