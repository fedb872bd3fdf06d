"""The simulation: the cluster's control plane run through time (engine, store, controllers, outcomes)."""
