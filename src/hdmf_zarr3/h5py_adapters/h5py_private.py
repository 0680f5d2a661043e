"""h5py's private names this package needs, reached here and nowhere else.

:func:`dataset_filters` is every filter of an ``h5py.Dataset``'s pipeline with its parameters
(``Dataset._filters``): h5py's public properties name only the filters it knows (``compression``,
``shuffle``, ``fletcher32``, ``scaleoffset``), while a dataset's layout must also carry the plugin filters
(HDF5 filter ids) it holds. ``tests/project/test_library_privates.py`` checks it against the installed h5py.
"""

from __future__ import annotations

from typing import Any

__all__ = ["dataset_filters"]


def dataset_filters(dset: Any) -> dict[str, Any]:
    """``{filter name or id: its parameters}`` of ``dset``'s filter pipeline (``{}`` for none, or for an object
    that is not an ``h5py.Dataset``)."""
    return dict(getattr(dset, "_filters", None) or {})
