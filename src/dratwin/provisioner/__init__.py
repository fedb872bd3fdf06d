"""Karpenter-like provisioning: what to launch for pending pods, and what the cost-optimal fleet would be."""
