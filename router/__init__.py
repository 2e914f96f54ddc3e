"""Tandem's gateway: an OpenAI-compatible proxy that routes each agent step to the edge or the cloud."""

__version__ = "0.1.0"
