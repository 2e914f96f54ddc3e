"""`tandem demo`: a simulated edge and cloud model, the real gateway, and a small built-in agent
that works a few multi-step coding tasks through the gateway under each strategy.

The models are simulated (scripted servers, see `server.py` and `script.py`); the gateway, its
routing, streaming relay and ledger are the real ones.
"""
