"""The configuration's types: plain pydantic models of every key the gateway reads, at the bottom
of the import graph so that any module may take the part of the settings it uses.

Nothing here reads a file or the environment (router/settings.py loads and merges them) and
nothing here builds anything: a route's settings name its strategy, and router/policies/registry.py
builds the policy from them.
"""
