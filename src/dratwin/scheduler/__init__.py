"""A kube-scheduler twin: the default profile's filters and scores, DRA, queueing and preemption."""
