"""Placeholder values left in a stack: documentation-only addresses and domains, and the
example names the committed stack files ship with (``my-gcp-project``, ``ops@example.com``,
``203.0.113.0/24``). ``tdk doctor`` lists them, ``tdk validate --stack`` warns and ``tdk render
k8s`` refuses them, so a placeholder is never deployed or written into a manifest silently.

Reserved for documentation, never routed or registered (checked 2026-11-26):
- IPv4 TEST-NET-1/2/3: https://www.rfc-editor.org/rfc/rfc5737 (section 3)
- IPv6 2001:db8::/32: https://www.rfc-editor.org/rfc/rfc3849
- example.com/.net/.org and the .example, .test, .invalid TLDs:
  https://www.rfc-editor.org/rfc/rfc2606 (sections 2 and 3)
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

DOC_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)
DOC_DOMAINS = ("example.com", "example.net", "example.org")
DOC_TLDS = ("example", "test", "invalid")
#: names the stack files and docs use as stand-ins: ``my-gcp-project``, ``my-tdk-releases``,
#: ``MY_BUCKET``, ``YOUR_PROJECT``, ``<your-org>``
_NAME = re.compile(r"(?<![\w-])(my-[a-z0-9-]+|MY_[A-Z0-9_]+|YOUR_[A-Z0-9_]+|<[^<>\s]+>)(?![\w-])")
_ADDRESS = re.compile(r"[0-9a-fA-F:.]+(?:/\d{1,3})?")
_HOST = re.compile(r"(?:[\w-]+\.)+([A-Za-z]{2,})\b")


@dataclass(frozen=True)
class Placeholder:
    """One stand-in value: the stack key holding it, the value, and why it is one."""

    key: str
    value: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "why": self.why}


def _network(text: str) -> str:
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        return ""
    for doc in DOC_NETWORKS:
        if net.version == doc.version and net.subnet_of(doc):  # type: ignore[arg-type]
            return f"documentation range {doc} (RFC 5737/3849)"
    return ""


def _domain(host: str) -> str:
    host = host.lower().rstrip(".")
    if any(host == d or host.endswith("." + d) for d in DOC_DOMAINS):
        return f"example domain {host} (RFC 2606)"
    if host.rsplit(".", 1)[-1] in DOC_TLDS:
        return f"reserved TLD .{host.rsplit('.', 1)[-1]} (RFC 2606)"
    return ""


def why(value: str) -> str:
    """Why ``value`` is a placeholder ("" when it is not one)."""
    for part in re.split(r"[\s,;\"'\[\]{}]+", value):
        if _ADDRESS.fullmatch(part) and any(c.isdigit() for c in part):
            found = _network(part)
            if found:
                return found
        host = part.split("@", 1)[-1].split("://", 1)[-1].split("/", 1)[0]
        if _HOST.fullmatch(host):
            found = _domain(host)
            if found:
                return found
    name = _NAME.search(value)
    if name:
        return f"example name {name.group(1)}"
    return ""


def scan(values: dict[str, str]) -> list[Placeholder]:
    """The placeholders among a stack's configured ``key -> value`` strings."""
    return [
        Placeholder(key, value, reason)
        for key, value in sorted(values.items())
        if value and (reason := why(value))
    ]


def scan_stack(project_dir: Path, stack: str) -> list[Placeholder]:
    """The placeholders of ``Pulumi.<stack>.yaml`` (merged over ``Pulumi.yaml``, as Pulumi
    hands them to the program)."""
    from infra.config import merged_stack_config

    return scan(merged_stack_config(project_dir, stack))


def describe(stack: str, found: list[Placeholder]) -> str:
    """One message naming the stack file, each key and the fix."""
    keys = "; ".join(f"{p.key} = {p.value}: {p.why}" for p in found)
    return f"Pulumi.{stack}.yaml still holds placeholder values ({keys})"


def fix_hint(stack: str, found: list[Placeholder]) -> str:
    first = found[0].key
    return f"set your own values, e.g. `pulumi config set {first} VALUE -s {stack}`"
