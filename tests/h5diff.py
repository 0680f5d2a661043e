"""Structural comparison of two HDF5 files with plain h5py (no HDMF, no PyNWB).

``diff_hdf5(a, b)`` returns one line per difference in *content*:

- the members of every group, each classified with ``getlink=True`` as a group, a dataset, a soft
  link (compared by its target path) or an external link (compared by file name and path); links
  are compared as links and never followed;
- datasets: data type, shape and values.  Data types are described by what they mean to HDF5:
  numeric type, string (variable or fixed length, ASCII or UTF-8 character set: h5py's ``bytes``
  versus ``str``), object or region reference, compound (field by field), enum, vlen, array.
  Values are compared after decoding strings (so a type change is reported once, as a type change,
  and values are still compared), with NaN equal to NaN, compound values field by field, object
  references by the path of their target (``f[ref].name``) and region references by target path and
  selection;
- attributes: names, data type, shape (a scalar differs from a 1-element array; an empty
  ``H5S_NULL`` attribute is ``null``) and value, compared like dataset values;
- the cached specifications: the group that the root attribute ``.specloc`` references (else
  ``/specifications``) is compared as a catalog ``{namespace: {version: {document: parsed JSON}}}``,
  not node by node.  ``.specloc`` itself is an ordinary reference attribute (compared by target path).

Normalizations (not reported by ``diff_hdf5``):

- storage layout: contiguous/chunked/compact storage, chunk shape, ``maxshape``, filters
  (compression, shuffle, checksums, scale-offset), fill value and byte order.  They change how
  values are stored, not which values are stored; ``diff_layout(a, b)`` reports them separately;
- how a cached specification document's JSON text is stored (string type, scalar or array), since
  the documents are compared as parsed JSON;
- the order of group members and attributes (HDF5 lists them by name unless creation order is
  tracked, and HDMF does not rely on it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import h5py
import numpy as np

MAX_SHOWN = 80  # characters of a value shown in a message

# --- data types --------------------------------------------------------------------------------


def describe_dtype(dt: np.dtype) -> str:
    """What an HDF5 data type means, independent of byte order (see ``diff_layout``)."""
    if dt.names:
        return "compound{" + ", ".join(f"{n}: {describe_dtype(dt.fields[n][0])}" for n in dt.names) + "}"
    ref = h5py.check_ref_dtype(dt)
    if ref is not None:
        return "region reference" if ref is h5py.RegionReference else "object reference"
    s = h5py.check_string_dtype(dt)
    if s is not None:
        length = "variable-length" if s.length is None else f"fixed-length({s.length})"
        return f"{length} {s.encoding} string (h5py {'str' if s.encoding == 'utf-8' else 'bytes'})"
    enum = h5py.check_enum_dtype(dt)
    if enum is not None:
        return f"enum {dt.newbyteorder('=').name} {sorted(enum.items())}"
    vlen = h5py.check_vlen_dtype(dt)
    if vlen is not None:
        return f"vlen sequence of {describe_dtype(np.dtype(vlen))}"
    if dt.subdtype is not None:
        return f"array{dt.subdtype[1]} of {describe_dtype(dt.subdtype[0])}"
    return dt.newbyteorder("=").name


def _describe_shape(shape: tuple[int, ...] | None) -> str:
    return "null" if shape is None else "scalar" if shape == () else str(tuple(shape))


# --- values: normalized to comparable arrays ---------------------------------------------------


def _region(ref: h5py.RegionReference, f: h5py.File) -> tuple:
    space = h5py.h5r.get_region(ref, f.id)
    kind = space.get_select_type()
    if kind == h5py.h5s.SEL_HYPERSLABS:
        selection = ("blocks", space.get_select_hyper_blocklist().tolist())
    elif kind == h5py.h5s.SEL_POINTS:
        selection = ("points", space.get_select_elem_pointlist().tolist())
    else:
        selection = {h5py.h5s.SEL_ALL: "all", h5py.h5s.SEL_NONE: "none"}.get(kind, kind)
    return ("region", f[ref].name, str(selection))


def _element(x, f: h5py.File):
    """One non-numeric element as a comparable Python value."""
    if isinstance(x, h5py.RegionReference):
        return _region(x, f) if x else ("region", None)
    if isinstance(x, h5py.Reference):
        return ("ref", f[x].name) if x else ("ref", None)
    if isinstance(x, bytes | np.bytes_):
        return bytes(x).decode("utf-8", "surrogateescape")
    if isinstance(x, np.void):
        return tuple(_element(v, f) for v in x.tolist())
    if isinstance(x, np.ndarray):  # an element of a vlen sequence
        return tuple(_element(v, f) for v in x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    return x


def normalize(value, f: h5py.File):
    """A dataset/attribute value as an ndarray (numeric kept numeric; others as comparable objects),
    or for a compound a dict of such arrays, one per field."""
    if isinstance(value, h5py.Empty):
        return np.empty((0,), dtype=object)
    arr = np.asarray(value)
    if arr.dtype.names:
        return {name: normalize(arr[name], f) for name in arr.dtype.names}
    if arr.dtype.kind in "biufc":
        return arr
    out = np.empty(arr.shape, dtype=object)
    for idx, x in np.ndenumerate(arr):
        out[idx] = _element(x, f)
    return out


def _same(x, y) -> bool:
    if isinstance(x, tuple) or isinstance(y, tuple):
        return isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if isinstance(x, str) != isinstance(y, str):
        return False  # text never equals a number (1 == True == 1.0 is fine: dtypes are compared apart)
    return bool(x == y)


def _unequal(a, b) -> np.ndarray | None:
    """Boolean mask of the elements that differ (same shapes), or None if the values cannot be compared."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or list(a) != list(b):
            return None
        masks = [_unequal(a[k], b[k]) for k in a]
        return None if any(m is None for m in masks) else np.logical_or.reduce(masks)
    if a.dtype.kind in "biufc" and b.dtype.kind in "biufc":
        ne = a != b
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            ne &= ~(np.isnan(a) & np.isnan(b))
        return np.asarray(ne)
    mask = np.zeros(a.shape, dtype=bool)
    for idx in np.ndindex(a.shape):
        mask[idx] = not _same(_item(a, idx), _item(b, idx))
    return mask


def _item(v, idx):
    if isinstance(v, dict):
        return tuple(_item(f, idx) for f in v.values())
    x = v[idx]
    return x.item() if isinstance(x, np.generic) else x


def _show(x) -> str:
    text = repr(x)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def compare_values(a, b, fa: h5py.File, fb: h5py.File) -> str | None:
    """None if equal, else a description of how they differ."""
    na, nb = normalize(a, fa), normalize(b, fb)
    shape_a = np.shape(next(iter(na.values())) if isinstance(na, dict) else na)
    shape_b = np.shape(next(iter(nb.values())) if isinstance(nb, dict) else nb)
    if shape_a != shape_b:
        return None  # shapes are reported separately
    mask = _unequal(na, nb)
    if mask is None:
        return "values cannot be compared (different compound fields)"
    if not mask.any():
        return None
    first = tuple(int(i) for i in np.argwhere(mask)[0])
    where = f"[{', '.join(map(str, first))}]" if first else ""
    return (
        f"values differ in {int(mask.sum())} of {mask.size} elements, first{where or ' (scalar)'}: "
        f"{_show(_item(na, first))} != {_show(_item(nb, first))}"
    )


# --- attributes --------------------------------------------------------------------------------


def _attr_shape(attrs: h5py.AttributeManager, name: str) -> tuple[int, ...] | None:
    return attrs.get_id(name).shape  # None for an H5S_NULL (empty) attribute


def _diff_attrs(path: str, oa, ob, out: list[str]) -> None:
    names_a, names_b = set(oa.attrs), set(ob.attrs)
    out += [f"{path}: attribute {n!r} only in a" for n in sorted(names_a - names_b)]
    out += [f"{path}: attribute {n!r} only in b" for n in sorted(names_b - names_a)]
    for name in sorted(names_a & names_b):
        where = f"{path}@{name}"
        da, db = describe_dtype(oa.attrs.get_id(name).dtype), describe_dtype(ob.attrs.get_id(name).dtype)
        if da != db:
            out.append(f"{where}: dtype {da} != {db}")
        sa, sb = _attr_shape(oa.attrs, name), _attr_shape(ob.attrs, name)
        if sa != sb:
            out.append(f"{where}: shape {_describe_shape(sa)} != {_describe_shape(sb)}")
        else:
            problem = compare_values(oa.attrs[name], ob.attrs[name], oa.file, ob.file)
            if problem:
                out.append(f"{where}: {problem}")


# --- nodes -------------------------------------------------------------------------------------


def _kind(group: h5py.Group, name: str):
    link = group.get(name, getlink=True)
    if isinstance(link, h5py.SoftLink):
        return ("soft link", link.path)
    if isinstance(link, h5py.ExternalLink):
        return ("external link", link.filename, link.path)
    return ("group",) if isinstance(group[name], h5py.Group) else ("dataset",)


def _show_kind(kind: tuple) -> str:
    return {"soft link": "soft link -> {1}", "external link": "external link -> {1}:{2}"}.get(kind[0], "{0}").format(
        *kind
    )


def _diff_dataset(path: str, a: h5py.Dataset, b: h5py.Dataset, out: list[str]) -> None:
    da, db = describe_dtype(a.dtype), describe_dtype(b.dtype)
    if da != db:
        out.append(f"{path}: dtype {da} != {db}")
    if a.shape != b.shape:
        out.append(f"{path}: shape {_describe_shape(a.shape)} != {_describe_shape(b.shape)}")
    elif a.shape is not None:
        problem = compare_values(a[()], b[()], a.file, b.file)
        if problem:
            out.append(f"{path}: {problem}")


def _walk(path: str, a: h5py.Group, b: h5py.Group, skip: tuple[str | None, str | None], out: list[str]) -> None:
    _diff_attrs(path, a, b, out)
    names_a = {n for n in a if not _is_skipped(a, n, _join(path, n), skip[0])}
    names_b = {n for n in b if not _is_skipped(b, n, _join(path, n), skip[1])}
    for n in sorted(names_a ^ names_b):
        side, g = ("a", a) if n in names_a else ("b", b)
        out.append(f"{_join(path, n)}: only in {side} ({_show_kind(_kind(g, n))})")
    for n in sorted(names_a & names_b):
        sub = _join(path, n)
        ka, kb = _kind(a, n), _kind(b, n)
        if ka != kb:
            out.append(f"{sub}: {_show_kind(ka)} != {_show_kind(kb)}")
        elif ka == ("group",):
            _walk(sub, a[n], b[n], skip, out)
        elif ka == ("dataset",):
            _diff_attrs(sub, a[n], b[n], out)
            _diff_dataset(sub, a[n], b[n], out)


def _is_skipped(group: h5py.Group, name: str, path: str, skip: str | None) -> bool:
    return path == skip and isinstance(group.get(name, getlink=True), h5py.HardLink)


def _join(path: str, name: str) -> str:
    return f"{path.rstrip('/')}/{name}"


# --- cached specifications ---------------------------------------------------------------------


def spec_location(f: h5py.File) -> str | None:
    """Path of the cached-specifications group: ``.specloc``'s target, else ``/specifications``."""
    loc = f.attrs.get(".specloc")
    if isinstance(loc, h5py.Reference) and loc:
        return f[loc].name
    return "/specifications" if "specifications" in f else None


def spec_catalog(f: h5py.File, loc: str | None) -> dict[str, dict[str, object]]:
    """``{"namespace/version": {document: parsed JSON}}`` of the cached specifications."""
    catalog: dict[str, dict[str, object]] = {}
    if loc is None:
        return catalog

    def visit(name: str, node) -> None:
        if isinstance(node, h5py.Dataset):
            text = normalize(node[()], f).reshape(-1)[0]
            version, _, doc = name.rpartition("/")
            try:
                catalog.setdefault(version, {})[doc] = json.loads(text)
            except (TypeError, ValueError):
                catalog.setdefault(version, {})[doc] = text

    f[loc].visititems(visit)
    return catalog


def _json_diff(a, b, where: str, out: list[str], limit: int = 5) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in b or k not in a:
                out.append(f"{where}.{k}: only in {'a' if k in a else 'b'}")
            else:
                _json_diff(a[k], b[k], f"{where}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (u, v) in enumerate(zip(a, b)):
            _json_diff(u, v, f"{where}[{i}]", out, limit)
    elif a != b:
        out.append(f"{where}: {_show(a)} != {_show(b)}")


def _diff_specs(fa: h5py.File, fb: h5py.File, locs: tuple, out: list[str]) -> None:
    ca, cb = spec_catalog(fa, locs[0]), spec_catalog(fb, locs[1])
    for side, only in (("a", sorted(set(ca) - set(cb))), ("b", sorted(set(cb) - set(ca)))):
        out += [
            f"cached specifications: namespace {ns} only in {side} ({len((ca if side == 'a' else cb)[ns])} documents)"
            for ns in only
        ]
    for ns in sorted(set(ca) & set(cb)):
        da, db = ca[ns], cb[ns]
        out += [f"cached specifications: {ns}/{d} only in a" for d in sorted(set(da) - set(db))]
        out += [f"cached specifications: {ns}/{d} only in b" for d in sorted(set(db) - set(da))]
        for d in sorted(set(da) & set(db)):
            found: list[str] = []
            _json_diff(da[d], db[d], "$", found)
            out += [f"cached specifications: {ns}/{d}: {line}" for line in found]


# --- entry points ------------------------------------------------------------------------------


def diff_hdf5(a_path: str | Path, b_path: str | Path, specs: bool = True) -> list[str]:
    """Every difference in content between two HDF5 files, one line each ("a" is the first file).

    ``specs=False`` leaves out the cached specifications and the root attribute ``.specloc``.
    """
    out: list[str] = []
    with h5py.File(a_path, "r") as fa, h5py.File(b_path, "r") as fb:
        locs = (spec_location(fa), spec_location(fb))
        _walk("/", fa, fb, locs, out)
        if specs:
            _diff_specs(fa, fb, locs, out)
        else:
            out[:] = [line for line in out if not line.startswith(("/: attribute '.specloc' ", "/@.specloc:"))]
    return out


def _layout(ds: h5py.Dataset) -> dict[str, object]:
    plist = ds.id.get_create_plist()
    filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
    orders = {t[1][0] for t in ds.dtype.descr if isinstance(t[1], str) and t[1][0] in "<>"}
    return {
        "storage": {h5py.h5d.COMPACT: "compact", h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.CHUNKED: "chunked"}.get(
            plist.get_layout(), "other"
        ),
        "chunks": ds.chunks,
        "maxshape": ds.maxshape,
        "filters": [(code, tuple(values), name.decode(errors="replace")) for code, _, values, name in filters],
        "fillvalue": repr(ds.fillvalue),
        "byte order": "".join(sorted(orders)) or "n/a",
    }


def diff_layout(a_path: str | Path, b_path: str | Path) -> list[str]:
    """Storage-layout differences of the datasets found (as datasets) at the same path in both files."""
    out: list[str] = []
    with h5py.File(a_path, "r") as fa, h5py.File(b_path, "r") as fb:
        paths: list[str] = []
        fa.visititems(lambda name, node: paths.append(name) if isinstance(node, h5py.Dataset) else None)
        for name in paths:
            other = fb.get(name)
            if not isinstance(other, h5py.Dataset):
                continue
            la, lb = _layout(fa[name]), _layout(other)
            out += [f"/{name}: {key} {la[key]} != {lb[key]}" for key in la if la[key] != lb[key]]
    return out
