"""Who is on the other end of a TCP connection to the front, so each client gets its own share
of the connection cap (issue 47 item 2: 300 slow connections from one local user gave every
other client 503 for the 60 s body timeout).

On loopback every local user's address is 127.0.0.1, so the client is the user owning the
connecting socket: the kernel's socket-diagnostics netlink interface (``NETLINK_SOCK_DIAG``,
``SOCK_DIAG_BY_FAMILY`` with an exact 4-tuple, linux/inet_diag.h; sock_diag(7), checked
2026-12-07) looks that socket up by its addresses and reports its owner's uid, in one round
trip. Where it cannot (another machine's client, a kernel without it), the client is its
address.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import struct

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
_NOCOOKIE = 0xFFFFFFFF
_ALL_STATES = 0xFFFFFFFF
#: nlmsghdr, then inet_diag_req_v2 (family, protocol, ext, pad, states, sockid)
_HEADER = struct.Struct("=IHHII")
_REQUEST = struct.Struct("=BBBxI")
#: inet_diag_sockid: ports and addresses in network order, then interface and cookie
_SOCKID = struct.Struct("!HH16s16s")
_SOCKID_TAIL = struct.Struct("=III")
#: inet_diag_msg after the sockid: expires, rqueue, wqueue, uid, inode
_MSG_HEAD = struct.Struct("=BBBB")
_MSG_TAIL = struct.Struct("=IIIII")


def _packed(address: str, family: int) -> bytes:
    raw = ipaddress.ip_address(address).packed
    return raw.ljust(16, b"\0") if family == socket.AF_INET else raw


def socket_uid(family: int, source: tuple[str, int], dest: tuple[str, int]) -> int | None:
    """The uid owning this machine's TCP socket bound to ``source`` and connected to
    ``dest``, or None (no such socket here, or the kernel would not say)."""
    request = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, _ALL_STATES)
    request += _SOCKID.pack(
        source[1], dest[1], _packed(source[0], family), _packed(dest[0], family)
    )
    request += _SOCKID_TAIL.pack(0, _NOCOOKIE, _NOCOOKIE)
    message = _HEADER.pack(_HEADER.size + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0)
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as diag:
            diag.settimeout(1.0)
            diag.send(message + request)
            answer = diag.recv(4096)
    except (OSError, AttributeError):  # no netlink (not Linux), or refused
        return None
    return _uid_of(answer)


def _uid_of(answer: bytes) -> int | None:
    offset = _HEADER.size + _MSG_HEAD.size + _SOCKID.size + _SOCKID_TAIL.size
    if len(answer) < offset + _MSG_TAIL.size:
        return None
    kind = _HEADER.unpack_from(answer)[1]
    if kind != SOCK_DIAG_BY_FAMILY:  # NLMSG_ERROR: no such socket
        return None
    return int(_MSG_TAIL.unpack_from(answer, offset)[3])


#: the key of an ASGI request's scope that names its client (``client_of``)
SCOPE_KEY = "tdk.client"


def is_owner(client: object) -> bool:
    """Whether ``client`` (``client_of``'s answer) is the endpoint's own user."""
    return client == f"uid:{os.geteuid()}"


def client_of(sock: socket.socket | None) -> str:
    """The client a connection accepted by the front counts against: ``uid:<n>`` when the
    connecting socket is on this machine, else ``addr:<its address>``."""
    if sock is None:
        return "unknown"
    with contextlib.suppress(OSError, ValueError):
        peer, ours = sock.getpeername(), sock.getsockname()
        uid = socket_uid(sock.family, (peer[0], peer[1]), (ours[0], ours[1]))
        return f"uid:{uid}" if uid is not None else f"addr:{peer[0]}"
    return "unknown"
