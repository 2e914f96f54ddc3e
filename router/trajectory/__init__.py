"""Trajectories: which agent run a request belongs to, and the state kept for it."""
