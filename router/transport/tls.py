"""The trust an https upstream's certificate is checked against: the system's trust store (which
honours SSL_CERT_FILE), or in its place the certificate authorities of the upstream's
`ca_file` (an internal CA, a TLS-inspecting proxy's). Both transports verify the same way."""

from __future__ import annotations

import ssl
from pathlib import Path


def tls_context(ca_file: Path | None, where: str) -> ssl.SSLContext:
    """A client context verifying certificates and host names; ValueError names `where` the file
    was set when it cannot be read or holds no certificate."""
    try:
        return ssl.create_default_context(cafile=str(ca_file) if ca_file is not None else None)
    except OSError as exc:  # ssl.SSLError is one: a file that is not PEM certificates
        reason = exc.strerror or str(exc)
        raise ValueError(f"{where} {ca_file}: {reason}") from exc


def untrusted(error: ssl.SSLCertVerificationError, ca_file: Path | None) -> str:
    """What a certificate that failed verification means, said for the operator."""
    reason = error.verify_message or error.reason or str(error)
    trusted = f"the CAs of ca_file {ca_file}" if ca_file is not None else "the system's trust store (no ca_file set)"
    return f"the upstream's TLS certificate is not trusted ({reason}), checked against {trusted}"
