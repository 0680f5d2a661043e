"""What ``check_dandi`` reports: findings under DANDI's own rule ids, and the report that holds them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ERROR = "error"  # DANDI refuses the upload (dandi validate: ERROR), or the content misses what DANDI requires
WARNING = "warning"  # DANDI lets it through, but something will not work as a user expects

#: dandi-cli's upload option that lets an asset with validation errors through (``dandi upload --help``).
UPLOAD_ANYWAY = "dandi upload --validation ignore (validates, then uploads anyway; --validation skip does not validate)"
#: The upstream issue: TensorStore, which dandi-cli opens every Zarr v3 array with, has no string type.
TENSORSTORE_ISSUE = "https://github.com/dandi/dandi-cli/issues/1918"


def lossless_route(name: str) -> str:
    """The lossless way onto DANDI for the NWB Zarr file ``name``: the same file as NWB HDF5, which DANDI
    validates and reads whole (its subject, species, approach and technique among them)."""
    hdf5 = name.removesuffix(".zarr") if name.endswith(".nwb.zarr") else f"{name}.nwb"
    return (
        f"hdmf-zarr3 convert {name} {hdf5}, then dandi upload {hdf5} instead (lossless: DANDI validates an NWB "
        "HDF5 file and extracts its subject, species, approach and technique)"
    )


@dataclass(frozen=True)
class DandiFinding:
    """One thing DANDI refuses (``level`` "error") or warns about in a file.

    Attributes
    ----------
    level : {"error", "warning"}
    rule : str
        dandi-cli's id for the rule (``zarr.tensorstore_cannot_open``, ``dandi_zarr.tree_depth_exceeded``,
        ``NWBI.check_subject_exists``...), or ``hdmf_zarr3.<name>`` for a rule dandi-cli applies without an
        id (an upload that fails) or does not apply to Zarr assets.
    path : str
        The node inside the file ("/" for the file itself).
    message : str
        What is wrong, in words.
    way_through : str
        How to get the file past the rule, when there is a way.
    """

    level: str
    rule: str
    path: str
    message: str
    way_through: str = ""

    def __str__(self) -> str:
        return f"{self.level}: {self.rule}: {self.path}: {self.message}"


@dataclass
class DandiReport:
    """Every finding of :func:`hdmf_zarr3.check_dandi` for one file (errors first)."""

    path: str
    findings: list[DandiFinding] = field(default_factory=list)

    @property
    def errors(self) -> list[DandiFinding]:
        return [f for f in self.findings if f.level == ERROR]

    @property
    def warnings(self) -> list[DandiFinding]:
        return [f for f in self.findings if f.level != ERROR]

    @property
    def ways_through(self) -> list[str]:
        """How to get past each error that has a way, as ``"rule: way"``, each once, in the errors' order."""
        return list(dict.fromkeys(f"{f.rule}: {f.way_through}" for f in self.errors if f.way_through))

    @property
    def refused(self) -> bool:
        """Whether DANDI refuses the file or its content misses what DANDI requires (any error)."""
        return bool(self.errors)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``hdmf-zarr3 check-dandi --json``)."""
        return {
            "path": self.path,
            "refused": self.refused,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [asdict(f) for f in self.findings],
        }
