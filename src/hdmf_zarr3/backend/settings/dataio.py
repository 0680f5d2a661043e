"""``ZarrDataIO``: per-dataset storage settings for the Zarr backend (the counterpart of H5DataIO)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hdmf.data_utils import DataIO

from ...errors import UnsupportedDataError
from .dataio_arguments import CodecLike, checked_settings, one_fill_value
from .layout_choice import POLICY, ZarrSettings


def _known_type(data: Any, dtype: Any, shape: Any) -> tuple[Any, tuple[int, ...]] | None:
    """The storage type and shape of ``data`` when they are known without reading it (arrays, or the
    ``dtype`` and ``shape`` of an empty dataset); ``None`` for lists and iterators (checked on write,
    when the spec's dtype is known)."""
    from hdmf.data_utils import AbstractDataChunkIterator

    from ...format.vocabulary import dtypes

    if isinstance(data, AbstractDataChunkIterator):
        return None
    if data is None:
        data_dtype, data_shape = dtype, shape
    else:
        data_dtype, data_shape = getattr(data, "dtype", None), getattr(data, "shape", None)
    try:
        if (
            data_dtype is None
            or data_shape is None
            or (data is not None and not isinstance(data, np.ndarray) and np.dtype(data_dtype).kind == "O")
        ):
            return None  # object data of a lazy source: its type is known only once read
        storage = getattr(data, "storage", None) or dtypes.for_hdmf_dtype(data_dtype, data)
        return storage, tuple(int(s) for s in data_shape)
    except (UnsupportedDataError, TypeError, ValueError):
        return None  # left to the writer, which knows the spec's dtype


class _DefaultShards(str):
    """The default of ``ZarrDataIO(shards=...)``: ``"policy"``, told apart from a ``"policy"`` the caller
    gave (which ``io_settings`` lists, as hdmf-zarr's does, while defaults are left out)."""


_DEFAULT_SHARDS = _DefaultShards(POLICY)


def _as_given(value: Any) -> Any:
    """A codec setting as the caller gave it (sequences as lists), for ``io_settings``."""
    return list(value) if isinstance(value, (list, tuple)) else value


def _given_settings(
    chunks: tuple[int, ...] | None,
    shards: Any,
    compressors: Any,
    filters: Any,
    serializer: Any,
    fill_value: Any,
    dimension_names: Any,
) -> dict[str, Any]:
    """``io_settings`` as hdmf-zarr 0.14 spells them: a key only for what was given, codecs as given,
    and ``compressors`` ``None`` for "no compressor" (``compressors=False`` or ``[]``)."""
    given: dict[str, Any] = {}
    if chunks is not None:
        given["chunks"] = chunks
    if shards is not _DEFAULT_SHARDS:
        given["shards"] = shards
    if compressors is False or (isinstance(compressors, (list, tuple)) and not compressors):
        given["compressors"] = None
    elif compressors is not None and compressors is not True:
        given["compressors"] = _as_given(compressors)
    for key, value in (
        ("filters", filters),
        ("serializer", serializer),
        ("fill_value", fill_value),
        ("dimension_names", dimension_names),
    ):
        if value is not None:
            given[key] = _as_given(value) if key == "filters" else value
    return given


def _is_zarr_array(data: Any) -> bool:
    from .hdmf_zarr_inputs import is_zarr_array

    return is_zarr_array(data)


class ZarrDataIO(DataIO):
    """Wrap data to choose how one dataset is stored in Zarr.

    Parameters
    ----------
    data : array-like, optional
        The data (or ``None`` with ``dtype`` and ``shape`` for an empty dataset). A dask array is
        written by Dask, one task per shard (wrap it here: HDMF's own type checks refuse dask arrays).
    chunks : tuple of int, optional
        Chunk shape (the unit of reading). Defaults to a layout of a few MB.
    shards : tuple of int, "policy", "auto" or None
        Shard shape (the unit of storage objects); each dimension a multiple of ``chunks`` (without
        ``chunks``, the inner chunks are the largest divisors of the shard shape no larger than the
        default chunks).
        ``"policy"`` (the default) shards large arrays as the layout policy does without a
        ``ZarrDataIO``; ``"auto"`` always shards, with the shard shape zarr's
        ``create_array(shards="auto")`` chooses (two chunks along each axis that holds more than eight);
        ``None`` never shards.
    compressors : codec, sequence of codecs or bool, optional
        Bytes-to-bytes compressors: zarr codec objects, their JSON forms or numcodecs codecs (mapped as
        :mod:`.hdmf_zarr_inputs` says). ``None`` or ``True``: the default compressor; ``False`` or ``[]``:
        none. (:attr:`io_settings` spells "none" ``compressors: None``, as hdmf-zarr does.)
    filters : codec or sequence of codecs, optional
        Array-to-array filters, in the same forms.
    serializer : codec, optional
        The array-to-bytes codec (``bytes`` by default; ``vlen-utf8`` for strings).
    fill_value, fillvalue : scalar, optional
        Value of chunks never written (``fillvalue`` is hdmf-zarr's spelling; give one, or both equal).
    dimension_names : sequence of str, optional
        Zarr v3 ``dimension_names`` (by default the spec's ``dims``). Kept unless a name has another
        length on another array of the group: that axis is then named ``<array>.<name>`` (the rule of
        docs/storage.md §3, "Dimension names", which keeps the group readable by xarray).
    link_data : bool
        If ``data`` is a dataset read from another Zarr file, or a ``zarr.Array`` in a Zarr file (a
        directory, zip or URL), link to it instead of copying. A ``zarr.Array`` in an in-memory store
        cannot be linked to: ``link_data=True`` then raises :class:`UnsupportedDataError`.
    compressor
        hdmf-zarr's retired keyword: refused with an :class:`UnsupportedDataError` (a ``TypeError``)
        that names ``compressors``.

    Raises
    ------
    UnsupportedDataError
        For settings zarr could not store or read back: wrong types, non-positive chunk sizes, shards
        that are not whole multiples of the chunks, unknown codecs or codec options. When the type and
        shape of ``data`` are known (arrays, or ``dtype`` and ``shape``), also for a rank that does not
        fit the data, a fill value the data type cannot hold, and codecs zarr refuses for it (the bytes
        serializer for strings, a transpose of another rank); otherwise (lists, iterators) those are
        refused when the file is written, before anything is stored.
    """

    def __init__(
        self,
        data: Any = None,
        chunks: Sequence[int] | None = None,
        shards: Sequence[int] | str | None = _DEFAULT_SHARDS,
        compressors: CodecLike | Sequence[CodecLike] | bool | None = None,
        filters: Sequence[CodecLike] | None = None,
        serializer: CodecLike | None = None,
        fill_value: Any = None,
        dimension_names: Sequence[str | None] | None = None,
        link_data: bool = False,
        dtype: Any = None,
        shape: tuple[int, ...] | None = None,
        fillvalue: Any = None,
        compressor: Any = None,
    ):
        from ...integrations import is_dask

        if compressor is not None:
            raise UnsupportedDataError(
                "ZarrDataIO: 'compressor' is not a keyword of hdmf_zarr3 (nor of hdmf-zarr "
                "0.14); pass compressors=<codec or list of codecs>"
            )
        fill_value = one_fill_value(fill_value, fillvalue)
        # HDMF's type checks know no dask arrays; set through the setter, they pass (and Dask writes them).
        deferred = data if is_dask(data) else None
        super().__init__(data=None if deferred is not None else data, dtype=dtype, shape=shape)
        if deferred is not None:
            self.data = deferred
        settings = checked_settings(chunks, shards, compressors, filters, serializer, fill_value, dimension_names)
        self.chunks, self.shards = settings.chunks, settings.shards
        self.compressors, self.filters, self.serializer = settings.compressors, settings.filters, settings.serializer
        self.fill_value, self.dimension_names = settings.fill_value, settings.dimension_names
        self._settings = settings
        self._given = _given_settings(
            self.chunks,
            shards if shards is _DEFAULT_SHARDS else self.shards,
            compressors,
            filters,
            serializer,
            self.fill_value,
            self.dimension_names,
        )
        if not isinstance(link_data, bool):
            raise UnsupportedDataError(f"link_data must be True or False, got {link_data!r}")
        self.link_data = link_data
        if link_data:  # a link to a zarr array is made on write: check now that it can be
            from .hdmf_zarr_inputs import zarr_array_location

            if _is_zarr_array(self.data):
                zarr_array_location(self.data)
        known = _known_type(self.data, dtype, shape)
        if known is not None:  # the data's type is known: every setting is checked now (and not again on write)
            storage, data_shape = known
            settings.layout(None, storage, data_shape)

    @property
    def io_settings(self) -> dict[str, Any]:
        """The settings given, as hdmf-zarr 0.14 spells them (a copy).

        Only what was given has a key (``compressors=True``/``None`` and the default ``shards`` have
        none); codecs are as given (a sequence as a list); ``compressors`` is ``None`` when compression
        was turned off (``compressors=False`` or ``[]``). The writer reads :attr:`write_settings`.
        """
        return dict(self._given)

    @property
    def write_settings(self) -> ZarrSettings:
        """The settings as the writer reads them: codecs in their checked JSON forms, ``compressors``
        ``[]`` for none and ``None`` for the default, ``shards`` ``"policy"`` by default. The same object
        while the attributes are unchanged, so a dataset's layout is checked once
        (:meth:`~.layout_choice.ZarrSettings.layout`)."""
        current = ZarrSettings(
            self.chunks,
            self.shards,
            self.compressors,
            self.filters,
            self.serializer,
            self.fill_value,
            self.dimension_names,
        )
        if current != self._settings:  # (an attribute set since: its layouts are laid out anew)
            self._settings = current
        return self._settings

    def __iter__(self) -> Any:
        # HDMF iterates the data to find its element type; a zarr.Array has no __iter__ (rows are read by index)
        if _is_zarr_array(self.data):
            return (self.data[i] for i in range(self.data.shape[0] if self.data.shape else 0))
        return super().__iter__()

    @staticmethod
    def is_h5py_dataset(obj: Any) -> bool:
        """True for an ``h5py.Dataset`` (h5py is not imported)."""
        from .hdmf_zarr_inputs import is_h5py_dataset

        return is_h5py_dataset(obj)

    @staticmethod
    def hdf5_to_zarr_filters(h5dataset: Any) -> list[Any]:
        """The zarr v3 codec objects that compress as ``h5dataset``'s HDF5 filters do.

        The mapping is the one used on export from HDF5 (:mod:`.format.layout.hdf5_filters`); filters it cannot
        carry over are left out with a :class:`LayoutWarning`.
        """
        from .hdmf_zarr_inputs import hdf5_codecs

        return hdf5_codecs(h5dataset)

    @staticmethod
    def from_h5py_dataset(h5dataset: Any, **kwargs: Any) -> ZarrDataIO:
        """A ``ZarrDataIO`` copying ``h5dataset`` with its chunks, fill value and compression.

        Keyword arguments are passed on to ``ZarrDataIO``; ``chunks``, ``fill_value``/``fillvalue``,
        ``compressors`` and ``filters`` given there replace what the HDF5 dataset says.
        """
        from .hdmf_zarr_inputs import h5py_fill_value, hdf5_codecs, is_h5py_dataset

        if not is_h5py_dataset(h5dataset):
            raise UnsupportedDataError(f"from_h5py_dataset: expected an h5py.Dataset, got {type(h5dataset).__name__}")
        if "fill_value" not in kwargs and "fillvalue" not in kwargs:
            kwargs["fill_value"] = h5py_fill_value(h5dataset)
        kwargs.setdefault("chunks", h5dataset.chunks)
        if "compressors" not in kwargs:
            kwargs["compressors"] = hdf5_codecs(h5dataset) or None
        return ZarrDataIO(h5dataset, **kwargs)

    def get_io_params(self) -> dict[str, Any]:
        """Keyword arguments that recreate these settings (HDMF re-wraps data with them).

        They are constructor arguments, so "no compressor" is ``compressors=False`` (``None`` there
        means the default compressor).
        """
        settings = self.write_settings
        params: dict[str, Any] = {"shards": settings.shards}
        for key in ("chunks", "compressors", "filters", "serializer", "fill_value", "dimension_names"):
            value = getattr(settings, key)
            if value is not None:
                params[key] = value
        if "shards" not in self._given:
            del params["shards"]
        if params.get("compressors") == []:
            params["compressors"] = False
        return params | {"link_data": self.link_data}
