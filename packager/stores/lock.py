"""The publish lock: one release at a time per destination.

A lock object at the release root, created with a conditional write (the store's
``create_exclusive``), records who holds it and until when. A second publisher waits, up to its
``--lock-timeout``, then stops naming the holder. The holder renews the expiry while it works
(conditional replace), so only a lock whose holder died expires; an expired lock is taken over
with a conditional replace, so of two takers exactly one wins. Release deletes only our version.
A holder names itself by host, boot id, PID namespace, pid and the pid's start time, so only a
holder in this very namespace is ever judged dead before its expiry (containers sharing a
hostname each have their own pids, and a pid may be reused).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from packager.stores.base import Store
from tdk.bounded import parse_json
from tdk.errors import StoreError, TdkError
from tdk.numbers import check_number

LOCK_NAME = "tdk-publish.lock"
DEFAULT_LOCK_TIMEOUT = 600.0  # seconds a publish waits for another one (--lock-timeout)
LOCK_TTL = 120.0  # a lock not renewed for this long is a dead holder's, and is taken over
POLL = 1.0  # seconds between looks at a held lock
# the most two clocks may disagree by before a lock's expiry is not tdk's: 300 s, Kerberos'
# default clockskew (krb5.conf(5), https://man.netbsd.org/NetBSD-1.5/krb5.conf.5 and IBM's
# z/OS [libdefaults] page: "Default is 300 seconds", checked 2026-12-07)
CLOCK_SKEW = 300.0
MAX_RACES = 100  # races lost in a row (no wait between them) before giving up


_HELD: set[str] = set()  # nonces of the locks this process holds now


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, ValueError):
        return ""


def _boot_id() -> str:
    """This kernel's boot (``/proc/sys/kernel/random/boot_id``); "" where there is none."""
    return _read("/proc/sys/kernel/random/boot_id")


def _pid_namespace() -> str:
    """The PID namespace our pids mean something in (``pid:[4026531836]``), or ""."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _start_time(pid: int) -> int:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); 0 when
    unknown. A pid reused by a later process has another start time."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(")") + 1 :].split()  # the command name may hold spaces
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def _judge(holder: LockRecord) -> tuple[bool, str]:
    """(dead, why it cannot be judged). Dead: a holder in our PID namespace on this boot
    whose process is gone (or whose pid now names a later process), or a publish of this
    process that ended. A holder elsewhere (another host, boot or PID namespace, or a record
    that does not say) is never judged dead: only its lock's expiry frees it."""
    if holder.host != socket.gethostname():
        return False, ""
    if not holder.boot_id or not holder.pid_ns or not holder.start:
        return False, "its record does not say which PID namespace it is in"
    if holder.boot_id != _boot_id() or holder.pid_ns != _pid_namespace():
        return False, (
            f"it runs in another PID namespace or boot ({holder.pid_ns}), so whether it is "
            "alive cannot be told from here"
        )
    if holder.pid == os.getpid():
        return holder.nonce not in _HELD, ""
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True, ""
    except OSError:
        pass  # alive, another user's
    started = _start_time(holder.pid)
    return started != 0 and started != holder.start, ""


class LockHeld(TdkError):
    """Another publish holds the destination's lock and did not release it in time."""


@dataclass(frozen=True)
class LockRecord:
    owner: str
    host: str
    pid: int
    created: float  # Unix time
    expires: float  # Unix time
    nonce: str
    boot_id: str = ""  # with pid_ns and start, who the holder is: a pid alone is ambiguous
    pid_ns: str = ""  # across PID namespaces (containers sharing a hostname) and reuse
    start: int = 0

    def to_bytes(self) -> bytes:
        return (json.dumps({"tdk_lock": 1, **asdict(self)}, indent=1) + "\n").encode()

    @classmethod
    def parse(cls, data: bytes) -> LockRecord | None:
        """The record in ``data``, read bounded; None when it is not a tdk lock record (a
        time that is no date, a pid no process can have: ``1e20``, ``"nan"``, ``2**70``)."""
        try:
            payload = parse_json(data, LOCK_NAME, "")
            return cls(
                owner=str(payload["owner"]),
                host=str(payload["host"]),
                pid=_field(payload["pid"], "pid", 1, MAX_PID),
                created=_field(payload["created"], "created", 0, MAX_TIME, number=True),
                expires=_field(payload["expires"], "expires", 0, MAX_TIME, number=True),
                nonce=str(payload["nonce"]),
                boot_id=str(payload.get("boot_id", "")),
                pid_ns=str(payload.get("pid_ns", "")),
                start=_field(payload.get("start", 0), "start", 0, 2**63 - 1),
            )
        except (TdkError, KeyError, TypeError, AttributeError):
            return None

    def describe(self) -> str:
        since = datetime.fromtimestamp(self.created, UTC).isoformat(timespec="seconds")
        until = datetime.fromtimestamp(self.expires, UTC).isoformat(timespec="seconds")
        return (
            f"{self.owner} on {self.host}, pid {self.pid}, since {since}, "
            f"expires {until} unless renewed"
        )


# Linux's largest pid_max: PID_MAX_LIMIT, 4 * 1024 * 1024 on 64-bit (include/linux/threads.h,
# https://github.com/torvalds/linux/blob/master/include/linux/threads.h, checked 2026-11-27)
MAX_PID = 2**22
MAX_TIME = 32503680000.0  # 3000-01-01 as Unix time: past it a time is no lock's


def _field(value: object, name: str, low: int, high: float, number: bool = False) -> Any:
    """A record's number: finite, in range, an int unless ``number`` (JSON ints are floats'
    equals); TdkError otherwise."""
    if number and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    return check_number(value, name, low, high, integer=not number)


def _owner() -> str:
    try:
        return os.environ.get("TDK_LOCK_OWNER") or getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


class PublishLock:
    """A held lock; ``check`` raises if it was lost (its renewals stopped working)."""

    def __init__(self, store: Store, ttl: float) -> None:
        self.store = store
        self.ttl = ttl
        self.nonce = uuid.uuid4().hex
        self.created = time.time()
        self.token = ""
        self.lost = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._renewer = threading.Thread(target=self._renew_loop, daemon=True)

    def record(self) -> bytes:
        return LockRecord(
            _owner(),
            socket.gethostname(),
            os.getpid(),
            self.created,
            time.time() + self.ttl,
            self.nonce,
            _boot_id(),
            _pid_namespace(),
            _start_time(os.getpid()),
        ).to_bytes()

    def acquire(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        races = 0
        while True:
            if races > MAX_RACES:
                raise StoreError(
                    f"cannot take the publish lock of {self.store.url}: it changed hands "
                    f"{MAX_RACES} times while we tried",
                    hint="too many publishes to one destination at once: retry later",
                )
            races += 1  # each lost race means another publisher moved on
            token = self.store.create_exclusive(LOCK_NAME, self.record())
            if token is not None:
                break
            current = self.store.read_versioned(LOCK_NAME)
            if current is None:
                continue  # released between our create and our read
            holder = self._holder(*current)
            dead, unjudged = _judge(holder)
            if not dead:
                self._bounded(holder)
            if holder.expires < time.time() or dead:
                token = self.store.replace_if(LOCK_NAME, self.record(), current[1])
                if token is not None:
                    break
                continue  # another taker won
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockHeld(
                    f"refusing to publish to {self.store.url}: another publish holds its lock "
                    f"({holder.describe()}) and did not finish within --lock-timeout "
                    f"{timeout:g} s" + (f"; {unjudged}" if unjudged else ""),
                    hint="wait for that publish to end, or raise --lock-timeout; a lock whose "
                    f"publish died expires {self.ttl:g} s after its last renewal",
                )
            races = 0
            time.sleep(min(POLL, left))  # waiting on another process's lock, bounded
        self.token = token
        _HELD.add(self.nonce)
        self._renewer.start()

    def _holder(self, data: bytes, token: str) -> LockRecord:
        holder = LockRecord.parse(data)
        if holder is None:
            raise StoreError(
                f"{self.store.describe(LOCK_NAME)} is not a tdk publish lock",
                hint="publish into a directory or prefix of its own, or delete that object if "
                "it is yours",
            )
        return holder

    def _bounded(self, holder: LockRecord) -> None:
        """Refuse a lock that claims to be held longer than any tdk publish holds one (it
        writes an expiry ``LOCK_TTL`` ahead and renews it): a planted record expiring in 2999
        would block publishing for centuries while the hint says it expires in 120 s."""
        latest = time.time() + max(self.ttl, LOCK_TTL) + CLOCK_SKEW
        if holder.expires <= latest:
            return
        raise StoreError(
            f"refusing to publish to {self.store.url}: its lock ({holder.describe()}) claims "
            f"an expiry beyond the {LOCK_TTL:g} s a tdk publish holds a lock without renewing "
            f"it (plus {CLOCK_SKEW:g} s of clock skew): it was not written by a tdk publish "
            "on a clock like ours, so it is never taken over",
            hint=f"delete {self.store.describe(LOCK_NAME)} if no publish to it runs now, "
            "and check the clock of the host it names",
        )

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    token = self.store.replace_if(LOCK_NAME, self.record(), self.token)
                except TdkError as exc:
                    token, self.lost = None, exc.message
                if token is None:
                    self.lost = self.lost or "another process replaced or removed it"
                    return
                self.token = token

    def check(self) -> None:
        """Raise if the lock is no longer ours (before anything that makes a release visible)."""
        if self.lost:
            raise StoreError(
                f"lost the publish lock of {self.store.url}: {self.lost}; nothing more is written",
                hint="check that no one deletes the lock while a publish runs, then retry",
            )

    def release(self) -> None:
        """Delete our version of the lock. Never raises: a lock the store cannot delete now
        (it stopped answering) expires ``ttl`` seconds after its last renewal."""
        self._stop.set()
        _HELD.discard(self.nonce)
        with self._lock:
            if self.token and not self.lost:
                with contextlib.suppress(TdkError):
                    self.store.delete_if(LOCK_NAME, self.token)


@contextmanager
def publish_lock(
    store: Store, timeout: float = DEFAULT_LOCK_TIMEOUT, ttl: float = LOCK_TTL
) -> Iterator[PublishLock]:
    """Hold the destination's publish lock for the block; released on success, error, Ctrl-C
    and SIGTERM (turned into an exit that runs this ``finally``)."""
    lock = PublishLock(store, ttl)
    with _terminate_as_exit():
        lock.acquire(timeout)
        try:
            yield lock
        finally:
            lock.release()


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
