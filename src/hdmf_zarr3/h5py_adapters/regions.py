"""HDF5 region references, read from h5py, as region records (see :mod:`.format.data.references`).

HDMF 6.2 reads a region reference as a plain object reference to the whole target dataset, so an
export from HDF5 would silently widen every region to its dataset. The writer asks this module for
the raw references instead and keeps the selection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..format.data import Reference

# (HDF5 file, target path, target object_id, source root object_id, region) -> Reference
Locate = Callable[[str, str, "str | None", "str | None", "dict | None"], Reference]


def _h5py() -> Any:
    import h5py

    return h5py


def raw_region_dataset(data: Any) -> Any:
    """The h5py dataset behind ``data`` if it holds region references, else ``None``."""
    h5py = _h5py()
    raw = getattr(data, "dataset", data)
    if isinstance(raw, h5py.Dataset) and h5py.check_dtype(ref=raw.dtype) is h5py.RegionReference:
        return raw
    return None


def selection(ref: Any, target: Any) -> dict[str, Any]:
    """The region record's selection for an h5py RegionReference into ``target``."""
    h5py = _h5py()
    space = h5py.h5r.get_region(ref, target.id)
    kind = space.get_select_type()
    if kind == h5py.h5s.SEL_ALL:
        return {"all": True}
    if kind == h5py.h5s.SEL_POINTS:
        return {"points": np.asarray(space.get_select_elem_pointlist()).tolist()}
    if kind == h5py.h5s.SEL_NONE:
        return {"points": []}
    if space.is_regular_hyperslab():
        slices = [_as_slice(*dim) for dim in zip(*space.get_regular_hyperslab())]
        if all(s is not None for s in slices):
            return {"slices": slices}
    blocks = np.asarray(space.get_select_hyper_blocklist())  # (n, 2, rank), inclusive corners
    return {"blocks": [[lo.tolist(), (hi + 1).tolist()] for lo, hi in blocks]}


def _as_slice(start: int, stride: int, count: int, block: int) -> list[int] | None:
    """One dimension of a regular hyperslab as ``[start, stop, step]``, if it is one."""
    start, stride, count, block = int(start), int(stride), int(count), int(block)
    if block == 1:
        return [start, start + (count - 1) * stride + 1, stride]
    if count == 1 or stride == block:
        return [start, start + count * block, 1]
    return None


def reference(ref: Any, h5file: Any, locate: Locate) -> Reference | None:
    """Region record for one raw RegionReference (``None`` for a null reference)."""
    if not ref:
        return None
    target = h5file[ref]
    root_oid = h5file.attrs.get("object_id")
    oid = target.attrs.get("object_id")
    return locate(h5file.filename, target.name, _str(oid), _str(root_oid), selection(ref, target))


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def encode_dataset(raw: Any, locate: Locate) -> np.ndarray:
    """Every element of an h5py dataset of region references, as JSON text (``""`` for null)."""
    from ..format.data import encode_element

    refs = raw[()]
    flat = [encode_element(reference(r, raw.file, locate)) for r in np.ravel(refs)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(np.shape(refs))


def raw_attribute(h5file: Any, path: str, key: str) -> Any:
    """The raw value of an attribute in an open HDF5 file (``None`` if absent)."""
    node = h5file[path] if path != "/" else h5file
    return node.attrs.get(key)


def is_region(value: Any) -> bool:
    return isinstance(value, _h5py().RegionReference)
