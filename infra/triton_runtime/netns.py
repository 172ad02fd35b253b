"""Triton in a network namespace of its own: no other local user can connect to it at all.

Run by ``TritonProcess`` as ``python -I netns.py --control-fd N --port P -- tritonserver ...``
(standard library only, so it needs no package on ``sys.path``). It enters a new network
namespace (as root; otherwise inside a new user namespace that maps only this user), brings its
loopback up, starts Triton there and stays as its parent. Triton's listeners then exist only
inside that namespace: another user can neither connect to them nor join the namespace, so
the per-start secret on Triton's command line opens nothing for them.

The front reaches Triton through the control socket, one end of a socket pair it created (no
path in the file system, so nobody else can open it): each ``c`` it sends is answered with a
TCP connection to Triton's HTTP port made inside the namespace, passed back as a file
descriptor (``SCM_RIGHTS``); bytes then flow directly, with no relay. Protocol, one datagram
each: ``unavailable <why>`` (namespaces refused; exit 3) or ``pid <n>`` (Triton started), then
``ok`` + descriptor or ``err <why>`` per request. SIGTERM is passed to Triton; when Triton
exits this process ends the same way; when the front goes, Triton is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_PR_SET_PDEATHSIG = 1
UNAVAILABLE = 3  # exit code: the kernel refused a namespace


def _write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def enter_namespace() -> None:
    """Move this (single-threaded) process into a new network namespace with loopback up;
    OSError when the kernel refuses (no user namespaces, a seccomp filter, ...)."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNET if uid == 0 else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare: {os.strerror(error)}")
    if uid != 0:  # the new user namespace maps this user (and its group) to themselves only
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags_now = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags_now | _IFF_UP))


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _connection(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def _answer(control: socket.socket, port: int) -> None:
    """One request on the control socket: a connection to Triton, or why there is none."""
    try:
        conn = _connection(port)
    except OSError as exc:
        control.send(f"err {exc.strerror or exc}".encode())
        return
    with conn:
        socket.send_fds(control, [b"ok"], [conn.fileno()])


def serve(control: socket.socket, port: int, triton: subprocess.Popen[bytes]) -> int:
    """Answer the front until Triton exits (its return code) or the front goes (-9)."""
    exited = os.pidfd_open(triton.pid)
    while True:
        ready, _, _ = select.select([control.fileno(), exited], [], [])
        if exited in ready:
            return triton.wait()
        try:
            request = control.recv(16)
        except InterruptedError:
            continue
        if not request:  # the front is gone: so is Triton
            triton.kill()
            triton.wait()
            return -signal.SIGKILL
        _answer(control, port)


def _end_like(code: int) -> None:
    """Exit as Triton did: by the same signal, or with the same code."""
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="netns.py")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    control = socket.socket(fileno=args.control_fd)
    try:
        enter_namespace()
    except OSError as exc:
        control.send(f"unavailable {exc.strerror or exc}".encode())
        sys.exit(UNAVAILABLE)
    triton = subprocess.Popen(command, preexec_fn=_die_with_parent)
    signal.signal(signal.SIGTERM, lambda *_: triton.terminate())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the front, which stops us
    control.send(f"pid {triton.pid}".encode())
    _end_like(serve(control, args.port, triton))


if __name__ == "__main__":
    main()
