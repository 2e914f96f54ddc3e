"""Trajectory bookkeeping cost per step: memory store and Redis on loopback."""
