"""dratwin: a digital twin of a Kubernetes GPU cluster with Dynamic Resource Allocation."""

__version__ = "0.1.0"
__all__ = ["__version__"]
