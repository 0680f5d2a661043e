"""Will DANDI take this NWB Zarr file? :func:`check_dandi` says what ``dandi validate`` and ``dandi upload``
(dandi-cli 0.81, default ``--validation require``) refuse, under dandi-cli's own rule ids, and what DANDI
requires of NWB content but does not check for Zarr assets.

The checks, in order:

1. the asset: DANDI takes a *directory* whose name ends in ``.zarr`` (``.ngff``); anything else is not a
   Zarr asset to dandi-cli (``hdmf_zarr3.not_a_zarr_asset``); a ``.zarr`` that is not ``.nwb.zarr`` is
   taken as plain Zarr, not NWB (a warning). Outside a Dandiset (no ``dandiset.yaml`` above it) ``dandi
   validate`` also reports ``DANDI.NO_DANDISET_FOUND``: a warning here, as it is about where the file is,
   not the file (``dandi download`` the Dandiset and move the file into it);
2. dandi-cli's Zarr validation (:mod:`.zarr_rules`): ``zarr.tensorstore_cannot_open`` for every array
   TensorStore cannot open (every string and compound array of an NWB file: dandi-cli issue #1918),
   ``dandi_zarr.tree_depth_exceeded``, ``zarr.invalid_zarr_json``, the 5 GiB limit of one upload;
3. NWB content (:mod:`.content`): PyNWB's validator, nwbinspector with DANDI's configuration (required
   subject metadata), and ``dandi organize``'s naming (a warning).
"""

from .checks import check_dandi
from .findings import DandiFinding, DandiReport

__all__ = ["DandiFinding", "DandiReport", "check_dandi"]
