"""Agent-like load on gateway workers sharing a real Redis (python -m benchmarks.agent_load)."""
