"""What DANDI requires of NWB content, which dandi-cli checks for NWB HDF5 assets but skips for Zarr.

For an ``.nwb`` file ``dandi validate`` (and ``dandi upload``) runs PyNWB's validator (``pynwb.GENERIC``),
nwbinspector with its ``dandi`` configuration at importance BEST_PRACTICE_VIOLATION and above (``NWBI.<check>``:
CRITICAL ones are errors, among them the required subject metadata: a Subject, its subject_id, species, sex,
and age or date_of_birth; BEST_PRACTICE_VIOLATION ones warnings), and the layout of the name
(``DANDI.NON_DANDI_FILENAME``, ``DANDI.NON_DANDI_FOLDERNAME``, ``DANDI.METADATA_MISMATCH_SUBJECT``:
``sub-<id>/sub-<id>_ses-<id>_<modality>.nwb``). A Zarr asset gets none of these from dandi-cli; here the
file is read with our reader and the same rules are applied. The name's layout is only a warning: dandi-cli
does not check it for Zarr assets, so it does not refuse one.

nwbinspector gives the location of an object only when one of its fields is an ``h5py.Dataset`` (or a
``zarr.Array`` when hdmf-zarr is installed); our lazy datasets are neither, and must not pretend to be (HDMF
calls h5py's API on whatever passes ``isinstance(x, h5py.Dataset)``). So each check is wrapped: a message
without a location gets the node path our reader built the object from, by HDF5's rule (a group's own
path; for a dataset's container, the group holding the dataset).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from typing import Any

from ..integrations import nwbinspector_locations
from .findings import ERROR, UPLOAD_ANYWAY, WARNING, DandiFinding

#: dandi-cli's ``organize.LABELREGEX`` and the organized name, for ``.nwb.zarr`` instead of ``.nwb``.
LABEL = r"[^_*\\/<>:|\"'?%@;.]+"
FILENAME = rf"sub-{LABEL}(_ses-{LABEL})?(_(tis|slice|cell|desc|probe|obj)-{LABEL})*(_[a-z]+(\+[a-z]+)*)?\.nwb\.zarr"
FOLDER = rf"sub-{LABEL}"
#: nwbinspector's importance -> level, as dandi-cli maps it (dandi.files.bases.NWBI_IMPORTANCE_TO_DANDI_SEVERITY)
LEVELS = {"ERROR": ERROR, "PYNWB_VALIDATION": ERROR, "CRITICAL": ERROR, "BEST_PRACTICE_VIOLATION": WARNING}


def content_findings(nwbfile: Any, io: Any) -> list[DandiFinding]:
    """PyNWB's validator and nwbinspector (DANDI configuration) on ``nwbfile``, read by ``io``."""
    import pynwb

    found = [
        DandiFinding(ERROR, "pynwb.GENERIC", _error_location(e), str(e), UPLOAD_ANYWAY) for e in pynwb.validate(io=io)
    ]
    if nwbfile.session_start_time is None:  # (PyNWB refuses such a file on reading; kept for the rule's sake)
        found.append(DandiFinding(ERROR, "hdmf_zarr3.session_start_time", "/", "session_start_time is missing"))
    try:
        import nwbinspector
    except ImportError:
        return found + [
            DandiFinding(
                WARNING,
                "hdmf_zarr3.nwbinspector_missing",
                "/",
                "nwbinspector is not installed, so DANDI's content requirements (subject metadata and best "
                "practices) were not checked: pip install nwbinspector",
            )
        ]
    return found + inspector_findings(nwbfile, io, nwbinspector)


def inspector_findings(nwbfile: Any, io: Any, nwbinspector: Any) -> list[DandiFinding]:
    """nwbinspector's messages as ``dandi validate`` takes them for an NWB HDF5 file, located by node path."""
    checks = [_located(check, io) for check in nwbinspector.available_checks]
    found = []
    for message in nwbinspector.inspect_nwbfile_object(
        nwbfile,
        checks=checks,
        config=nwbinspector.load_config("dandi"),
        importance_threshold=nwbinspector.Importance.BEST_PRACTICE_VIOLATION,
    ):
        level = LEVELS.get(message.importance.name)
        if level is None:
            continue
        found.append(
            DandiFinding(
                level,
                f"NWBI.{message.check_function_name}",
                message.location or "/",
                f"{message.object_type} {message.object_name!r}: {message.message}",
                "" if level == WARNING else "add what is missing to the file before upload",
            )
        )
    return found


def _located(check: Callable[..., Any], io: Any) -> Callable[..., Any]:
    """``check`` (an nwbinspector check), its messages without a location given the object's node path."""

    @functools.wraps(check)
    def located(neurodata_object: Any, *args: Any, **kwargs: Any) -> Any:
        output = check(neurodata_object, *args, **kwargs)
        if output is None:
            return None
        messages = output if isinstance(output, list) else [output]
        for message in messages:
            if message is not None and message.location is None:
                message.location = nwbinspector_locations.node_path(neurodata_object, io)
        return output

    return located


def _error_location(error: Any) -> str:
    location = getattr(error, "location", None)
    return location if isinstance(location, str) and location.startswith("/") else "/"


def layout_findings(name: str, relative: str | None) -> list[DandiFinding]:
    """``dandi organize``'s layout for an NWB file, as warnings (dandi-cli checks it for ``.nwb`` files only).

    ``relative`` is the file's path inside its Dandiset (None outside one: the parent folder is taken)."""
    path = relative if relative is not None else name
    found = []
    way = "dandi organize names and places NWB files so: sub-<id>/sub-<id>_ses-<id>_<modality>.nwb.zarr"
    basename, folder = posixpath.basename(path), posixpath.dirname(path)
    if not re.fullmatch(FILENAME, basename):
        found.append(DandiFinding(WARNING, "DANDI.NON_DANDI_FILENAME", "/", f"{basename}: not a DANDI file name", way))
    if relative is not None and not ("/" not in folder and re.fullmatch(FOLDER, folder)):
        found.append(
            DandiFinding(
                WARNING, "DANDI.NON_DANDI_FOLDERNAME", "/", f"{path}: not in a sub-<id> folder at the top", way
            )
        )
    subject = re.match(FOLDER, basename)
    if not found and relative is not None and subject is not None and subject[0] != folder:
        found.append(
            DandiFinding(
                WARNING, "DANDI.METADATA_MISMATCH_SUBJECT", "/", f"{path}: the name's subject is not its folder's", way
            )
        )
    return found
