"""Benchmarks of the Tandem gateway; each is a package run with `python -m benchmarks.NAME`."""
