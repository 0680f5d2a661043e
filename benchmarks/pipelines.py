"""Benchmark (f): the bulk array through zarr-python's codec pipelines beside our own codec path.

Bulk numeric arrays are written and read by ``hdmf_zarr3.storage.codecs.direct_write`` instead of zarr-python's
codec pipeline. This part keeps that choice justified by numbers: the ephys recording of part (a)
(int16, 384 channels) is written by ``NWBZarrIO`` with its defaults, and its array document (chunks,
shards, codecs) is then used to write and read the same values as a bare array through

- ours: the direct codec path on the bare array (``UnitEncoder`` / ``UnitDecoder`` on the io's pools),
- zarr-python's default ``BatchedCodecPipeline`` and its opt-in ``FusedCodecPipeline``,
- the ``zarrs`` pipeline (Rust; ``pip install zarrs``; "n/a" when it is not installed).

Every write is timed until every file is fsynced; reads start from a cold page cache unless ``--hot``.
Each path runs ``--rounds`` times, in a rotated order (whoever runs first pays for fresh memory), and
the median is reported, with the CPU time of this process (all its threads: a measure of the work
that the load of a shared machine does not inflate). Usage::

    python benchmarks/pipelines.py [--seconds 10] [--rounds 3] [--hot]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from _common import GB, Timer, evict_tree, fmt, fsync_tree, ratio, ratio_line, table, workdir
from _data import ephys, ephys_nwbfile

PIPELINES = {
    "zarr batched": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "zarr fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
    "zarrs": "zarrs.ZarrsCodecPipeline",
}
DATA_PATH = "acquisition/ephys/data"


class Clock(Timer):
    """:class:`Timer` that also measures the CPU seconds of this process (``.cpu``, every thread)."""

    @staticmethod
    def _cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def __enter__(self) -> Clock:
        self.cpu_start = self._cpu()
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.cpu = self._cpu() - self.cpu_start


def _ours(data: np.ndarray, doc: dict[str, Any], path: Path, evict: bool) -> dict[str, float]:
    from zarr.storage import LocalStore

    from hdmf_zarr3.storage.codecs.direct_read import UnitDecoder, read_key
    from hdmf_zarr3.storage.codecs.direct_write import UnitEncoder
    from hdmf_zarr3.storage.stores.nodes import put_documents
    from hdmf_zarr3.storage.stores.pools import WorkPools
    from hdmf_zarr3.storage.stores.zarr_adapter import sync

    store = LocalStore(path)
    with WorkPools() as pools:
        with Clock() as write:
            put_documents(store, {"/": {"zarr_format": 3, "node_type": "group", "attributes": {}}, "/a": doc})
            encoder = UnitEncoder.for_document(store, "/a", doc)
            assert encoder is not None, "the default document is one the direct path writes"
            sync(encoder.write_block((0,) * data.ndim, data, pools))
            fsync_tree(path)
        if evict:
            evict_tree(path)
        with Clock() as read:
            decoder = UnitDecoder.for_document(store, "/a", doc)
            back = read_key(decoder, (slice(None),) * data.ndim, data.shape, pools)
    assert back is not None and np.array_equal(back, data)
    return {"write": write.seconds, "read": read.seconds, "write cpu": write.cpu, "read cpu": read.cpu}


def _zarr(data: np.ndarray, doc: dict[str, Any], path: Path, pipeline: str, evict: bool) -> dict[str, float]:
    import zarr

    with zarr.config.set({"codec_pipeline.path": pipeline}):
        with Clock() as write:
            store = zarr.storage.LocalStore(path)
            root = zarr.open_group(store=store, mode="w")
            array = zarr.create_array(store, name="a", overwrite=True, **_creation(doc))
            array[...] = data
            fsync_tree(path)
        del root
        if evict:
            evict_tree(path)
        with Clock() as read:
            back = zarr.open_array(store=zarr.storage.LocalStore(path), path="a", mode="r")[...]
    assert np.array_equal(back, data)
    return {"write": write.seconds, "read": read.seconds, "write cpu": write.cpu, "read cpu": read.cpu}


def _creation(doc: dict[str, Any]) -> dict[str, Any]:
    """``zarr.create_array`` keywords that create the array ``doc`` describes (same grid, codecs, keys)."""
    from hdmf_zarr3.format.vocabulary.array_view import ArrayView

    view = ArrayView.from_document(doc)
    out: dict[str, Any] = {
        "shape": view.shape,
        "dtype": doc["data_type"],
        "fill_value": doc["fill_value"],
        "chunks": view.read_chunks,
        "serializer": view.serializer,
        "compressors": list(view.compressors),
        "filters": list(view.filters),
        "chunk_key_encoding": doc["chunk_key_encoding"],
    }
    if view.sharded:
        out["shards"] = view.chunk_grid
    return out


def run(seconds: float = 10.0, evict: bool = True, rounds: int = 3) -> dict[str, Any]:
    """Write the recording with ``NWBZarrIO``, then the bare array with each codec path, ``rounds`` times."""
    from hdmf_zarr3 import NWBZarrIO

    data = ephys(seconds)
    out: dict[str, Any] = {"seconds": seconds, "bytes": data.nbytes, "evict": evict, "rounds": rounds, "paths": {}}
    with workdir() as work:
        with Timer() as full:
            with NWBZarrIO(work / "full.nwb.zarr", mode="w") as io:
                io.write(ephys_nwbfile(data))
            fsync_tree(work / "full.nwb.zarr")
        out["full pipeline write"] = full.seconds
        doc = json.loads((work / "full.nwb.zarr" / DATA_PATH / "zarr.json").read_text())
        out["document"] = {k: doc[k] for k in ("chunk_grid", "codecs", "chunk_key_encoding")}
        names = ["ours"] + [n for n, p in PIPELINES.items() if importlib.util.find_spec(p.split(".")[0]) is not None]
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for turn in range(rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                path = work / f"{name.replace(' ', '_')}.zarr"
                if name == "ours":
                    samples[name].append(_ours(data, doc, path, evict))
                else:
                    samples[name].append(_zarr(data, doc, path, PIPELINES[name], evict))
                shutil.rmtree(path)
    for name in ["ours", *PIPELINES]:
        taken = samples.get(name, [])
        out["paths"][name] = {k: float(np.median([t[k] for t in taken])) for k in (taken[0] if taken else {})}
    return out


def report(r: dict[str, Any]) -> None:
    """Print the table and the ratios of one :func:`run`."""
    cache = "cold (page cache evicted before reading)" if r["evict"] else "hot"
    size = r["bytes"] / GB
    print(f"  {r['seconds']:g} s x 384 channels int16 ({size:.2f} GB), our default layout; reads {cache}")
    print(f"  layout: {json.dumps(r['document']['chunk_grid']['configuration'])}, {_inner(r['document'])}")
    print(f"  ours through NWBZarrIO (whole pipeline): write {r['full pipeline write']:.2f} s")
    print(f"  median of {r['rounds']} rounds; cpu = CPU seconds of the process over all its threads")
    rows = []
    for name, res in r["paths"].items():
        write, read = res.get("write"), res.get("read")
        rows.append(
            [
                name,
                fmt(write),
                fmt(None if not write else size / write),
                fmt(res.get("write cpu")),
                fmt(read),
                fmt(None if not read else size / read),
                fmt(res.get("read cpu")),
            ]
        )
    print(table(["codec path (bare array)", "write s", "GB/s", "cpu s", "read s", "GB/s", "cpu s"], rows))
    print("  ratios (time of the other / time of ours; >1 = ours faster):")
    ours = r["paths"]["ours"]
    for name in PIPELINES:
        other = r["paths"].get(name, {})
        for step in ("write", "read"):
            print(ratio_line(f"pipeline {step} {name}/ours", ratio(other.get(step), ours.get(step))))


def _inner(document: dict[str, Any]) -> str:
    codecs = document["codecs"]
    if codecs and codecs[0]["name"] == "sharding_indexed":
        return f"sharded, chunks {codecs[0]['configuration']['chunk_shape']}"
    return "not sharded"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="recording length")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each path (the median is reported)")
    parser.add_argument("--hot", action="store_true", help="do not evict files from the page cache before reads")
    args = parser.parse_args()
    report(run(args.seconds, not args.hot, args.rounds))


if __name__ == "__main__":
    main()
