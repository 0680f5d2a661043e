"""What a lazy dataset tells about its storage, as ``zarr.Array`` spells it.

Code written for hdmf-zarr reads a dataset's codecs and summary straight from the zarr array it hands
out (``data.compressors``, ``data.info``); our lazy datasets forward those read-only attributes to the
``zarr.Array`` behind them, opened on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


class ZarrArrayInfo:
    """Read-only storage attributes of ``self.dataset`` (a ``zarr.Array``), under zarr's names."""

    dataset: Any

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes-to-bytes codecs (compressors), as zarr's ``Array.compressors``."""
        return self.dataset.compressors

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array-to-array codecs, as zarr's ``Array.filters``."""
        return self.dataset.filters

    @property
    def serializer(self) -> Any:
        """The array-to-bytes codec, as zarr's ``Array.serializer``."""
        return self.dataset.serializer

    @property
    def fill_value(self) -> Any:
        """The value read where no chunk is stored."""
        return self.dataset.fill_value

    @property
    def store(self) -> Any:
        """The zarr Store the array lives in (the file's, not the lifetime check ``dataset`` reads through)."""
        from ...storage.safety import LivingStore

        store = self.dataset.store
        return store.wrapped if isinstance(store, LivingStore) else store

    @property
    def info(self) -> Any:
        """zarr's summary of the array (type, shape, chunks, codecs), from its metadata alone."""
        return self.dataset.info

    def info_complete(self) -> Any:
        """zarr's summary including the stored size (lists the array's chunks)."""
        return self.dataset.info_complete()

    def nbytes_stored(self) -> int:
        """Bytes the array's metadata and stored chunks take in the store (lists the array's chunks)."""
        return self.dataset.nbytes_stored()


class SameArrayEquality:
    """Two lazy datasets are equal when they are the same array of the same file (as h5py datasets of one
    file and node are), whichever io or link read them."""

    if TYPE_CHECKING:  # provided by the dataset class

        @property
        def io(self) -> Any: ...

        @property
        def path(self) -> str: ...

    def array_identity(self) -> tuple[Any, str]:
        """What tells this array apart: its file's resolved location (or its io) and its node path."""
        from ...storage.stores import locations

        source = getattr(self.io, "source", None)
        where = locations.resolved(source) if isinstance(source, str) else id(self.io)
        return where, self.path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SameArrayEquality):
            return NotImplemented
        return self.array_identity() == other.array_identity()

    def __hash__(self) -> int:
        return hash(self.array_identity())
