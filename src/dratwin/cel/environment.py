"""The DRA CEL environment: the ``device`` variable and the function libraries.

``device`` is declared as four variables with dotted names (``device.driver``, ...). The checker
resolves ``device.driver`` as one qualified name, so each field gets its real type as in Kubernetes,
where ``device`` is an object type: ``device.driver + 1`` and ``device.foo`` fail to compile, and
capacities are typed quantities. (A map-typed ``device`` would make every field ``dyn``.) The cost:
``device`` on its own, as a value, is not declared.

Two hidden variables, ``device._ttributes`` and ``device._apacity``, hold the attribute and capacity
maps *without* the empty maps added for unknown domains; :mod:`dratwin.cel.source` renames uses of
the whole map (``"d" in device.attributes``, ``device.attributes.size()``) to them. The names have
the same length as the visible ones so that error positions stay right.

Libraries (Kubernetes base environment as the scheduler compiles DRA selectors, spec §8): standard
CEL and macros; from cel-cpp: strings (version 2), optional types, ``cel.bind``, sets, two-variable
comprehensions, ext lists; in Python: quantity, semver, Kubernetes lists, ``includes``, regex
``find``/``findAll``.
"""

from __future__ import annotations

import functools
from typing import Any

from cel_expr_python import cel

from dratwin.cel import library, lists, regex, values

T = cel.Type

DRIVER = "device.driver"
ATTRIBUTES = "device.attributes"
CAPACITY = "device.capacity"
ALLOW_MULTIPLE = "device.allowMultipleAllocations"
# Same lengths as "attributes" and "capacity": see the module docstring.
WHOLE_ATTRIBUTES = "device._ttributes"
WHOLE_CAPACITY = "device._apacity"
HIDDEN_FIELD = {"attributes": "_ttributes", "capacity": "_apacity"}

DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")

# cel-cpp's bundled extensions, enabled by name. Strings version 2 is Kubernetes' (no reverse()).
_CONFIG = """\
extensions:
  - name: strings
    version: 2
  - name: optional
  - name: bindings
  - name: sets
  - name: lists
  - name: two-var-comprehensions
"""


@functools.cache
def environment() -> Any:
    """The process-wide environment (building it takes well under a millisecond; compiling is per call)."""
    attributes = T.Map(T.STRING, T.Map(T.STRING, T.DYN))
    capacity = T.Map(T.STRING, T.Map(T.STRING, library.QUANTITY))
    return cel.NewEnv(
        values.POOL,
        config=cel.NewEnvConfigFromYaml(_CONFIG),
        variables={
            DRIVER: T.STRING,
            ATTRIBUTES: attributes,
            CAPACITY: capacity,
            ALLOW_MULTIPLE: T.BOOL,
            WHOLE_ATTRIBUTES: attributes,
            WHOLE_CAPACITY: capacity,
        },
        extensions=[library.extension(), lists.extension(), regex.extension()],
    )
