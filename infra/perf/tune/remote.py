"""The user's own Triton (``tdk tune --url``): candidates are loaded through the repository API
with a config override, and the model's original config is put back afterwards.

Triton must run with ``--model-control-mode=explicit``. Only the tuned model is ever loaded,
reloaded or unloaded; the server's repository is never written. The override, measured on
Triton 2.51 (docs/ENVIRONMENT facts): ``POST /v2/repository/models/<m>/load`` with
``{"parameters": {"config": "<ModelConfig as JSON>"}}``; ``GET /v2/models/<m>/config`` then
reports it. Source: https://github.com/triton-inference-server/server/blob/main/docs/protocol/extension_model_repository.md
(checked 2026-11-24).
"""

from __future__ import annotations

import http.client
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit

from infra.perf.tune.accel import Capabilities
from infra.perf.tune.gpu import MetricsReader
from tdk import bounded
from tdk.errors import EndpointError, UsageError

REQUEST_TIMEOUT_S = 30.0
LOAD_TIMEOUT_S = 300.0
_GPU_KIND = "KIND_GPU"
#: the hint when Triton answers 403: its repository and config APIs want a header
_RESTRICTED = (
    "this Triton restricts its repository and config APIs (--http-restricted-api): give the "
    "header and its key with --header-file FILE (`Name: value`, a file only you can read)"
)


class RemoteTriton:
    """One model on a Triton at ``url``; ``with`` restores its config (or unloads it) on exit."""

    def __init__(
        self,
        url: str,
        model: str,
        metrics_url: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.metrics_url = metrics_url
        #: sent with every call (``--header-file``: the key of Triton's restricted APIs)
        self._headers = dict(headers)
        #: reads the GPU's utilization and memory after each window (``--metrics-url``)
        self._reader = MetricsReader(metrics_url) if metrics_url is not None else None
        self.metrics: Callable[[], dict[str, float]] | None = self._reader
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"--url {url!r}: expected http(s)://HOST:PORT of Triton's HTTP endpoint",
                hint="e.g. --url http://127.0.0.1:8000 (kubectl port-forward pod/... 8000)",
            )
        if not re.fullmatch(r"[A-Za-z0-9._-]+", model):
            raise UsageError(
                f"--model {model!r}: not a Triton model name", hint="e.g. --model bert"
            )
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port or (443 if self._https else 80)
        self.name = model
        self._path = f"/v2/repository/models/{quote(model)}"
        self.was_loaded = False
        self.original_json = ""
        self.base_config: Any = None
        self.capabilities = Capabilities(gpu=False)
        #: the user's Triton is reached at ``url`` (a TCP connection)
        self.opener = None

    def _request(
        self, method: str, path: str, body: object = None, timeout: float = REQUEST_TIMEOUT_S
    ) -> tuple[int, bytes]:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = kind(self._host, self._port, timeout=timeout)
        payload = None if body is None else json.dumps(body).encode()
        try:
            conn.request(method, path, body=payload, headers=self._headers)
            response = conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise EndpointError(
                f"Triton at {self.url}: {method} {path} failed: {exc}",
                hint="check --url and that the server (or its port-forward) is running",
            ) from exc
        finally:
            conn.close()

    def fetch_config(self) -> Any:
        """The model's config as the server serves it now (loading it first if it was not)."""
        from google.protobuf import json_format

        from packager.config import new_config

        status, _ = self._request("GET", f"/v2/models/{quote(self.name)}/ready")
        self.was_loaded = status == 200
        if not self.was_loaded:
            self._load({})
        status, body = self._request("GET", f"/v2/models/{quote(self.name)}/config")
        if status != 200:
            raise EndpointError(
                f"Triton at {self.url}: no config for {self.name}: {_error(body)}",
                hint=_RESTRICTED if status == 403 else "",
            )
        self.original_json = body.decode("utf-8")
        config = json_format.Parse(self.original_json, new_config(), ignore_unknown_fields=True)
        self.base_config = config
        gpu = any(_kind_name(group.kind) == _GPU_KIND for group in config.instance_group)
        shown = self._reader is not None and self._reader.has_gpu()
        self.capabilities = Capabilities(gpu=gpu or shown)
        return config

    def _load(self, body: dict[str, Any]) -> None:
        status, reply = self._request("POST", f"{self._path}/load", body, LOAD_TIMEOUT_S)
        if status != 200:
            hint = "start Triton with --model-control-mode=explicit"
            if status == 400 and b"explicit" not in reply:
                hint = "the tried config is not valid for this model on this server"
            if status == 403:
                hint = _RESTRICTED
            raise EndpointError(
                f"Triton at {self.url} could not load {self.name}: {_error(reply)}", hint=hint
            )

    def load(self, config: Any) -> None:
        """Reload the model with ``config`` as an override (the repository is not touched)."""
        from google.protobuf import json_format

        self._load({"parameters": {"config": json_format.MessageToJson(config)}})

    def restore(self) -> None:
        """Put the original config back, or unload the model if tune loaded it."""
        if self.was_loaded:
            self._load({"parameters": {"config": self.original_json}})
        else:
            status, reply = self._request("POST", f"{self._path}/unload", {}, LOAD_TIMEOUT_S)
            if status != 200:
                raise EndpointError(f"Triton at {self.url} could not unload {self.name}: {reply!r}")
        self.record.unlink(missing_ok=True)

    @property
    def record(self) -> Path:
        """Where the original config is kept while a tune may have changed it."""
        from infra.triton_runtime.private import state_dir

        server = re.sub(r"[^A-Za-z0-9._-]", "_", f"{self._host}_{self._port}")
        return state_dir() / "tune" / f"{server}--{self.name}.json"

    def refuse_unfinished(self) -> None:
        """A record left by a tune that never restored (SIGKILL): the server may still serve a
        candidate, which must not be measured as the shipped config."""
        if self.record.exists():
            raise UsageError(
                f"a tune of {self.name} on {self.url} did not finish: the server may still serve "
                f"a candidate config, not the one shipped (original kept in {self.record})",
                hint=f"tdk tune --url {self.url} --model {self.name} --restore",
            )

    def _keep_original(self) -> None:
        record = self.record
        record.parent.mkdir(parents=True, exist_ok=True)
        data = {"url": self.url, "model": self.name, "was_loaded": self.was_loaded}
        staged = record.with_suffix(".tmp")
        staged.write_text(json.dumps({**data, "config": self.original_json}), encoding="utf-8")
        os.replace(staged, record)

    def restore_recorded(self) -> None:
        """Put back the config a killed tune recorded (``tdk tune --restore``)."""
        try:
            if not self.record.exists():
                raise FileNotFoundError(self.record)
            data = bounded.load_json(self.record, "delete it and reload the model")
            self.was_loaded, self.original_json = bool(data["was_loaded"]), str(data["config"])
        except bounded.DocumentError as exc:
            raise UsageError(exc.message, hint=exc.hint) from None
        except FileNotFoundError:
            raise UsageError(
                f"nothing to restore: no unfinished tune of {self.name} on {self.url}",
                hint="tdk tune --restore is for a tune that was killed before it restored",
            ) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"{self.record}: not a tune record ({exc})", hint="delete it and reload the model"
            ) from exc
        self.restore()

    def __enter__(self) -> RemoteTriton:
        if self.base_config is None:
            self.fetch_config()
        self._keep_original()  # before the first candidate is loaded
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()


def _kind_name(kind: int) -> str:
    from tritonclient.grpc import model_config_pb2 as pb

    return str(pb.ModelInstanceGroup.Kind.Name(kind))


def _error(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body[:300].decode("utf-8", "replace")
