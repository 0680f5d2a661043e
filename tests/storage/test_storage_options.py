"""storage_options in fsspec's convention (s3fs, gcsfs, adlfs, fsspec's HTTP) and obstore's, mapped onto
obstore; ready store objects of obstore and fsspec. Round trips against moto's S3 server on 127.0.0.1 and a
local HTTP server; no other network is used."""

from __future__ import annotations

import ast
import functools
import http.server
import json
import sys
import threading
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from nwb_factories import small_nwbfile
from s3_server import new_bucket, public_file
from writing import write_nwb
from zarr.storage import ObjectStore

from hdmf_zarr3 import NWBZarrIO, StoreError
from hdmf_zarr3.storage.handles.store_opening import open_store
from hdmf_zarr3.storage.remote import options as opts
from hdmf_zarr3.storage.remote.aws_profile import AwsProfile
from hdmf_zarr3.storage.remote.options import to_obstore

obstore = pytest.importorskip("obstore")

S3, GS, AZ, WEB = "s3://bucket/f.nwb.zarr", "gs://bucket/f.nwb.zarr", "az://box/f.nwb.zarr", "https://h/f.nwb.zarr"
HTTP_ENDPOINT = "http://127.0.0.1:9000"


def _mapped(kind, options, url=None):
    return to_obstore(kind, options, url or {"s3": S3, "gcs": GS, "azure": AZ, "http": WEB}[kind])


# ---- the mapping -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"key": "AK", "secret": "SK", "token": "ST"},
            {"access_key_id": "AK", "secret_access_key": "SK", "session_token": "ST"},
        ),
        ({"anon": True}, {"skip_signature": True}),
        ({"anon": False}, {}),
        ({"anon": True, "region": "us-east-2"}, {"skip_signature": True, "region": "us-east-2"}),  # README's
        ({"endpoint_url": "https://minio.lab:9000"}, {"endpoint": "https://minio.lab:9000"}),
        ({"endpoint_url": HTTP_ENDPOINT}, {"endpoint": HTTP_ENDPOINT, "client_options": {"allow_http": True}}),
        (
            {"client_kwargs": {"endpoint_url": HTTP_ENDPOINT, "region_name": "eu-west-1"}},
            {"endpoint": HTTP_ENDPOINT, "region": "eu-west-1", "client_options": {"allow_http": True}},
        ),
        (
            {"client_kwargs": {"aws_access_key_id": "AK", "aws_secret_access_key": "SK", "aws_session_token": "ST"}},
            {"access_key_id": "AK", "secret_access_key": "SK", "session_token": "ST"},
        ),
        ({"client_kwargs": {"verify": False}}, {"client_options": {"allow_invalid_certificates": True}}),
        ({"client_kwargs": {"verify": True}}, {}),
        ({"requester_pays": True}, {"request_payer": True}),
        ({"requester_pays": False}, {}),
        ({"config_kwargs": {"signature_version": "unsigned"}}, {"skip_signature": True}),
        ({"config_kwargs": {"signature_version": "s3v4", "region_name": "us-west-2"}}, {"region": "us-west-2"}),
        ({"config_kwargs": {"s3": {"addressing_style": "virtual"}}}, {"virtual_hosted_style_request": True}),
        ({"config_kwargs": {"s3": {"addressing_style": "path"}}}, {"virtual_hosted_style_request": False}),
        ({"config_kwargs": {"s3": {"addressing_style": "auto"}}}, {}),
        (
            {"config_kwargs": {"connect_timeout": 5, "read_timeout": 60.5}},
            {"client_options": {"connect_timeout": timedelta(seconds=5), "read_timeout": timedelta(seconds=60.5)}},
        ),
        # obstore's own keys, in every spelling obstore takes, and its other arguments
        (
            {"access_key_id": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "aws_region": "eu-west-1", "skip_signature": False},
            {"access_key_id": "AK", "secret_access_key": "SK", "region": "eu-west-1", "skip_signature": False},
        ),
        (
            {"endpoint": HTTP_ENDPOINT, "client_options": {"timeout": "30s"}},
            {"endpoint": HTTP_ENDPOINT, "client_options": {"timeout": "30s", "allow_http": True}},
        ),
        (
            {"endpoint": HTTP_ENDPOINT, "client_options": {"allow_http": False}},  # said explicitly: kept
            {"endpoint": HTTP_ENDPOINT, "client_options": {"allow_http": False}},
        ),
        (
            {"config": {"region": "eu-west-1"}, "retry_config": {"max_retries": 2}},
            {"region": "eu-west-1", "retry_config": {"max_retries": 2}},
        ),
        # fsspec's cache settings change nothing here
        ({"skip_instance_cache": True, "use_listings_cache": False, "default_block_size": 2**20}, {}),
    ],
)
def test_s3_options(options, expected):
    mapped = _mapped("s3", options)
    assert mapped == expected
    obstore.store.from_url(S3, **mapped)  # obstore takes what we made of them


def test_s3_unsigned_from_botocore():
    botocore = pytest.importorskip("botocore")
    assert _mapped("s3", {"config_kwargs": {"signature_version": botocore.UNSIGNED}}) == {"skip_signature": True}


def test_s3_profile_is_read_by_boto3_only_when_obstore_asks(tmp_path, monkeypatch):
    mapped = _mapped("s3", {"profile": "lab"})  # no such profile anywhere: nothing is read yet
    assert isinstance(mapped["credential_provider"], AwsProfile) and mapped["credential_provider"].name == "lab"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    import botocore.exceptions

    with pytest.raises(botocore.exceptions.ProfileNotFound):
        mapped["credential_provider"]()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"token": "anon"}, {"skip_signature": True}),
        ({"anon": True}, {"skip_signature": True}),
        ({"token": None}, {}),
        ({"token": "google_default"}, {}),
        ({"token": "cloud"}, {}),
        ({"project": "lab-project"}, {}),
        ({"token": "/keys/lab.json"}, {"application_credentials": "/keys/lab.json"}),
        ({"token": Path("/keys/lab.json")}, {"application_credentials": "/keys/lab.json"}),
        (
            {"endpoint_url": "http://127.0.0.1:4443"},
            {"base_url": "http://127.0.0.1:4443", "client_options": {"allow_http": True}},
        ),
        (
            {"service_account": "/keys/sa.json", "GOOGLE_BEARER_TOKEN": "t"},
            {"service_account": "/keys/sa.json", "bearer_token": "t"},
        ),
        ({"default_cache_type": "none"}, {}),
    ],
)
def test_gcs_options(options, expected):
    assert _mapped("gcs", options) == expected


def test_gcs_token_dict_is_a_service_account_key():
    key = {"type": "service_account", "client_email": "a@b.iam", "private_key": "---", "project_id": "p"}
    mapped = _mapped("gcs", {"token": key})
    assert json.loads(mapped["service_account_key"]) == key


def test_gcs_token_file_of_a_user_login_is_read_by_obstore(tmp_path):
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps({"type": "authorized_user", "client_id": "a", "client_secret": "b", "refresh_token": "c"})
    )
    store = obstore.store.from_url(GS, **_mapped("gcs", {"token": str(path)}))
    assert store.config["application_credentials"] == str(path)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"account_name": "lab", "account_key": "a2V5"}, {"account_name": "lab", "account_key": "a2V5"}),
        ({"sas_token": "?sv=2024-01-01&sig=abc"}, {"sas_key": "sv=2024-01-01&sig=abc"}),
        ({"anon": True, "account_name": "lab"}, {"skip_signature": True, "account_name": "lab"}),
        (
            {"client_id": "c", "client_secret": "s", "tenant_id": "t"},
            {"client_id": "c", "client_secret": "s", "tenant_id": "t"},
        ),
        (
            {
                "connection_string": "DefaultEndpointsProtocol=https;AccountName=lab;AccountKey=a2V5;"
                "EndpointSuffix=core.windows.net"
            },
            {"account_name": "lab", "account_key": "a2V5"},
        ),
        (
            {
                "connection_string": "BlobEndpoint=http://127.0.0.1:10000/dev;SharedAccessSignature=sv=1&sig=x;"
                "QueueEndpoint=http://127.0.0.1:10001/dev"
            },
            {"endpoint": "http://127.0.0.1:10000/dev", "sas_key": "sv=1&sig=x", "client_options": {"allow_http": True}},
        ),
        (
            {"connection_string": "AccountName=lab;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn"},
            {"account_name": "lab", "account_key": "a2V5", "endpoint": "https://lab.blob.core.chinacloudapi.cn"},
        ),
        ({"connection_string": "UseDevelopmentStorage=true"}, {"use_emulator": True}),
        (
            {"AZURE_STORAGE_ACCOUNT_NAME": "lab", "master_key": "a2V5", "bearer_token": "t"},
            {"account_name": "lab", "account_key": "a2V5", "token": "t"},
        ),
    ],
)
def test_azure_options(options, expected):
    mapped = _mapped("azure", options)
    assert mapped == expected
    obstore.store.from_url(AZ, **({"account_name": "x"} | mapped))


@pytest.mark.parametrize(
    ("url", "options", "expected"),
    [
        (WEB, {"anon": True}, {}),
        (WEB, {"anon": False, "simple_links": True, "block_size": 0, "cache_type": "none"}, {}),
        (
            WEB,
            {"headers": {"Authorization": "Bearer t"}},
            {"client_options": {"default_headers": {"authorization": "Bearer t"}}},
        ),
        (
            WEB,
            {"client_kwargs": {"headers": {"X-Lab": "1"}}, "headers": {"X-Run": "2"}},
            {"client_options": {"default_headers": {"x-lab": "1", "x-run": "2"}}},
        ),
        (WEB, {"client_kwargs": {}}, {}),
        (
            WEB,
            {"client_options": {"timeout": "10s"}, "retry_config": {"max_retries": 1}},
            {"client_options": {"timeout": "10s"}, "retry_config": {"max_retries": 1}},
        ),
        ("http://127.0.0.1:8000/f.nwb.zarr", {}, {"client_options": {"allow_http": True}}),
    ],
)
def test_http_options(url, options, expected):
    mapped = to_obstore("http", options, url)
    assert mapped == expected
    obstore.store.from_url(url, **mapped)


@pytest.mark.parametrize(
    ("kind", "options", "named"),
    [
        ("s3", {"key": "A", "access_key_id": "B"}, ["'key'", "'access_key_id'"]),
        ("s3", {"key": "A", "aws_access_key_id": "B"}, ["'key'", "'aws_access_key_id'"]),
        ("s3", {"token": "A", "session_token": "B"}, ["'token'", "'session_token'"]),
        ("s3", {"anon": True, "skip_signature": "false"}, ["'anon'", "'skip_signature'"]),
        (
            "s3",
            {"endpoint_url": "https://a", "client_kwargs": {"endpoint_url": "https://b"}},
            ["'endpoint_url'", "'client_kwargs.endpoint_url'"],
        ),
        ("s3", {"client_kwargs": {"region_name": "a"}, "region": "b"}, ["'client_kwargs.region_name'", "'region'"]),
        ("s3", {"region": "a", "config": {"region": "b"}}, ["'region'", "'config.region'"]),
        (
            "s3",
            {"client_kwargs": {"verify": False}, "client_options": {"allow_invalid_certificates": False}},
            ["'client_kwargs.verify'", "'client_options.allow_invalid_certificates'"],
        ),
        ("s3", {"profile": "lab", "key": "A"}, ["'profile'", "'key'"]),
        ("s3", {"profile": "lab", "credential_provider": lambda: None}, ["'profile'", "'credential_provider'"]),
        (
            "s3",
            {"endpoint_url": "https://minio", "config_kwargs": {"s3": {"addressing_style": "virtual"}}},
            ["addressing_style 'virtual' with an endpoint"],
        ),
        ("gcs", {"anon": True, "token": "/keys/k.json", "skip_signature": False}, ["'anon'", "'skip_signature'"]),
        ("gcs", {"endpoint_url": "https://a", "base_url": "https://b"}, ["'endpoint_url'", "'base_url'"]),
        ("azure", {"sas_token": "sv=1&sig=a", "sas_key": "sv=1&sig=b"}, ["'sas_token'", "'sas_key'"]),
        (
            "azure",
            {"connection_string": "AccountName=a;AccountKey=a2V5", "account_name": "b"},
            ["'connection_string'", "'account_name'"],
        ),
        (
            "http",
            {"headers": {"X-A": "1"}, "client_options": {"default_headers": {"x-a": "2"}}},
            ["'headers.X-A'", "'client_options.default_headers.x-a'"],
        ),
    ],
)
def test_one_setting_given_two_ways_with_different_values_is_refused(kind, options, named):
    with pytest.raises(StoreError, match="storage_options") as caught:
        _mapped(kind, options)
    assert all(name in str(caught.value) for name in named), caught.value
    assert caught.value.path.startswith(("s3://", "gs://", "az://", "https://"))


def test_the_same_setting_given_two_ways_alike_is_one():
    assert _mapped("s3", {"key": "A", "access_key_id": "A", "anon": True, "skip_signature": "true"}) == {
        "access_key_id": "A",
        "skip_signature": True,
    }


def test_a_conflict_never_shows_the_secrets():
    with pytest.raises(StoreError) as caught:
        _mapped("s3", {"secret": "hunter2", "secret_access_key": "swordfish"})
    assert "hunter2" not in str(caught.value) and "swordfish" not in str(caught.value)


@pytest.mark.parametrize(
    ("kind", "options", "named", "listed"),
    [
        ("s3", {"colour": "blue"}, "'colour'", ["key", "secret", "client_kwargs", "access_key_id", "skip_signature"]),
        ("s3", {"project": "p"}, "'project'", ["anon", "endpoint_url", "region"]),
        ("s3", {"client_kwargs": {"use_ssl": False}}, "'client_kwargs.use_ssl'", ["endpoint_url", "region_name"]),
        (
            "s3",
            {"config_kwargs": {"max_pool_connections": 50}},
            "'config_kwargs.max_pool_connections'",
            ["signature_version", "connect_timeout"],
        ),
        (
            "s3",
            {"config_kwargs": {"retries": {"max_attempts": 3}}},
            "'config_kwargs.retries'",
            ["read_timeout", "give retry_config"],
        ),
        ("s3", {"s3_additional_kwargs": {"ServerSideEncryption": "AES256"}}, "'s3_additional_kwargs'", ["key"]),
        ("s3", {"client_kwargs": {"config": object()}}, "'client_kwargs.config'", ["verify"]),
        ("s3", {"client_options": {"colour": 1}}, "'client_options.colour'", ["allow_http", "timeout"]),
        ("gcs", {"key": "A"}, "'key'", ["token", "project", "service_account", "application_credentials"]),
        (
            "azure",
            {"account_host": "lab.blob.core.windows.net"},
            "'account_host'",
            ["account_name", "sas_token", "connection_string", "sas_key"],
        ),
        ("http", {"skip_signature": True}, "'skip_signature'", ["headers", "client_kwargs", "client_options"]),
        ("http", {"encoded": True}, "'encoded'", ["anon", "retry_config"]),
    ],
)
def test_unknown_options_are_refused_naming_them_the_url_and_what_is_accepted(kind, options, named, listed):
    url = {"s3": S3, "gcs": GS, "azure": AZ, "http": WEB}[kind]
    with pytest.raises(StoreError) as caught:
        to_obstore(kind, options, url)
    message = str(caught.value)
    assert named in message and url in message and caught.value.path == url, message
    assert all(name in message for name in listed), message


@pytest.mark.parametrize(
    ("kind", "options", "says"),
    [
        ("s3", {"client_kwargs": {"verify": "/etc/ca.pem"}}, "root_certificate"),
        ("s3", {"config_kwargs": {"signature_version": "s3"}}, "SigV4"),
        ("s3", {"anon": "yes"}, "True or False"),
        ("s3", {"client_kwargs": "endpoint"}, "must be a dict"),
        ("gcs", {"token": "browser"}, "not supported"),
        ("gcs", {"token": "cache"}, "not supported"),
        ("gcs", {"token": {"type": "authorized_user"}}, "service-account keys only"),
        ("gcs", {"token": object()}, "GoogleCredentialProvider"),
        ("gcs", {"requester_pays": True}, "cannot bill"),
        ("azure", {"credential": object()}, "AzureCredentialProvider"),
        ("azure", {"connection_string": "AccountName=a;Colour=blue"}, "colour"),
        ("azure", {"connection_string": "EndpointSuffix=core.chinacloudapi.cn"}, "no AccountName"),
        ("http", {"client_kwargs": {"trust_env": True}}, "'client_kwargs.trust_env'"),
        ("http", {"client_kwargs": {"auth": ("u", "p")}}, "give headers or client_options"),
    ],
)
def test_fsspec_options_without_an_obstore_counterpart_are_refused(kind, options, says):
    with pytest.raises(StoreError, match="storage_options") as caught:
        _mapped(kind, options)
    assert says in str(caught.value)


def test_storage_options_must_be_a_dict():
    with pytest.raises(StoreError, match="must be a dict"):
        _mapped("s3", [("key", "A")])


def _typed_dict_fields(stub: str, name: str) -> set[str]:
    tree = ast.parse((Path(obstore.__file__).parent / "_store" / stub).read_text())
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    return {node.target.id for node in cls.body if isinstance(node, ast.AnnAssign)}


def test_the_obstore_keys_are_those_of_the_installed_obstore():
    assert opts.OBSTORE_KEYS["s3"] == _typed_dict_fields("_aws.pyi", "S3Config")
    assert opts.OBSTORE_KEYS["gcs"] == _typed_dict_fields("_gcs.pyi", "GCSConfig")
    assert opts.OBSTORE_KEYS["azure"] == _typed_dict_fields("_azure.pyi", "AzureConfig")
    assert opts.CLIENT_KEYS == _typed_dict_fields("_client.pyi", "ClientConfig")


@pytest.mark.parametrize(
    ("url", "name", "value", "key"),
    [
        (S3, "aws_default_region", "eu-west-1", "default_region"),
        (S3, "aws_endpoint", "https://e", "endpoint"),
        (S3, "AWS_TOKEN", "t", "session_token"),
        (GS, "google_service_account_path", None, "service_account"),
        (AZ, "azure_storage_access_key", "a2V5", "account_key"),
        (AZ, "azure_authority_id", "t", "tenant_id"),
        (AZ, "azure_identity_endpoint", "https://e", "msi_endpoint"),
        (AZ, "azure_storage_sas_token", "sv=1&sig=a", "sas_key"),
    ],
)
def test_other_spellings_of_obstore_keys_mean_what_they_mean_to_obstore(url, name, value, key, tmp_path):
    if value is None:  # a service-account file obstore reads when it builds the store
        value = str(tmp_path / "sa.json")
        Path(value).write_text(
            json.dumps(
                {
                    "client_email": "a@b",
                    "private_key": "x",
                    "private_key_id": "k",
                    "disable_oauth": True,
                    "gcs_base_url": "http://127.0.0.1:1",
                }
            )
        )
    kind = obstore.parse_scheme(url)
    extra = {"account_name": "x"} if kind == "azure" else {}
    assert opts.canonical(kind, name) == key
    ours = obstore.store.from_url(url, **extra, **to_obstore(kind, {name: value}, url)).config
    theirs = obstore.store.from_url(url, **extra, **{name: value}).config
    assert ours == theirs and key in ours


# ---- URLs and ready store objects ------------------------------------------------------------------------


def test_gcs_urls_are_opened_as_gs():
    from hdmf_zarr3.storage.remote.object_stores import remote_store

    store = remote_store("gcs://bucket/f.nwb.zarr", "r", {"token": "anon"})
    assert isinstance(store.store, obstore.store.GCSStore) and store.store.config["skip_signature"]


def test_urls_open_without_fsspec(monkeypatch):
    from hdmf_zarr3.storage.remote.object_stores import remote_store

    monkeypatch.setitem(sys.modules, "fsspec", None)  # as if it were not installed: nothing imports it
    store = remote_store("https://host/f.nwb.zarr", "r", {"anon": True})
    assert isinstance(store.store, obstore.store.HTTPStore)
    assert isinstance(remote_store(S3, "r", {"anon": True}).store, obstore.store.S3Store)


def test_an_unknown_option_is_refused_before_anything_is_requested():
    with pytest.raises(StoreError, match=r"s3://bucket/f\.nwb\.zarr: storage_options: 'colour' is no option of S3"):
        NWBZarrIO(S3, mode="r", storage_options={"colour": "blue"})


@pytest.mark.parametrize(
    "make",
    [
        lambda tmp: obstore.store.MemoryStore(),
        lambda tmp: obstore.store.LocalStore(str(tmp)),
    ],
)
def test_an_obstore_store_object_is_wrapped_in_zarr_object_store(make, tmp_path):
    backend = make(tmp_path)
    with NWBZarrIO(backend, mode="w") as io:
        io.write(small_nwbfile())
    for mode in ("r", "r-"):
        with NWBZarrIO(backend, mode=mode) as io:
            assert isinstance(io.file.store, ObjectStore) and io.file.store.read_only  # (ours: RemoteObjectStore)
            assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))
    if isinstance(backend, obstore.store.LocalStore):  # a real file on disk, read as a path too
        with NWBZarrIO(tmp_path, mode="r") as io:
            assert len(io.read().units) == 2


def test_fsspec_stores_and_mappers_are_zarr_stores():
    fsspec = pytest.importorskip("fsspec")
    from zarr.storage import FsspecStore

    with NWBZarrIO(FsspecStore.from_url("memory://lab/a.nwb.zarr"), mode="w") as io:
        io.write(small_nwbfile())
    mapper = fsspec.get_mapper("memory://lab/a.nwb.zarr")
    with NWBZarrIO(mapper, mode="r") as io:
        assert isinstance(io.file.store, FsspecStore) and io.file.store.read_only
        assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))
    with NWBZarrIO(fsspec.get_mapper("memory://lab/b.nwb.zarr"), mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(FsspecStore.from_url("memory://lab/b.nwb.zarr", read_only=True), mode="r") as io:
        assert len(io.read().units) == 2


def test_http_url_reads_with_fsspec_options_and_sends_the_headers(tmp_path):
    with NWBZarrIO(tmp_path / "f.nwb.zarr", mode="w") as io:
        io.write(small_nwbfile())
    seen = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            seen.append(self.headers.get("X-Lab"))
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/f.nwb.zarr"
        with NWBZarrIO(url, mode="r") as io:  # an http:// URL needs no allow_http
            assert len(io.read().units) == 2
        seen.clear()
        with NWBZarrIO(url, mode="r", storage_options={"anon": True, "headers": {"X-Lab": "jones"}}) as io:
            assert np.array_equal(io.read().acquisition["ts"].data[:], np.arange(1000.0))
        assert seen and set(seen) == {"jones"}
    finally:
        server.shutdown()
        server.server_close()


# ---- S3 round trips (moto on 127.0.0.1) ------------------------------------------------------------------


@pytest.fixture
def signed(s3, monkeypatch):
    """Credentials of an IAM user of the server, which from now on checks every request's signature."""
    import boto3
    from moto import settings

    iam = boto3.client(
        "iam",
        endpoint_url=s3["endpoint"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    user = f"lab-{new_bucket(s3)}"
    iam.create_user(UserName=user)
    iam.put_user_policy(
        UserName=user,
        PolicyName="all",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        ),
    )
    key = iam.create_access_key(UserName=user)["AccessKey"]
    bucket = new_bucket(s3)
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    return {"bucket": bucket, "key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}


def _round_trip(url, options):
    write_nwb(url, storage_options=options)
    with NWBZarrIO(url, mode="r", storage_options=options) as io:
        nwb = io.read()
        assert np.array_equal(nwb.acquisition["ts"].data[:], np.arange(1000.0))
        assert list(nwb.units.to_dataframe()["quality"]) == ["good", "noise"]


def test_s3_round_trip_with_s3fs_client_kwargs(s3, signed):
    url = f"s3://{signed['bucket']}/a.nwb.zarr"
    options = {
        "key": signed["key"],
        "secret": signed["secret"],
        "client_kwargs": {"endpoint_url": s3["endpoint"], "region_name": "us-east-1"},
    }
    _round_trip(url, options)
    with pytest.raises(StoreError, match=r"cannot access s3://.*/a\.nwb\.zarr"):  # the secret is what signs
        NWBZarrIO(url, mode="r", storage_options={**options, "secret": "wrong"})


def test_s3_round_trip_with_endpoint_url_at_the_top(s3, signed):
    options = {"key": signed["key"], "secret": signed["secret"], "endpoint_url": s3["endpoint"]}
    _round_trip(f"s3://{signed['bucket']}/b.nwb.zarr", options)


def test_s3_round_trip_with_an_aws_profile(s3, signed, tmp_path, monkeypatch):
    pytest.importorskip("boto3")
    (tmp_path / "credentials").write_text(
        f"[lab]\naws_access_key_id = {signed['key']}\naws_secret_access_key = {signed['secret']}\n"
    )
    (tmp_path / "config").write_text("[profile lab]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    _round_trip(f"s3://{signed['bucket']}/c.nwb.zarr", {"profile": "lab", "endpoint_url": s3["endpoint"]})


def test_s3_anonymous_read_with_anon(s3):
    url = public_file(s3)
    # moto cannot check unsigned requests against a policy (it fails on the missing signature), so
    # what is asserted is that the store sends none, and that the public file reads
    with NWBZarrIO(url, mode="r", storage_options={"anon": True, "endpoint_url": s3["endpoint"]}) as io:
        assert io.file.store.store.config["skip_signature"] == "true"
        assert np.array_equal(io.read().acquisition["ts"].data[:5], np.arange(5.0))


def test_s3_obstore_store_object(s3):
    bucket = new_bucket(s3)
    options = s3["options"]
    backend = obstore.store.S3Store(bucket, prefix="ready.nwb.zarr", **options)
    with NWBZarrIO(backend, mode="w") as io:
        io.write(small_nwbfile())
    with NWBZarrIO(f"s3://{bucket}/ready.nwb.zarr", mode="r", storage_options=options) as io:
        assert len(io.read().units) == 2


def test_open_store_takes_the_same_options_as_the_ios(s3, signed):
    url = f"s3://{signed['bucket']}/d.nwb.zarr"
    options = {"key": signed["key"], "secret": signed["secret"], "endpoint_url": s3["endpoint"]}
    _round_trip(url, options)
    handle = open_store(url, "r", options)
    try:
        assert handle.store.store.config["access_key_id"] == signed["key"]
    finally:
        handle.close()


def test_a_profile_gives_its_region_unless_region_is_given(tmp_path, monkeypatch):
    pytest.importorskip("boto3")
    (tmp_path / "credentials").write_text("[lab]\naws_access_key_id = AK\naws_secret_access_key = SK\n")
    (tmp_path / "config").write_text("[profile lab]\nregion = eu-west-3\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert obstore.store.from_url(S3, **_mapped("s3", {"profile": "lab"})).config["region"] == "eu-west-3"
    explicit = _mapped("s3", {"profile": "lab", "client_kwargs": {"region_name": "us-west-2"}})
    assert obstore.store.from_url(S3, **explicit).config["region"] == "us-west-2"
    assert _mapped("s3", {"profile": "lab"})["credential_provider"]()["access_key_id"] == "AK"
