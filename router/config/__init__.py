"""The configuration's types: plain pydantic models of every key the gateway reads, at the bottom
of the import graph so that any module may take the part of the settings it uses.

Nothing here loads the configuration (router/settings.py reads the YAML file and the environment
and merges them over the defaults), and nothing here builds a policy: a route's settings name its
strategy, and router/policies/registry.py builds the policy from them.
"""
