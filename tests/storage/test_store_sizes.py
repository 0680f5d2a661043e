"""The bytes an array takes in storage are counted without reading them (``nbytes_stored()``, ``info_complete()``,
the viewer's details of an array): zarr's ``Store.getsize`` reads each object whole, so every store of ours
answers it from what the storage already knows (a file's size, a zip member's entry, an object's HEAD)."""

from __future__ import annotations

import zipfile

import pytest
from nwb_factories import small_nwbfile
from zarr.abc.store import Store

from hdmf_zarr3 import NWBZarrIO, ZarrDataIO
from hdmf_zarr3.storage.remote.remote_object_store import RemoteObjectStore
from hdmf_zarr3.storage.safety.guarded import GuardedLocalStore, GuardedZipStore
from hdmf_zarr3.storage.safety.living_store import LivingStore
from hdmf_zarr3.storage.virtual.read_store import VirtualReadStore
from hdmf_zarr3.storage.zip.overlay import ZipOverlayStore

#: Every zarr store class of ours (what a file is read through).
STORES = [GuardedLocalStore, GuardedZipStore, ZipOverlayStore, RemoteObjectStore, LivingStore, VirtualReadStore]


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.__name__)
def test_no_store_of_ours_counts_bytes_by_reading_them(store):
    """A store that left ``getsize`` to zarr's ``Store`` read a 1 GiB array whole to tell its size."""
    defining = next(c for c in store.__mro__ if "getsize" in vars(c))
    assert defining is not Store, f"{store.__name__}.getsize is zarr's default, which reads every object whole"


def test_every_entry_point_of_zarrs_store_is_forwarded_by_the_datasets_store():
    """A zarr ``Store`` method the wrapper does not define falls back to zarr's default (for the sizes: reading
    every object whole); a method zarr adds later must be forwarded too (or named here as lifecycle only)."""
    lifecycle = {"__init__", "__enter__", "__exit__", "__eq__", "_open", "open", "close", "_ensure_open"}
    lifecycle |= {"_check_writable", "with_read_only", "get_ranges_sync"}  # (the last calls get_ranges)
    entry_points = {name for name, value in vars(Store).items() if callable(value)} - lifecycle
    assert entry_points <= set(vars(LivingStore)), sorted(entry_points - set(vars(LivingStore)))


def _write(path):
    nwb = small_nwbfile()
    nwb.acquisition["ts"].set_data_io("data", ZarrDataIO, data_io_kwargs={"chunks": (100,), "shards": (400,)})
    with NWBZarrIO(path, mode="w") as io:
        io.write(nwb)


def _stored_on_disk(path) -> int:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return sum(i.file_size for i in archive.infolist() if i.filename.startswith("acquisition/ts/data/"))
    return sum(f.stat().st_size for f in (path / "acquisition" / "ts" / "data").rglob("*") if f.is_file())


@pytest.mark.parametrize(("suffix", "mode"), [(".nwb.zarr", "r"), (".nwb.zarr.zip", "r"), (".nwb.zarr.zip", "r+")])
def test_the_bytes_stored_are_counted_without_reading_a_chunk(tmp_path, monkeypatch, suffix, mode):
    path = tmp_path / f"f{suffix}"
    _write(path)
    reads = []
    for store in (GuardedLocalStore, GuardedZipStore):
        read = store._read if store is GuardedLocalStore else store._get
        name = "_read" if store is GuardedLocalStore else "_get"
        monkeypatch.setattr(
            store, name, lambda self, key, *a, _read=read, **k: reads.append(key) or _read(self, key, *a, **k)
        )
    with NWBZarrIO(path, mode=mode) as io:
        data = io.read().acquisition["ts"].data
        reads.clear()
        stored = data.nbytes_stored()
        assert "No. bytes stored" in str(data.info_complete())
        assert not [key for key in reads if "/c/" in key], reads
    assert stored == _stored_on_disk(path)
