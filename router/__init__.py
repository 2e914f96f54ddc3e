"""Tandem's gateway: an OpenAI-compatible proxy that routes each agent step to the edge or the cloud."""

from router.native import install as _install_native

__version__ = "0.1.0"

# Before any module of the gateway or the judge is imported: the compiled hot modules when a
# fresh build of them exists (`router/native.py`), the pure-Python modules otherwise.
_install_native()
