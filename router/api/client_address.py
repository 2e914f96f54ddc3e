"""What a request says of where it comes from: its client's address, for what is counted per
client (failed key checks), and whether it came over HTTPS (the view's Secure cookie).

The connection's peer, unless the peer is one of `server.trusted_proxies`: then the nearest
address in `X-Forwarded-For` that is not a trusted proxy itself, read from the right (each proxy
appends the peer it saw; everything left of the first untrusted hop is whatever the client
wrote, and a client could write any address there to pass for another). With no trusted
proxies the header is never read: anyone could send it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.requests import Request

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_HOP_CHARS = 64  # an X-Forwarded-For entry longer than any address is kept only this long


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:10.0.0.1 on a dual-stack socket is 10.0.0.1
    return address


def _trusted(address: Address | None, trusted: Sequence[Network]) -> bool:
    return address is not None and any(address.version == net.version and address in net for net in trusted)


def client_key(address: Address | None, text: str) -> str:
    """What failures are counted under: an IPv4 address, an IPv6 address's /64 (one host
    usually holds a whole /64, and would otherwise have 2^64 fresh addresses to guess from)."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    if address is not None:
        return str(address)
    return text[:MAX_HOP_CHARS] or "unknown"


def client_address(request: Request, trusted: Sequence[Network]) -> str:
    """The client's address as failures are counted (`client_key`)."""
    peer_text = request.client.host if request.client is not None else ""
    peer = _address(peer_text)
    if not trusted or not _trusted(peer, trusted):
        return client_key(peer, peer_text)
    hops = [hop.strip() for hop in ",".join(request.headers.getlist("x-forwarded-for")).split(",")]
    hops = [hop for hop in hops if hop]
    for hop in reversed(hops):
        address = _address(hop)
        if not _trusted(address, trusted):
            return client_key(address, hop)
    # Every hop a trusted proxy (or none given): the first one is the furthest known.
    return client_key(_address(hops[0]), hops[0]) if hops else client_key(peer, peer_text)


def came_over_https(request: Request, trusted: Sequence[Network]) -> bool:
    """Whether the client's request came over HTTPS: to the gateway itself, or to a trusted
    proxy that says so in `X-Forwarded-Proto` (its last value: the one the nearest proxy set);
    from any other peer the header is anyone's word, and ignored."""
    if request.url.scheme == "https":
        return True
    peer = _address(request.client.host) if request.client is not None else None
    if not _trusted(peer, trusted):
        return False
    forwarded = ",".join(request.headers.getlist("x-forwarded-proto"))
    return forwarded.rsplit(",", 1)[-1].strip().lower() == "https"
