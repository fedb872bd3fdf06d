"""The scheduler plugins of the default profile that matter for GPU clusters."""
