"""Triton in namespaces of its own: no other local user can connect to it, see its memory or
read its secret, and it sees the file system read-only but for its working directory.

Run by ``TritonProcess`` as ``python -I netns.py --control-fd N --port P --grpc-port G --netns
MODE`` (standard library only, so it needs no package on ``sys.path``). Its first datagram on the
control socket (JSON) holds Triton's command line, which of its arguments are secret, which
directories stay writable, the directory to be its /tmp and the paths it must see; none of it
is on this process's own command line. Where the kernel allows (as root; otherwise inside a new
user namespace that maps only this user) it enters:

- a mount namespace: ``/dev/shm`` becomes a private tmpfs (0700), so the Python backend's
  shared memory (every request and response: prompts, outputs; boost creates it 0644 whatever
  the umask) is never in the host's ``/dev/shm``, not even for a moment; it goes with the last
  process of the namespace. Every mount is made read-only (``mount_setattr``, Linux 5.12) but
  bind mounts of the writable directories: a release's code reads the file system, writes only
  there. ``/tmp`` becomes a directory of the work dir (the request's ``tmp``), with the
  entries of this machine's ``/tmp`` that lead to the paths Triton needs (``seen``) bound in
  place: the Python backend's ``/tmp/python_env_XXXXXX`` (a fixed template, whatever
  ``TMPDIR`` says) lands in the work dir and never outlives it, however Triton ends;
- a network namespace (``MODE`` "on" or "auto"), loopback up: Triton's listeners exist only
  there; another user can neither connect to them nor join the namespace.

Triton's secret arguments never reach its command line (``/proc/<pid>/cmdline`` is readable by
every local user, and Triton reads its options from argv only: src/main.cc and
src/command_line_parser.cc of triton-inference-server/server read 2026-12-07, whose only
environment reads are Vertex AI's and tracing's settings): Triton is started traced
(``PTRACE_TRACEME``) with a placeholder in their place and each secret in its environment
(``/proc/<pid>/environ`` is its owner's alone); stopped at its ``execve``, before any of its
code runs, its argv pointers are turned to those environment strings, then it is let go.

The front reaches Triton through the control socket, one end of a socket pair it created (no
path in the file system, so nobody else can open it): each ``c`` it sends is answered with a
TCP connection to Triton's HTTP port made inside the namespace (each ``g``: to its gRPC port,
for the front's loads), passed back as a file descriptor (``SCM_RIGHTS``); bytes then flow
directly, with no relay here. With ``--connector-fd``
(``tdk tune``, whose load generators are processes of their own) the launcher also accepts on
that listening Unix socket (the front made it, 0600 in its 0700 work directory) and answers
each ``c`` of a peer of its own uid (``SO_PEERCRED``) the same way. Protocol, one datagram
each: ``unavailable <why>`` (``MODE`` "on" and no network namespace; exit 3) or ``pid <n>
<held>`` (Triton started; ``held`` names the protections in place, comma-separated, from
``PROTECTIONS``, then ``;`` and why the others are not), then ``ok`` + descriptor or ``err
<why>`` per request. SIGTERM is passed to Triton; when Triton exits this process ends the same
way; when the front goes, Triton is killed.
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

#: what the launcher can give Triton: its own network, mount namespace (private /dev/shm),
#: a /tmp in its work dir, a read-only file system, and secrets kept off its command line
PROTECTIONS = ("net", "mount", "tmp", "readonly", "argv")
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
SHM = "/dev/shm"
TMP = "/tmp"
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_PR_SET_PDEATHSIG = 1
UNAVAILABLE = 3  # exit code: the kernel refused a namespace
#: the connector's peers at once (each asks for a connection, then goes), and how long a
#: peer's answer may wait on it
MAX_PEERS = 256
PEER_TIMEOUT_S = 5.0
_MS_BIND = 0x1000
#: mount_setattr(2) (the same number on every architecture, Linux 5.12) and its arguments
_SYS_MOUNT_SETATTR = 442
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
_PTRACE_TRACEME = 0
_PTRACE_POKEDATA = 5
_PTRACE_DETACH = 17
#: the environment variable holding Triton's secret argument number N
SECRET_ENV = "TDK_TRITON_ARG_"
PLACEHOLDER = "(in-the-environment)"


class _MountAttr(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clr", "propagation", "userns")]


def _write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def _check(what: str, result: int) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _private_shm(libc: ctypes.CDLL) -> None:
    """A tmpfs of the host's /dev/shm size, 0700, on /dev/shm, seen by this namespace only."""
    info = os.statvfs(SHM)
    size = max(info.f_blocks * info.f_frsize, 64 * 1024 * 1024)
    options = f"mode=0700,size={size}".encode()
    flags = _MS_NOSUID | _MS_NODEV
    _check(f"mount tmpfs on {SHM}", libc.mount(b"tmpfs", SHM.encode(), b"tmpfs", flags, options))


def _set_readonly(libc: ctypes.CDLL, path: str, readonly: bool, recursive: bool) -> None:
    attr = _MountAttr(_MOUNT_ATTR_RDONLY, 0, 0, 0) if readonly else _MountAttr(0, 1, 0, 0)
    flags = _AT_RECURSIVE if recursive else 0
    result = libc.syscall(
        _SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(attr),
        ctypes.sizeof(attr),
    )  # fmt: skip
    _check(f"mount_setattr {path}", result)


def _bind(libc: ctypes.CDLL, source: str, target: str, recursive: bool = False) -> None:
    flags = _MS_BIND | (_MS_REC if recursive else 0)
    _check(
        f"bind {source} on {target}",
        libc.mount(source.encode(), target.encode(), None, flags, None),
    )


def _outermost(paths: Sequence[str]) -> list[str]:
    """``paths`` without those inside another of them (a bind of /tmp covers /tmp/x's)."""
    real = sorted({os.path.realpath(path) for path in paths})
    return [p for p in real if not any(p.startswith(q.rstrip("/") + "/") for q in real)]


def _read_only_but(libc: ctypes.CDLL, writable: Sequence[str]) -> None:
    """Every mount read-only, but a bind mount of each ``writable`` directory; where the last
    step fails, every mount is made writable again (OSError either way)."""
    keep = _outermost(writable)
    for path in keep:
        _bind(libc, path, path)
    _set_readonly(libc, "/", True, recursive=True)
    try:
        for path in keep:
            _set_readonly(libc, path, False, recursive=False)
    except OSError:
        _set_readonly(libc, "/", False, recursive=True)  # as it was: Triton must write there
        raise


def _unshare(libc: ctypes.CDLL, net: bool) -> None:
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNS | (CLONE_NEWNET if net else 0) | (0 if uid == 0 else CLONE_NEWUSER)
    _check("unshare", libc.unshare(flags))
    if uid != 0:  # the new user namespace maps this user (and its group) to themselves only
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags_now = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags_now | _IFF_UP))


def _tmp_entries(paths: Sequence[str]) -> list[str]:
    """The names in /tmp that lead to ``paths`` (as given and resolved): what Triton must still
    see there once its /tmp is its own."""
    roots = {TMP, os.path.realpath(TMP)}
    names: set[str] = set()
    for path in paths:
        for form in (os.path.abspath(path), os.path.realpath(path)):
            for root in roots:
                if form.startswith(root + "/"):
                    names.add(form[len(root) + 1 :].split("/", 1)[0])
    return sorted(names)


def _private_tmp(libc: ctypes.CDLL, directory: str, seen: Sequence[str]) -> None:
    """``directory`` on /tmp, each entry of this machine's /tmp leading to ``seen`` bound in it
    (with what is mounted below: read-only, but the writable directories); OSError when a step
    fails, /tmp then unchanged (the whole is mounted on it in one last step)."""
    for name in _tmp_entries(seen):
        source, target = os.path.join(TMP, name), os.path.join(directory, name)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
            continue
        if os.path.isdir(source):
            os.makedirs(target, exist_ok=True)
        else:
            open(target, "a").close()
        _bind(libc, source, target, recursive=True)
    _bind(libc, directory, TMP, recursive=True)


def _own_tmp(
    libc: ctypes.CDLL, directory: str, seen: Sequence[str], held: set[str], missing: list[str]
) -> None:
    """/tmp in the work dir (``directory``); where that fails, this machine's, kept writable
    (the Python backend aborts Triton when it cannot make its directory there)."""
    try:
        _private_tmp(libc, directory, seen)
        held.add("tmp")
        return
    except OSError as exc:
        missing.append(f"no private /tmp ({exc.strerror or exc})")
    if "readonly" not in held:
        return
    try:
        _bind(libc, TMP, TMP, recursive=True)  # with the writable binds below it
        _set_readonly(libc, TMP, False, recursive=False)
    except OSError as exc:
        _set_readonly(libc, "/", False, recursive=True)  # as it was: Triton must write there
        held.discard("readonly")
        missing.append(f"no read-only file system ({exc.strerror or exc})")


def _mounts(
    libc: ctypes.CDLL,
    writable: Sequence[str],
    tmp: str,
    seen: Sequence[str],
    held: set[str],
    missing: list[str],
) -> None:
    """In a new mount namespace: nothing propagates back, every mount read-only but
    ``writable``, /tmp on ``tmp``, a private /dev/shm; ``held`` and ``missing`` say what was
    done."""
    try:
        flags = _MS_REC | _MS_PRIVATE
        _check("mount --make-rprivate /", libc.mount(b"none", b"/", None, flags, None))
    except OSError as exc:
        held.discard("mount")
        missing.append(f"no private mounts ({exc.strerror or exc})")
        return
    try:
        _read_only_but(libc, writable)
        held.add("readonly")
    except OSError as exc:
        missing.append(f"no read-only file system ({exc.strerror or exc})")
    _own_tmp(libc, tmp, [*writable, *seen], held, missing)
    try:
        _private_shm(libc)
    except OSError as exc:
        held.discard("mount")
        missing.append(f"no private /dev/shm ({exc.strerror or exc})")


def enter_namespace(
    mode: str, writable: Sequence[str], tmp: str, seen: Sequence[str] = ()
) -> tuple[set[str], list[str]]:
    """Move this (single-threaded) process into new namespaces as ``mode`` allows ("off": no
    network namespace), /tmp on ``tmp`` (seeing what leads to ``writable`` and ``seen``); the
    protections now in place and why the others are not. OSError when ``mode`` is "on" and
    the kernel refuses a network namespace."""
    libc = _libc()
    held: set[str] = set()
    missing: list[str] = []
    try:
        _unshare(libc, net=mode != "off")
        held.update({"net", "mount"} if mode != "off" else {"mount"})
    except OSError as exc:
        if mode == "on":
            raise
        missing.append(f"no namespaces ({exc.strerror or exc})")
        if mode == "auto":  # a mount namespace may still be allowed
            try:
                _unshare(libc, net=False)
                held.add("mount")
            except OSError:
                pass
    if "net" in held:
        _loopback_up()
    if "mount" in held:
        _mounts(libc, writable, tmp, seen, held, missing)
    return held, missing


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


def _request(peer: socket.socket, ports: tuple[int, int]) -> bool:
    """Answer one request of ``peer`` (``g``: the gRPC port of ``ports``, else the HTTP one);
    False when it is gone (or stopped reading)."""
    try:
        asked = peer.recv(16)
        if not asked:
            return False
        _answer(peer, ports[1] if asked == b"g" else ports[0])
    except InterruptedError:
        return True
    except OSError:
        return False
    return True


def _accept(listener: socket.socket, peers: dict[int, socket.socket]) -> None:
    """A connector peer, kept when it runs as this user (and there is room for it)."""
    try:
        peer, _ = listener.accept()
    except OSError:
        return
    creds = peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    if uid != os.getuid() or len(peers) >= MAX_PEERS:
        peer.close()
        return
    peer.settimeout(PEER_TIMEOUT_S)  # a peer that stops reading loses its place, not us ours
    peers[peer.fileno()] = peer


def serve(
    control: socket.socket,
    ports: tuple[int, int],
    triton: subprocess.Popen[bytes],
    listener: socket.socket | None = None,
) -> int:
    """Answer the front (and the connector's peers) until Triton exits (its return code) or
    the front goes (-9)."""
    exited = os.pidfd_open(triton.pid)
    peers: dict[int, socket.socket] = {}
    heard = [control.fileno(), exited, *([listener.fileno()] if listener else [])]
    while True:
        ready, _, _ = select.select([*heard, *peers], [], [])
        if exited in ready:
            return triton.wait()
        if control.fileno() in ready and not _request(control, ports):
            triton.kill()  # the front is gone: so is Triton
            triton.wait()
            return -signal.SIGKILL
        if listener is not None and listener.fileno() in ready:
            _accept(listener, peers)
        for fd in ready:
            if fd in peers and not _request(peers[fd], ports):
                peers.pop(fd).close()


def _end_like(code: int) -> None:
    """Exit as Triton did: by the same signal, or with the same code."""
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def _traced() -> None:
    """In Triton's process before its exec: die with us, and stop at the exec for us."""
    _die_with_parent()
    _check("ptrace(PTRACE_TRACEME)", _libc().ptrace(_PTRACE_TRACEME, 0, None, None))


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def _redirect(pid: int, argc: int, secret: Sequence[int]) -> None:
    """Point argv[i] of the stopped ``pid`` (our tracee) at the value of ``SECRET_ENV<i>`` in
    its environment, for each ``i`` in ``secret``; OSError when its stack is not as expected.
    ``/proc/<pid>/stat`` fields 28 (start of the stack: argc, then the argv pointers) and 48-51
    (where argv and the environment strings lie), proc(5)."""
    libc = _libc()
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong]
    fields = _stat_fields(pid)
    stack, arg_start, arg_end = int(fields[25]), int(fields[45]), int(fields[46])
    env_start, env_end = int(fields[47]), int(fields[48])
    word = struct.Struct("=Q")
    if struct.calcsize("P") != word.size:
        raise OSError(0, "not a 64-bit process")
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:  # /proc may be read-only
        memory.seek(stack)
        head = struct.unpack(f"={argc + 2}Q", memory.read(word.size * (argc + 2)))
        pointers = head[1 : argc + 1]
        if head[0] != argc or head[-1] != 0 or not all(arg_start <= p < arg_end for p in pointers):
            raise OSError(0, "Triton's stack is not laid out as expected")
        memory.seek(env_start)
        strings = b"\0" + memory.read(env_end - env_start)
        for index in secret:
            key = f"\0{SECRET_ENV}{index}=".encode()
            at = strings.find(key)
            if at < 0:
                raise OSError(0, f"{SECRET_ENV}{index} is not in Triton's environment")
            value = ctypes.c_ulong(env_start + at + len(key) - 1)
            address = ctypes.c_void_p(stack + word.size * (1 + index))
            _check("ptrace(PTRACE_POKEDATA)", libc.ptrace(_PTRACE_POKEDATA, pid, address, value))


def spawn_hiding(command: list[str], secret: Sequence[int]) -> subprocess.Popen[bytes]:
    """Triton started with ``command``, its ``secret`` arguments only in its environment
    (see the module's docstring); OSError where the kernel refuses to trace it."""
    env = dict(os.environ)
    shown = list(command)
    for index in secret:
        env[f"{SECRET_ENV}{index}"] = command[index]
        shown[index] = f"{command[index].split('=', 1)[0]}={PLACEHOLDER}"
    try:
        triton = subprocess.Popen(shown, env=env, preexec_fn=_traced)
    except subprocess.SubprocessError as exc:
        raise OSError(0, f"ptrace(PTRACE_TRACEME) refused ({exc})") from exc
    _, status = os.waitpid(triton.pid, 0)
    try:
        if not (os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGTRAP):
            raise OSError(0, f"Triton did not stop at its start (status {status:#x})")
        _redirect(triton.pid, len(shown), secret)
    except OSError:
        triton.kill()
        _libc().ptrace(_PTRACE_DETACH, triton.pid, None, None)
        triton.wait()
        raise
    _check("ptrace(PTRACE_DETACH)", _libc().ptrace(_PTRACE_DETACH, triton.pid, None, None))
    return triton


def start(command: list[str], secret: Sequence[int]) -> tuple[subprocess.Popen[bytes], str]:
    """Triton, and why its secret arguments are on its command line ("" when they are not)."""
    if secret:
        try:
            return spawn_hiding(command, secret), ""
        except OSError as exc:
            why = f"the secret is on Triton's command line ({exc.strerror or exc})"
            return subprocess.Popen(command, preexec_fn=_die_with_parent), why
    return subprocess.Popen(command, preexec_fn=_die_with_parent), ""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="netns.py")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, default=0)  # 0: none (``g`` answers err)
    parser.add_argument("--netns", choices=("auto", "on", "off"), default="on")
    parser.add_argument("--connector-fd", type=int)
    args = parser.parse_args(argv)
    control = socket.socket(fileno=args.control_fd)
    request = json.loads(control.recv(1 << 20))
    command = [str(part) for part in request["command"]]
    try:
        writable = [str(p) for p in request["writable"]]
        seen = [str(p) for p in request["seen"]]
        held, missing = enter_namespace(args.netns, writable, str(request["tmp"]), seen)
    except OSError as exc:
        control.send(f"unavailable {exc.strerror or exc}".encode())
        sys.exit(UNAVAILABLE)
    listener = None if args.connector_fd is None else socket.socket(fileno=args.connector_fd)
    triton, exposed = start(command, [int(i) for i in request["secret"]])
    if exposed:
        missing.append(exposed)
    else:
        held.add("argv")
    signal.signal(signal.SIGTERM, lambda *_: triton.terminate())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the front, which stops us
    control.send(f"pid {triton.pid} {','.join(sorted(held))};{'; '.join(missing)}".encode())
    _end_like(serve(control, (args.port, args.grpc_port), triton, listener))


if __name__ == "__main__":
    main()
