"""One view over a request or a subrequest, so the search treats both alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    DeviceClass,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
)

EXACT_COUNT = "ExactCount"
ALL = "All"


@dataclass
class RequestView:
    """A request (``parent`` empty) or one subrequest of a ``firstAvailable`` list (``parent`` set)."""

    name: str
    parent: str
    device_class_name: str
    selectors: list[DeviceSelector]
    allocation_mode: str
    count: int
    admin_access: bool
    has_admin_access: bool
    tolerations: list[DeviceToleration]
    capacity_requests: dict[str, Fraction] | None
    # Filled in while checking the claim: the class, how many devices, the fixed set for mode All.
    device_class: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[object] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        """``req`` or ``req/sub``, as results and configs name it."""
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base_name(self) -> str:
        """The top-level request name (constraints and configs refer to it)."""
        return self.parent or self.name

    @property
    def sub_name(self) -> str:
        return self.name if self.parent else ""


def view_exact(request: DeviceRequest, exact: ExactDeviceRequest) -> RequestView:
    return RequestView(
        name=request.name,
        parent="",
        device_class_name=exact.device_class_name,
        selectors=exact.selectors,
        allocation_mode=exact.allocation_mode or EXACT_COUNT,
        count=_count(exact.count, exact.allocation_mode),
        admin_access=bool(exact.admin_access),
        has_admin_access=exact.admin_access is not None,
        tolerations=exact.tolerations,
        capacity_requests=_capacity(exact.capacity.requests) if exact.capacity is not None else None,
    )


def view_sub(request: DeviceRequest, sub: DeviceSubRequest) -> RequestView:
    return RequestView(
        name=sub.name,
        parent=request.name,
        device_class_name=sub.device_class_name,
        selectors=sub.selectors,
        allocation_mode=sub.allocation_mode or EXACT_COUNT,
        count=_count(sub.count, sub.allocation_mode),
        admin_access=False,
        has_admin_access=False,
        tolerations=sub.tolerations,
        capacity_requests=_capacity(sub.capacity.requests) if sub.capacity is not None else None,
    )


def _count(count: int | None, mode: str | None) -> int:
    # The API server defaults count to 1 for ExactCount; an explicit value is kept as written.
    if count is not None:
        return count
    return 1 if (mode or EXACT_COUNT) == EXACT_COUNT else 0


def _capacity(requests: dict[str, str | int | float]) -> dict[str, Fraction]:
    return {name: Quantity.parse(value).value for name, value in requests.items()}
