"""obstore's vocabulary for ``storage_options``: its kinds of store, configuration keys, client settings
and keyword arguments, the other spellings it takes, and fsspec's cache settings that mean nothing to it.

Data only (checked against obstore 0.12's stubs); :mod:`.options` maps options onto it.
"""

from __future__ import annotations

KINDS = ("s3", "gcs", "azure", "http")
STORE_NAMES = {"s3": "S3", "gcs": "Google Cloud Storage", "azure": "Azure Blob Storage", "http": "an HTTP server"}

#: obstore's configuration keys (S3Config, GCSConfig, AzureConfig of obstore 0.12's stubs).
OBSTORE_KEYS: dict[str, frozenset[str]] = {
    "s3": frozenset(
        {
            "access_key_id",
            "aws_endpoint_url_s3",
            "bucket",
            "checksum_algorithm",
            "conditional_put",
            "container_authorization_token_file",
            "container_credentials_full_uri",
            "container_credentials_relative_uri",
            "copy_if_not_exists",
            "default_region",
            "disable_bulk_delete",
            "disable_tagging",
            "endpoint",
            "imdsv1_fallback",
            "metadata_endpoint",
            "region",
            "request_payer",
            "role_arn",
            "role_session_name",
            "s3_express",
            "secret_access_key",
            "server_side_encryption",
            "session_token",
            "skip_signature",
            "sse_bucket_key_enabled",
            "sse_customer_key_base64",
            "sse_kms_key_id",
            "sts_endpoint",
            "unsigned_payload",
            "virtual_hosted_style_request",
            "web_identity_token_file",
        }
    ),
    "gcs": frozenset(
        {
            "application_credentials",
            "base_url",
            "bearer_token",
            "bucket",
            "service_account",
            "service_account_key",
            "skip_signature",
        }
    ),
    "azure": frozenset(
        {
            "account_key",
            "account_name",
            "authority_host",
            "client_id",
            "client_secret",
            "container_name",
            "credential_type",
            "disable_tagging",
            "encryption_key",
            "endpoint",
            "fabric_cluster_identifier",
            "fabric_session_token",
            "fabric_token_service_url",
            "fabric_workload_host",
            "federated_token_file",
            "msi_endpoint",
            "msi_resource_id",
            "object_id",
            "sas_key",
            "skip_signature",
            "tenant_id",
            "token",
            "use_azure_cli",
            "use_emulator",
            "use_fabric_endpoint",
        }
    ),
    "http": frozenset(),
}
#: obstore's HTTP client settings (ClientConfig), given as ``client_options``.
CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "default_content_type",
        "default_headers",
        "http1_only",
        "http2_keep_alive_interval",
        "http2_keep_alive_timeout",
        "http2_keep_alive_while_idle",
        "http2_only",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_ca_certificate",
        "proxy_excludes",
        "proxy_url",
        "randomize_addresses",
        "read_timeout",
        "root_certificate",
        "timeout",
        "user_agent",
    }
)
#: keyword arguments of ``obstore.store.from_url`` other than configuration keys (an HTTP server's: the first two).
ARGUMENTS = ("client_options", "retry_config", "credential_provider", "config")
HTTP_ARGUMENTS = ARGUMENTS[:2]
# other names obstore takes for its keys (besides upper case and the store's prefix: aws_, google_, azure_)
SYNONYMS = {
    "s3": {"bucket_name": "bucket", "endpoint_url": "endpoint", "token": "session_token"},
    "gcs": {"service_account_path": "service_account", "bucket_name": "bucket"},
    "azure": {
        "access_key": "account_key",
        "master_key": "account_key",
        "authority_id": "tenant_id",
        "sas_token": "sas_key",
        "bearer_token": "token",
        "identity_endpoint": "msi_endpoint",
    },
    "http": {},
}
# fsspec options spelled as obstore spells them (handled as obstore's)
FSSPEC_AS_OBSTORE = {
    "s3": {"endpoint_url", "token"},
    "gcs": set(),
    "http": set(),
    "azure": {"account_name", "account_key", "client_id", "client_secret", "tenant_id"},
}
PREFIXES = {"s3": ("aws_",), "gcs": ("google_",), "azure": ("azure_storage_", "azure_"), "http": ()}
#: fsspec settings of fsspec's own caches (of listings, file blocks, file-system instances) and of how its
#: HTTP file system lists pages: obstore keeps no such caches and we never list a web page, so they are
#: accepted and change nothing.
IGNORED = frozenset(
    {
        "skip_instance_cache",
        "use_listings_cache",
        "listings_expiry_time",
        "max_paths",
        "default_block_size",
        "default_fill_cache",
        "default_cache_type",
    }
)
HTTP_IGNORED = IGNORED | {"block_size", "cache_type", "cache_options", "simple_links", "same_scheme", "size_policy"}


def canonical(kind: str, name: str) -> str | None:
    """obstore's own name of the configuration key ``name`` (any spelling obstore takes), or ``None``."""
    keys, lowered = OBSTORE_KEYS[kind], name.lower()
    for candidate in (lowered, *(lowered[len(p) :] for p in PREFIXES[kind] if lowered.startswith(p))):
        if candidate in keys:
            return candidate
        if candidate in SYNONYMS[kind]:
            return SYNONYMS[kind][candidate]
    return None
