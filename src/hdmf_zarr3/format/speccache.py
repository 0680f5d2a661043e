"""Layout of the cached specifications.

The root attribute ``.specloc`` holds the path of the specifications group (``specifications``).
Each namespace version is a group ``/specifications/<namespace>/<version>``; inside it, the namespace
document is the scalar text array ``namespace`` and every schema source file is a scalar text array
named after the file without its extension (``nwb.ecephys.yaml`` -> ``nwb.ecephys``). Each value is
the JSON text of that document.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

NAMESPACE_DOC = "namespace"
#: Version group names older writers used for namespaces without a version.
UNVERSIONED = ("unversioned", "None")


def version_group(specloc: str, namespace: str, version: str) -> str:
    return "/" + posixpath.join(specloc.strip("/"), namespace, str(version))


def source_name(source: str) -> str:
    """Array name of a schema source file."""
    return posixpath.splitext(source)[0]


def latest_version(versions: Iterable[str]) -> str:
    """The version a reader loads: the largest name, preferring real versions to unversioned ones."""
    names = sorted(versions)
    real = [v for v in names if v not in UNVERSIONED]
    return (real or names)[-1]
