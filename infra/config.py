"""Stack configuration: declared once in ``Pulumi.yaml``, read once here, validated, frozen.

Defaults live in ``Pulumi.yaml`` only (the Pulumi CLI fills them in), so every key is read as
required; an empty string is the documented "not set" value of optional keys. Every check
raises ``ConfigError`` naming the key and the valid choices before any resource is declared.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tdk import bounded
from tdk.errors import ConfigError, UsageError

PROJECT = "triton-deploy-kit"

#: (qualified key "namespace:name") -> raw string value, or None when the key is unset
ConfigSource = Callable[[str], str | None]

_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
_PREFIX_PART = re.compile(r"^[A-Za-z0-9._=+-]+$")


def qualify(key: str) -> str:
    """``releaseUrl`` -> ``triton-deploy-kit:releaseUrl``; ``aws:region`` stays as it is."""
    return key if ":" in key else f"{PROJECT}:{key}"


def _set_hint(key: str, example: str) -> str:
    return f"set it with `pulumi config set {qualify(key)} {example}` or edit the stack file"


class ConfigReader:
    """Typed, validated access to stack config; every read names the key in its errors."""

    def __init__(self, source: ConfigSource) -> None:
        self._source = source

    def string(self, key: str) -> str:
        """A key that must be set (Pulumi.yaml declares its default)."""
        value = self._source(qualify(key))
        if value is None:
            raise ConfigError(
                f"stack config has no value for {qualify(key)}",
                hint=f"declare it with a default in Pulumi.yaml, or {_set_hint(key, '<value>')}",
            )
        return value

    def optional_string(self, key: str) -> str | None:
        """A key whose declared default is the empty string, meaning "not set"."""
        value = self.string(key).strip()
        return None if value == "" else value

    def lookup(self, key: str) -> str | None:
        """A key's value, None when it is unset or empty (a deprecated key may be undeclared)."""
        value = (self._source(qualify(key)) or "").strip()
        return value or None

    def integer(self, key: str, minimum: int | None = None, maximum: int | None = None) -> int:
        raw = self.string(key)
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(
                f"{qualify(key)} must be an integer, got {raw!r}", hint=_set_hint(key, "<n>")
            ) from None
        _check_range(key, value, minimum, maximum)
        return value

    def number(self, key: str, minimum: float | None = None, maximum: float | None = None) -> float:
        raw = self.string(key)
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(
                f"{qualify(key)} must be a number, got {raw!r}", hint=_set_hint(key, "<x>")
            ) from None
        _check_range(key, value, minimum, maximum)
        return value

    def boolean(self, key: str) -> bool:
        raw = self.string(key).strip().lower()
        if raw not in ("true", "false"):
            raise ConfigError(
                f"{qualify(key)} must be true or false, got {raw!r}",
                hint=_set_hint(key, "true"),
            )
        return raw == "true"

    def choice(self, key: str, choices: Iterable[str]) -> str:
        """A value from a fixed list; the error lists the valid choices."""
        value = self.string(key)
        return check_choice(key, value, choices)


#: who alarms, alerts and budgets mail: one key for every target (issue 40 item 4)
ALERT_EMAIL = "alertEmail"
#: the release a stack serves: one key for every target (issue 40 item 4)
RELEASE_URL = "releaseUrl"
#: old key -> the key that replaced it, accepted for one release with a deprecation warning
DEPRECATED_KEYS = {
    "sagemakerAlarmEmail": ALERT_EMAIL,
    "k8sAlertEmail": ALERT_EMAIL,
    "budgetEmail": ALERT_EMAIL,
    "sagemakerIcManifestUrl": RELEASE_URL,
}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def deprecated_keys(source: ConfigSource) -> list[str]:
    """One warning per deprecated key the stack sets (non-empty), naming the key to use."""
    return [
        f"{qualify(old)} is deprecated: use {qualify(new)} (the old key goes in the next release)"
        for old, new in DEPRECATED_KEYS.items()
        if (source(qualify(old)) or "").strip()
    ]


def renamed(reader: ConfigReader, key: str, old: str, what: str) -> tuple[str, str | None]:
    """The value of ``key`` and the key that gave it: for one release the deprecated ``old``
    (see DEPRECATED_KEYS) still gives it; both set and different is an error naming both."""
    new, legacy = reader.lookup(key), reader.lookup(old)
    if new is not None and legacy is not None and new != legacy:
        raise ConfigError(
            f"{qualify(key)} is {new!r} but the deprecated {qualify(old)} is "
            f"{legacy!r}: they name the same {what}",
            hint=f"delete {qualify(old)} from the stack file (`pulumi config rm {qualify(old)}`)"
            f" and keep {qualify(key)}",
        )
    return (key, new) if new is not None else (old, legacy)


def alert_email(reader: ConfigReader, old: str) -> str | None:
    """``alertEmail``: the address alarms, alerts and budgets mail, None for nobody. For one
    release the deprecated key ``old`` still gives it; both set and different is an error."""
    key, email = renamed(reader, ALERT_EMAIL, old, "address")
    if email is not None and not _EMAIL.match(email):
        raise ConfigError(
            f"{qualify(key)} is {email!r}, not an email address",
            hint=f'`pulumi config set {qualify(ALERT_EMAIL)} you@example.com`, or "" for none',
        )
    return email


def check_choice(key: str, value: str, choices: Iterable[str], why: str = "") -> str:
    """``value`` when it is one of ``choices``; else ConfigError listing them (and why)."""
    valid = list(choices)
    if value not in valid:
        reason = f" ({why})" if why else ""
        raise ConfigError(
            f"{qualify(key)} is {value!r}, which is not supported{reason}; "
            f"valid choices: {', '.join(valid)}",
            hint=_set_hint(key, valid[0] if valid else "<value>"),
        )
    return value


def _check_range(key: str, value: float, minimum: float | None, maximum: float | None) -> None:
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise ConfigError(
            f"{qualify(key)} is {value}, must be {bounds}", hint=_set_hint(key, "<n>")
        )


def check_capacity(min_key: str, low: int, max_key: str, high: int) -> None:
    """min <= max, with both keys named in the error."""
    if low > high:
        raise ConfigError(
            f"{qualify(min_key)} ({low}) is greater than {qualify(max_key)} ({high})",
            hint=f"set {qualify(min_key)} <= {qualify(max_key)}",
        )


@dataclass(frozen=True)
class ReleaseLocation:
    """A release root in an object store: ``<scheme>://<bucket>/<prefix>``."""

    scheme: str
    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.prefix}" if self.prefix else self.root

    @property
    def root(self) -> str:
        return f"{self.scheme}://{self.bucket}"

    def key(self, relative: str) -> str:
        """Object key of ``relative`` (``mme/``) under the release root."""
        return f"{self.prefix}/{relative}" if self.prefix else relative


PREFIX_RULE = "the path may hold only A-Z a-z 0-9 . _ = + - segments, without . or .."


def valid_prefix(prefix: str) -> bool:
    """An object-key prefix of safe ``/``-separated segments (empty is the bucket root)."""
    parts = prefix.split("/") if prefix else []
    return all(_PREFIX_PART.match(part) and part not in (".", "..") for part in parts)


def parse_release_url(key: str, url: str, schemes: Iterable[str]) -> ReleaseLocation:
    """Parse and check a release URL written by ``tdk package --release``."""
    valid = list(schemes)
    example = f"{valid[0]}://my-bucket/releases/v1" if valid else "<url>"
    scheme, sep, rest = url.partition("://")
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    problem = ""
    if not sep or scheme not in valid:
        problem = f"its scheme must be one of {', '.join(s + '://' for s in valid)}"
        if scheme == "file" or (not sep and url.startswith(("/", "."))):
            # a release on this machine's disk: the deployment's servers never see it
            problem = (
                f"a release on this machine's disk cannot be read by the deployment's servers; "
                f"{problem}: publish it there with `tdk package --release {example}`"
            )
    elif not _BUCKET.match(bucket) or ".." in bucket:
        problem = f"{bucket!r} is not a valid bucket name (3-63 of a-z 0-9 . _ -)"
    elif any(c in url for c in "?#") or not valid_prefix(prefix):
        problem = PREFIX_RULE
    if problem:
        raise ConfigError(f"{qualify(key)} is {url!r}: {problem}", hint=_set_hint(key, example))
    return ReleaseLocation(scheme, bucket, prefix)


@dataclass(frozen=True)
class StackConfig:
    """What every target shares: which target, the base name, where releases live."""

    target: str
    name: str
    #: None: the target creates a private release store and exports its URL
    release: ReleaseLocation | None


def read_stack_config(
    reader: ConfigReader, target: str, release_schemes: Iterable[str]
) -> StackConfig:
    """The common keys (``name``, ``releaseUrl``) for the already chosen ``target``."""
    name = reader.string("name")
    if not _NAME.match(name):
        raise ConfigError(
            f"{qualify('name')} is {name!r}: use 1-40 of a-z 0-9 and -, starting and ending "
            "with a letter or digit (it prefixes every resource name)",
            hint=_set_hint("name", "tdk-dev"),
        )
    url = reader.optional_string("releaseUrl")
    release = None if url is None else parse_release_url("releaseUrl", url, release_schemes)
    return StackConfig(target=target, name=name, release=release)


def _as_config_string(value: Any) -> str:
    """A stack-file value as the Pulumi CLI hands it to the program (a string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


MAX_STACK_FILE_BYTES = 1024 * 1024  # a stack file is a few KB; larger is not one


def missing_project_hint(folder: Path) -> str:
    """Where the stacks are when ``folder`` holds no ``Pulumi.yaml``: the flag that says it,
    with the kit's own project when this is a source checkout."""
    hint = "run from the folder that holds Pulumi.yaml, or pass `--project-dir DIR` naming it"
    kit = Path(__file__).resolve().parents[1]
    if (kit / "Pulumi.yaml").is_file() and kit != folder.resolve():
        hint += f" (the kit's own: `--project-dir {shlex.quote(str(kit))}`)"
    return hint


def _load_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        if (path.parent / "Pulumi.yaml").is_file():
            stacks = ", ".join(sorted(p.name for p in path.parent.glob("Pulumi.*.yaml")))
            hint = f"check the stack name; {path.parent} holds {stacks or 'no stack file'}"
        else:
            hint = missing_project_hint(path.parent)
        raise UsageError(f"{path} does not exist", hint=hint)
    try:
        data = bounded.load_yaml(path, "fix the file", limit=MAX_STACK_FILE_BYTES) or {}
    except bounded.DocumentError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping at the top", hint="fix the file")
    return data


def merged_stack_config(
    project_dir: Path, stack: str | None, overrides: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """What the Pulumi CLI hands the program: each key's ``Pulumi.yaml`` default, then
    ``Pulumi.<stack>.yaml`` over it (None: no stack file, the defaults alone), then
    ``overrides``; qualified key -> string.

    The one merge ``tdk render`` and the mock tests both use.
    """
    project = _load_yaml(project_dir / "Pulumi.yaml")
    values: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        if isinstance(decl, dict) and ("default" in decl or "value" in decl):
            values[qualify(key)] = _as_config_string(decl.get("default", decl.get("value")))
        elif not isinstance(decl, dict):
            values[qualify(key)] = _as_config_string(decl)
    stack_file = _load_yaml(project_dir / f"Pulumi.{stack}.yaml") if stack is not None else {}
    for key, value in (stack_file.get("config") or {}).items():
        values[qualify(key)] = _as_config_string(value)
    for key, value in (overrides or {}).items():
        values[qualify(key)] = _as_config_string(value)
    return values
