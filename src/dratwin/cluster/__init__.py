"""The cluster twin: the object store, the controllers, node roles and generated clusters."""
