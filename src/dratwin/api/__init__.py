"""Typed Kubernetes objects, quantities, loading and validation."""
