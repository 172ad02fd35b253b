"""What Triton's metrics endpoint says about its GPUs: ``nv_gpu_utilization`` (0..1 per GPU) and
``nv_gpu_memory_used_bytes``, read after each measurement window with ``--metrics-url``.

Series names: https://github.com/triton-inference-server/server/blob/main/docs/user_guide/metrics.md
(checked 2026-11-26); seen exported by Triton 2.51 on an H200 (docs/ENVIRONMENT facts).
"""

from __future__ import annotations

import http.client
import re
from urllib.parse import urlsplit

from tdk.errors import EndpointError, UsageError

UTILIZATION = "nv_gpu_utilization"
MEMORY_USED = "nv_gpu_memory_used_bytes"
TIMEOUT_S = 30.0
_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_samples(text: str) -> dict[str, list[float]]:
    """Every sample value by metric name, from the Prometheus text exposition format."""
    samples: dict[str, list[float]] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None:  # comments (# HELP / # TYPE) and blank lines
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        samples.setdefault(match.group(1), []).append(value)
    return samples


def gpu_figures(text: str) -> dict[str, float]:
    """The busiest GPU's utilization and the GPU memory used in all; empty without a GPU."""
    samples = parse_samples(text)
    figures: dict[str, float] = {}
    if samples.get(UTILIZATION):
        figures["gpu_utilization"] = max(samples[UTILIZATION])
    if samples.get(MEMORY_USED):
        figures["gpu_memory_used_bytes"] = sum(samples[MEMORY_USED])
    return figures


class MetricsReader:
    """Reads Triton's metrics at ``url`` (``http(s)://HOST:PORT/metrics``)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"--metrics-url {url!r}: expected http(s)://HOST:PORT/metrics",
                hint="e.g. --metrics-url http://127.0.0.1:8002/metrics",
            )
        self.url = url
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._path = parts.path or "/metrics"

    def text(self) -> str:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = kind(self._host, self._port, timeout=TIMEOUT_S)
        try:
            conn.request("GET", self._path)
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise EndpointError(
                f"--metrics-url {self.url}: {exc}", hint="check the metrics port (or port-forward)"
            ) from exc
        finally:
            conn.close()
        if response.status != 200:
            raise EndpointError(f"--metrics-url {self.url}: HTTP {response.status}", "check it")
        return body.decode("utf-8", "replace")

    def has_gpu(self) -> bool:
        """Triton exports ``nv_gpu_*`` series only when it sees a GPU."""
        return any(name.startswith("nv_gpu_") for name in parse_samples(self.text()))

    def __call__(self) -> dict[str, float]:
        return gpu_figures(self.text())
