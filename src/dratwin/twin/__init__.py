"""The cluster twin end to end: manifests in, controllers and scheduler run, the resulting cluster out."""
