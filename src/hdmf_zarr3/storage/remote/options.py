"""``storage_options`` in either convention, mapped onto obstore's configuration.

Code written for zarr-python or hdmf-zarr passes fsspec's options (those of s3fs, gcsfs, adlfs and fsspec's
HTTP file system); obstore, which opens our URLs, has names of its own. :func:`to_obstore` takes both and
returns obstore's keyword arguments, reading no file, environment or network (boto3 reads a ``profile`` only
when obstore first asks for credentials). One setting given two ways with different values (``key`` and
``access_key_id``) is refused, as is an option with no meaning for the store: the error names the option,
the URL and what is accepted, never a secret.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from ...errors import StoreError

#: obstore's kinds of store (``obstore.parse_scheme``) that a URL of ours opens.
from .aws_profile import AwsProfile
from .obstore_keys import (
    ARGUMENTS,
    CLIENT_KEYS,
    FSSPEC_AS_OBSTORE,
    HTTP_ARGUMENTS,
    HTTP_IGNORED,
    IGNORED,
    KINDS,
    OBSTORE_KEYS,
    PREFIXES,
    STORE_NAMES,
    canonical,
)


class _Options:
    """obstore's keyword arguments being assembled; each remembers the option that set it."""

    def __init__(self, kind: str, url: str):
        self.kind, self.url = kind, url
        self.config: dict[str, Any] = {}
        self.client: dict[str, Any] = {}
        self.headers: dict[str, Any] = {}
        self.source: dict[tuple[str, str], str] = {}

    def fail(self, message: str) -> StoreError:
        return StoreError(f"storage_options: {message}", self.url)

    def set(self, key: str, value: Any, source: str, section: str = "config") -> None:
        target = {"config": self.config, "client_options": self.client, "headers": self.headers}[section]
        if key in target and _comparable(target[key]) != _comparable(value):
            first = self.source[(section, key)]
            raise self.fail(
                f"{first!r} and {source!r} both set obstore's {section} {key!r}, to different values; give one of them"
            )
        target.setdefault(key, value)
        self.source.setdefault((section, key), source)

    def obstore_key(self, name: str, value: Any, source: str) -> None:
        key = canonical(self.kind, name)
        if key is None:
            raise self.fail(f"{source!r} is no option of {STORE_NAMES[self.kind]}. {accepted(self.kind)}")
        self.set(key, value, source)

    def argument(self, name: str, value: Any) -> None:
        if name in ("retry_config", "credential_provider"):
            self.set(name, value, name)
            return
        for key, item in _mapping(self, name, value).items():
            if name == "config":
                self.obstore_key(key, item, f"config.{key}")
            elif key not in CLIENT_KEYS:
                raise self.fail(
                    f"'client_options.{key}' is no obstore client option; accepted are {', '.join(sorted(CLIENT_KEYS))}"
                )
            elif key == "default_headers":
                for header, text in _mapping(self, "client_options.default_headers", item).items():
                    self.set(header.lower(), text, f"client_options.default_headers.{header}", "headers")
            else:
                self.set(key, item, f"client_options.{key}", "client_options")

    def result(self) -> dict[str, Any]:
        out = dict(self.config)
        if self.source.get(("config", "credential_provider")) == "profile":
            spelled = [
                self.source[("config", k)]
                for k in ("access_key_id", "secret_access_key", "session_token")
                if ("config", k) in self.source
            ]
            if spelled:
                raise self.fail(f"'profile' and {', '.join(map(repr, spelled))} both give credentials; give one")
        if (
            self.source.get(("config", "virtual_hosted_style_request")) == "config_kwargs.s3.addressing_style"
            and self.config.get("virtual_hosted_style_request")
            and "endpoint" in self.config
        ):
            raise self.fail(
                "addressing_style 'virtual' with an endpoint: obstore puts no bucket into an endpoint; "
                "give the bucket's own endpoint with virtual_hosted_style_request=True instead"
            )
        endpoints = [self.config.get(k) for k in ("endpoint", "aws_endpoint_url_s3", "base_url")]
        if any(str(e).lower().startswith("http://") for e in [*endpoints, self.url if self.kind == "http" else None]):
            self.client.setdefault("allow_http", True)  # an http:// URL or endpoint is meant as written
        client = dict(self.client)
        if self.headers:
            client["default_headers"] = dict(self.headers)
        if client:
            out["client_options"] = client
        return out


def accepted(kind: str) -> str:
    """The sentence of an error that lists what ``storage_options`` takes for a kind of store."""
    fsspec = sorted(set(_FSSPEC[kind]) | FSSPEC_AS_OBSTORE[kind]) + ["fsspec's cache settings (ignored)"]
    own = sorted(OBSTORE_KEYS[kind]) + list(HTTP_ARGUMENTS if kind == "http" else ARGUMENTS)
    prefix = f" (also upper case, or with the prefix {' or '.join(PREFIXES[kind])})" if PREFIXES[kind] else ""
    return f"Accepted are fsspec's {', '.join(fsspec)} and obstore's {', '.join(own)}{prefix}."


def to_obstore(kind: str, options: Mapping[str, Any] | None, url: str) -> dict[str, Any]:
    """obstore's keyword arguments (for ``obstore.store.from_url(url, **kwargs)``) of ``storage_options``
    given in fsspec's convention, obstore's, or a mix of both.

    Parameters
    ----------
    kind : str
        The kind of store ``url`` opens: ``"s3"``, ``"gcs"``, ``"azure"`` or ``"http"`` (``obstore.parse_scheme``).
    options : mapping or None
        ``storage_options`` as given.
    url : str
        The URL being opened (for the messages of errors).

    Raises
    ------
    StoreError
        An option that means nothing for the store, an fsspec option with no obstore counterpart, a value
        of the wrong type, or one setting given twice (two spellings) with different values.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    built = _Options(kind, url)
    if options is not None and not isinstance(options, Mapping):
        raise built.fail(f"storage_options must be a dict, not {type(options).__name__}")
    for name, value in (options or {}).items():
        if not isinstance(name, str):
            raise built.fail(f"option names are strings, not {name!r}")
        if name in _FSSPEC[kind]:
            _FSSPEC[kind][name](built, value)
        elif name in (HTTP_ARGUMENTS if kind == "http" else ARGUMENTS):
            built.argument(name, value)
        elif name in (HTTP_IGNORED if kind == "http" else IGNORED):
            continue
        else:
            built.obstore_key(name, value, name)
    return built.result()


# ---- fsspec's options, per store ---------------------------------------------------------------------


def _mapping(built: _Options, name: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise built.fail(f"{name!r} must be a dict, not {type(value).__name__}")
    return value


def _switch(key: str, fsspec: str) -> Callable[[_Options, Any], None]:
    """An fsspec flag whose ``True`` is obstore's ``key=True`` (``False``, their default, sets nothing)."""

    def put(built: _Options, value: Any) -> None:
        if not isinstance(value, bool) and value is not None:
            raise built.fail(f"{fsspec!r} must be True or False, not {type(value).__name__}")
        if value:
            built.set(key, True, fsspec)

    return put


_anon = _switch("skip_signature", "anon")


def _rename(key: str, fsspec: str) -> Callable[[_Options, Any], None]:
    return lambda built, value: built.set(key, value, fsspec)


def _sub_options(
    built: _Options, name: str, value: Any, table: dict[str, Callable[[_Options, Any, str], None]], why: str
) -> None:
    for key, item in _mapping(built, name, value).items():
        if key not in table:
            raise built.fail(
                f"'{name}.{key}' has no obstore counterpart here ({why}); accepted in {name} are "
                f"{', '.join(sorted(table))}"
            )
        table[key](built, item, f"{name}.{key}")


def _set_as(key: str, section: str = "config") -> Callable[[_Options, Any, str], None]:
    return lambda built, value, source: built.set(key, value, source, section)


def _verify(built: _Options, value: Any, source: str) -> None:
    if value is False:
        built.set("allow_invalid_certificates", True, source, "client_options")
    elif value is not True:  # a CA bundle's path: obstore takes the certificate itself, not a path
        raise built.fail(
            f"{source!r} as a path is not supported; give "
            "client_options={'root_certificate': <the PEM text of that file>}"
        )


def _seconds(key: str) -> Callable[[_Options, Any, str], None]:
    def put(built: _Options, value: Any, source: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise built.fail(f"{source!r} must be a number of seconds")
        built.set(key, timedelta(seconds=value), source, "client_options")

    return put


def _signature_version(built: _Options, value: Any, source: str) -> None:
    if str(value).lower() == "unsigned" or type(value).__name__ == "UNSIGNED":  # botocore.UNSIGNED
        built.set("skip_signature", True, source)
    elif str(value).lower() not in ("s3v4", "v4"):  # obstore signs with SigV4, as botocore does for S3
        raise built.fail(f"{source!r}={value!r}: obstore signs requests with SigV4 or not at all (botocore.UNSIGNED)")


def _addressing(built: _Options, value: Any, source: str) -> None:
    for key, item in _mapping(built, source, value).items():
        if key != "addressing_style" or item not in ("auto", "path", "virtual"):
            raise built.fail(
                f"'{source}.{key}'={item!r} has no obstore counterpart; accepted is addressing_style "
                "'auto', 'path' or 'virtual'"
            )
        if item != "auto":
            built.set("virtual_hosted_style_request", item == "virtual", f"{source}.addressing_style")


def _profile(built: _Options, value: Any) -> None:
    if not isinstance(value, str):
        raise built.fail(f"'profile' must be the name of an AWS profile, not {type(value).__name__}")
    if importlib.util.find_spec("boto3") is None:
        raise built.fail(
            "'profile' is read with boto3, which is not installed (pip install boto3); or give key and secret"
        )
    built.set("credential_provider", AwsProfile(value), "profile")


_S3_CLIENT = {
    "endpoint_url": _set_as("endpoint"),
    "region_name": _set_as("region"),
    "aws_access_key_id": _set_as("access_key_id"),
    "aws_secret_access_key": _set_as("secret_access_key"),
    "aws_session_token": _set_as("session_token"),
    "verify": _verify,
}
_S3_CONFIG = {
    "signature_version": _signature_version,
    "s3": _addressing,
    "region_name": _set_as("region"),
    "connect_timeout": _seconds("connect_timeout"),
    "read_timeout": _seconds("read_timeout"),
}


def _gcs_token(built: _Options, value: Any) -> None:
    if value is None or value in ("google_default", "cloud"):
        return  # obstore's default: application default credentials, then the metadata server
    if value == "anon":
        built.set("skip_signature", True, "token")
    elif value in ("cache", "browser"):
        raise built.fail(
            f"token={value!r} (gcsfs's own log-in) is not supported; give the path of a credentials "
            "JSON file, or run `gcloud auth application-default login` and give no token"
        )
    elif isinstance(value, (str, os.PathLike)):  # a service-account or authorized-user JSON file: obstore reads both
        built.set("application_credentials", os.fspath(value), "token")
    elif isinstance(value, Mapping) and value.get("type") == "service_account":
        built.set("service_account_key", json.dumps(dict(value)), "token")
    elif isinstance(value, Mapping):
        raise built.fail(
            "token as a dict is supported for service-account keys only; give the path of the JSON file instead"
        )
    else:
        raise built.fail(
            f"token as a {type(value).__name__} is not supported; give the path of a credentials "
            "JSON file, or credential_provider=obstore.auth.google.GoogleCredentialProvider(...)"
        )


def _refuse(why: str) -> Callable[[_Options, Any], None]:
    def refuse(built: _Options, value: Any) -> None:
        raise built.fail(why)

    return refuse


def _sas_token(built: _Options, value: Any) -> None:
    built.set("sas_key", value.lstrip("?") if isinstance(value, str) else value, "sas_token")


def _connection_string(built: _Options, value: Any) -> None:
    if not isinstance(value, str):
        raise built.fail("'connection_string' must be a string")
    parts: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in value.split(";"))):
        name, sep, text = item.partition("=")
        if not sep:
            raise built.fail("'connection_string' is not of the form Name=value;Name=value")
        parts[name.strip().lower()] = text.strip()
    source = "connection_string"
    if parts.pop("usedevelopmentstorage", "").lower() == "true":
        built.set("use_emulator", True, source)
    for name, key in (
        ("accountname", "account_name"),
        ("accountkey", "account_key"),
        ("sharedaccesssignature", "sas_key"),
        ("blobendpoint", "endpoint"),
    ):
        if name in parts:
            text = parts.pop(name)
            built.set(key, text.lstrip("?") if key == "sas_key" else text, source)
    protocol, suffix = parts.pop("defaultendpointsprotocol", "https"), parts.pop("endpointsuffix", "core.windows.net")
    if "endpoint" not in built.config and (protocol, suffix) != ("https", "core.windows.net"):
        if "account_name" not in built.config:
            raise built.fail("'connection_string' names an endpoint suffix or protocol but no AccountName")
        built.set("endpoint", f"{protocol}://{built.config['account_name']}.blob.{suffix}", source)
    for other in ("queueendpoint", "tableendpoint", "fileendpoint"):  # other services of the account
        parts.pop(other, None)
    if parts:
        raise built.fail(f"'connection_string' has parts with no obstore counterpart: {', '.join(sorted(parts))}")


def _http_headers(built: _Options, value: Any, source: str = "headers") -> None:
    for header, text in _mapping(built, source, value).items():
        built.set(str(header).lower(), text, f"{source}.{header}", "headers")


_FSSPEC: dict[str, dict[str, Callable[[_Options, Any], None]]] = {
    "s3": {
        "key": _rename("access_key_id", "key"),
        "secret": _rename("secret_access_key", "secret"),
        "anon": _anon,
        "client_kwargs": lambda b, v: _sub_options(b, "client_kwargs", v, _S3_CLIENT, "a botocore client setting"),
        "config_kwargs": lambda b, v: _sub_options(b, "config_kwargs", v, _S3_CONFIG, "for retries, give retry_config"),
        "requester_pays": _switch("request_payer", "requester_pays"),
        "profile": _profile,
    },
    "gcs": {
        "token": _gcs_token,
        "anon": _anon,
        "project": lambda built, value: None,  # bills and lists buckets only
        "endpoint_url": _rename("base_url", "endpoint_url"),
        "requester_pays": _refuse("requester_pays is not supported on GCS: obstore cannot bill a project"),
    },
    "azure": {
        "anon": _anon,
        "sas_token": _sas_token,
        "connection_string": _connection_string,
        "credential": _refuse(
            "credential (an azure-identity object) is not supported; give "
            "credential_provider=obstore.auth.azure.AzureCredentialProvider(credential)"
        ),
    },
    "http": {
        "anon": lambda built, value: None,  # a web server is read without credentials anyway
        "headers": _http_headers,
        "client_kwargs": lambda b, v: _sub_options(
            b, "client_kwargs", v, {"headers": _http_headers}, "give headers or client_options"
        ),
    },
}


def _comparable(value: Any) -> Any:
    """A value as obstore understands it: ``"true"`` is ``True``."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value
