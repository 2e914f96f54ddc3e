"""Thin HTTP handlers: read the request, call the core, write the answer."""
