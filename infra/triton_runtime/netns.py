"""Triton in namespaces of its own: no other local user can connect to it or see its memory.

Run by ``TritonProcess`` as ``python -I netns.py --control-fd N --port P`` (standard library
only, so it needs no package on ``sys.path``); Triton's command line (which holds the per-start
secret) arrives as the first datagram on the control socket, as JSON, never on this process's
own command line. It enters a new network and
mount namespace (as root; otherwise inside a new user namespace that maps only this user),
brings its loopback up, mounts a private tmpfs (0700) on ``/dev/shm``, starts Triton there and
stays as its parent. Triton's listeners then exist only inside that namespace: another user can
neither connect to them nor join the namespace, so the per-start secret on Triton's command
line opens nothing for them. The Python backend's shared memory (every request and response:
prompts, outputs; boost creates it 0644 whatever the umask) lives in that tmpfs, which nobody
else sees and which is gone with the last process of the namespace, however Triton ended.

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
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
SHM = "/dev/shm"
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_PR_SET_PDEATHSIG = 1
UNAVAILABLE = 3  # exit code: the kernel refused a namespace


def _write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def _check(what: str, result: int) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _private_shm(libc: ctypes.CDLL) -> None:
    """A tmpfs of the host's /dev/shm size, 0700, on /dev/shm, seen by this namespace only."""
    info = os.statvfs(SHM)
    size = max(info.f_blocks * info.f_frsize, 64 * 1024 * 1024)
    _check("mount --make-rprivate /", libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None))
    options = f"mode=0700,size={size}".encode()
    flags = _MS_NOSUID | _MS_NODEV
    _check(f"mount tmpfs on {SHM}", libc.mount(b"tmpfs", SHM.encode(), b"tmpfs", flags, options))


def enter_namespace() -> None:
    """Move this (single-threaded) process into new network and mount namespaces with
    loopback up and a private /dev/shm; OSError when the kernel refuses (no user namespaces,
    a seccomp filter, ...)."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNET | CLONE_NEWNS | (0 if uid == 0 else CLONE_NEWUSER)
    _check("unshare", libc.unshare(flags))
    if uid != 0:  # the new user namespace maps this user (and its group) to themselves only
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags_now = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags_now | _IFF_UP))
    _private_shm(libc)


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
    args = parser.parse_args(argv)
    control = socket.socket(fileno=args.control_fd)
    command = [str(part) for part in json.loads(control.recv(1 << 20))]
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
