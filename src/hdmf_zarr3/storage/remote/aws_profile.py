"""An AWS profile as obstore's credential provider: s3fs's ``profile`` option (:mod:`.options`), read with boto3
only when obstore first asks for credentials."""

from __future__ import annotations

from typing import Any


class AwsProfile:
    """Credentials (and region) of a named AWS profile, read with boto3 when obstore first asks for them:
    s3fs's ``profile``. obstore itself reads no profile."""

    def __init__(self, name: str):
        self.name = name
        self._provider: Any = None

    def _load(self) -> Any:
        if self._provider is None:
            import boto3
            from obstore.auth.boto3 import Boto3CredentialProvider

            self._provider = Boto3CredentialProvider(boto3.Session(profile_name=self.name))
        return self._provider

    @property
    def config(self) -> dict[str, Any]:
        """The profile's region, which obstore uses unless ``region`` is given."""
        return self._load().config

    def __call__(self) -> Any:
        return self._load()()
