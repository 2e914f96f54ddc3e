"""Policies decide the target of a step. One module per strategy; `registry` lists them."""
