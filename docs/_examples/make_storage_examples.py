#!/usr/bin/env python
"""Write small files with hdmf_zarr3 and print the ``zarr.json`` examples quoted in ``docs/storage.md``.

Every example in the storage specification is produced here, from files our backend writes; no example in
the document is written by hand. Object ids are drawn from a seeded generator and all dates are fixed,
so the output is the same on every run (for the same hdmf, pynwb and zarr versions).

Usage::

    python docs/_examples/make_storage_examples.py                  # print every example
    python docs/_examples/make_storage_examples.py --only root-group array-objref
    python docs/_examples/make_storage_examples.py --check docs/storage.md   # exit 1 if the doc is stale
    python docs/_examples/make_storage_examples.py --update docs/storage.md  # rewrite the quoted blocks
    python docs/_examples/make_storage_examples.py --keep /tmp/examples      # keep the files written

In ``storage.md`` each generated block follows a marker line ``<!-- example: NAME -->``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import sys
import tempfile
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

WIDTH = 100
T0 = dt.datetime(2024, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


# --- deterministic object ids -------------------------------------------------------------------

def seed_object_ids(seed: int = 20240101) -> None:
    """Make HDMF's object ids reproducible (HDMF draws them from ``uuid4`` in ``hdmf.container``)."""
    import hdmf.container

    rng = random.Random(seed)
    hdmf.container.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)


# --- JSON formatting ----------------------------------------------------------------------------

def fmt(obj: Any, indent: int = 0, start: int = 0) -> str:
    """Strict JSON, indented, with every value that fits on one line kept on one line."""
    flat = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    if not isinstance(obj, (dict, list)) or not obj or start + len(flat) <= WIDTH:
        return flat
    pad = " " * (indent + 2)
    if isinstance(obj, dict):
        lines = []
        for key, value in obj.items():
            head = f"{pad}{json.dumps(key, ensure_ascii=False)}: "
            lines.append(head + fmt(value, indent + 2, len(head)))
        return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"
    lines = [pad + fmt(v, indent + 2, len(pad)) for v in obj]
    return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"


def load(path: str) -> dict[str, Any]:
    with open(os.path.join(path, "zarr.json"), encoding="utf-8") as f:
        return json.load(f)


def pick(doc: dict[str, Any], keys: list[str] | None = None, attrs: list[str] | None = None) -> dict[str, Any]:
    """A real document trimmed to ``keys`` (top level) and ``attrs`` (attribute names), order kept."""
    out = {k: v for k, v in doc.items() if keys is None or k in keys}
    if attrs is not None and "attributes" in out:
        out["attributes"] = {k: v for k, v in doc["attributes"].items() if k in attrs}
    return out


# --- the files ----------------------------------------------------------------------------------

class Files:
    """The example files, written once into ``root``."""

    def __init__(self, root: str):
        self.root = root
        self.raw = os.path.join(root, "raw.nwb.zarr")
        self.derived = os.path.join(root, "derived.nwb.zarr")
        self.builders = os.path.join(root, "builders.zarr")
        self.chunks = os.path.join(root, "chunks.zarr")
        self.write_raw()
        self.write_derived()
        self.write_builders()
        self.write_chunks()

    def node(self, file: str, path: str = "") -> str:
        return os.path.join(file, *[p for p in path.split("/") if p])

    def write_raw(self) -> None:
        """A small NWB file: extracellular ephys, epochs, two series sharing timestamps, an ROI."""
        from pynwb import NWBFile, TimeSeries
        from pynwb.ecephys import ElectricalSeries
        from pynwb.ophys import ImageSegmentation, OpticalChannel

        from hdmf_zarr3 import NWBZarrIO

        nwb = NWBFile(session_description="storage examples", identifier="raw", session_start_time=T0,
                      file_create_date=T0)
        probe = nwb.create_device(name="probe", description="a silicon probe")
        shank = nwb.create_electrode_group(name="shank0", description="first shank", location="CA1", device=probe)
        for _ in range(4):
            nwb.add_electrode(group=shank, location="CA1")
        region = nwb.create_electrode_table_region(region=[0, 1, 2], description="first three electrodes")
        es = ElectricalSeries(name="es", data=np.arange(30, dtype="int16").reshape(10, 3), electrodes=region,
                              rate=1000.0, starting_time=0.0)
        nwb.add_acquisition(es)
        nwb.add_epoch(start_time=0.0, stop_time=0.005, tags=["baseline"], timeseries=[es])
        ts_a = TimeSeries(name="ts_a", data=np.arange(5.0), unit="m", timestamps=np.arange(5.0) / 10)
        ts_b = TimeSeries(name="ts_b", data=np.arange(5.0) * 2, unit="m", timestamps=ts_a)
        nwb.add_acquisition(ts_a)
        nwb.add_acquisition(ts_b)
        channel = OpticalChannel(name="green", description="green channel", emission_lambda=520.0)
        plane = nwb.create_imaging_plane(name="plane", optical_channel=channel, description="plane", device=probe,
                                         excitation_lambda=600.0, imaging_rate=30.0, indicator="GCaMP6",
                                         location="V1")
        ophys = nwb.create_processing_module(name="ophys", description="optical physiology")
        segmentation = ImageSegmentation()
        ophys.add(segmentation)
        cells = segmentation.create_plane_segmentation(description="cells", imaging_plane=plane, name="cells")
        cells.add_roi(pixel_mask=[(0, 0, 1.0), (1, 0, 0.5)])
        with NWBZarrIO(self.raw, mode="w") as io:
            io.write(nwb)

    def write_derived(self) -> None:
        """A second NWB file next to the first whose series uses the first file's data (an external link)."""
        from pynwb import NWBFile, TimeSeries

        from hdmf_zarr3 import NWBZarrIO

        with NWBZarrIO(self.raw, mode="r") as src:
            raw = src.read()
            nwb = NWBFile(session_description="derived", identifier="derived", session_start_time=T0,
                          file_create_date=T0)
            nwb.add_acquisition(TimeSeries(name="ts_view", data=raw.acquisition["ts_a"].data, unit="m",
                                           rate=10.0))
            with NWBZarrIO(self.derived, mode="w") as io:
                io.write(nwb)

    def write_builders(self) -> None:
        """Builders written directly: attribute encodings and dtypes an NWB file does not show."""
        from hdmf.build import DatasetBuilder, GroupBuilder, ReferenceBuilder

        from hdmf_zarr3 import ZarrIO

        root = GroupBuilder("root", attributes={"namespace": "example", "neurodata_type": "Container",
                                                "object_id": str(uuid.UUID(int=1, version=4))})
        target = DatasetBuilder("target", data=np.arange(3, dtype="int32"),
                                attributes={"object_id": str(uuid.UUID(int=2, version=4))})
        root.set_dataset(target)
        group = GroupBuilder("attrs", attributes={
            "plain_text": "hello",
            "plain_int": 7,
            "plain_float": 0.25,
            "plain_bool": True,
            "plain_list": [1, 2, 3],
            "numpy_uint32": np.uint32(5),
            "numpy_floats": np.array([1.5, np.nan, np.inf, -np.inf]),
            "numpy_matrix": np.array([[1, 2], [3, 4]], dtype="int8"),
            "empty_2d": np.zeros((0, 3), dtype="float32"),
            "python_nan": float("nan"),
            "bytes_value": b"abc",
            "text_array": np.array(["a", "b"]),
            "a_date": T0,
        })
        root.set_group(group)
        group.set_attribute("one_ref", ReferenceBuilder(target))
        group.set_attribute("ref_list", [ReferenceBuilder(target), ReferenceBuilder(root)])
        data = GroupBuilder("data")
        root.set_group(data)
        data.set_dataset(DatasetBuilder("flags", data=np.array([True, False, True])))
        data.set_dataset(DatasetBuilder("empty", data=np.zeros((0, 3), dtype="float32")))
        data.set_dataset(DatasetBuilder("empty_text", data=[], dtype="text"))
        data.set_dataset(DatasetBuilder("when", data=[T0, T0 + dt.timedelta(seconds=1)], dtype="isodatetime"))
        data.set_dataset(DatasetBuilder("scalar_ref", data=ReferenceBuilder(target), dtype="object"))
        data.set_dataset(DatasetBuilder("refs", data=[ReferenceBuilder(target), None], dtype="object"))
        with ZarrIO(self.builders, mode="w") as io:
            io.write_builder(root)

    def write_chunks(self) -> None:
        """Arrays large enough to show the default chunk shapes (constant values: they compress to almost nothing)."""
        from hdmf.build import DatasetBuilder, GroupBuilder

        from hdmf_zarr3 import ZarrIO

        root = GroupBuilder("root")
        root.set_dataset(DatasetBuilder("tall", data=np.ones((1_000_000, 4), dtype="float32")))
        root.set_dataset(DatasetBuilder("wide", data=np.ones((3, 1_000_000), dtype="float64")))
        root.set_dataset(DatasetBuilder("labels", data=np.array(["x"] * 100_000, dtype=object), dtype="text"))
        group = root  # a 2-d array as deep as an LFP series: nested keys would be 8 levels deep
        for name in ("processing", "ecephys", "LFP", "lfp"):
            child = GroupBuilder(name)
            group.set_group(child)
            group = child
        group.set_dataset(DatasetBuilder("data", data=np.ones((10, 3), dtype="float32")))
        with ZarrIO(self.chunks, mode="w") as io:
            io.write_builder(root)


# --- examples -----------------------------------------------------------------------------------

EXAMPLES: dict[str, Callable[[Files], tuple[str, str]]] = {}


def example(name: str) -> Callable:
    def register(fn: Callable[[Files], tuple[str, str]]) -> Callable[[Files], tuple[str, str]]:
        EXAMPLES[name] = fn
        return fn

    return register


def as_json(obj: Any) -> tuple[str, str]:
    return "json", fmt(obj)


def read_elements(array_path: str, count: int | None = None) -> list[str]:
    """Elements of a string array, read with plain zarr-python (no hdmf_zarr3 involved)."""
    import zarr

    arr = zarr.open_array(array_path, mode="r")
    values = arr[()] if arr.ndim == 0 else arr[: count if count is not None else arr.shape[0]]
    return [str(v) for v in np.asarray(values).ravel().tolist()]


@example("versions")
def ex_versions(files: Files) -> tuple[str, str]:
    import hdmf
    import numcodecs
    import pynwb
    import zarr

    import hdmf_zarr3

    return "text", "\n".join(f"{m.__name__} {m.__version__}" for m in (hdmf_zarr3, hdmf, pynwb, zarr, numcodecs))


@example("layout")
def ex_layout(files: Files) -> tuple[str, str]:
    """Store keys of the raw NWB file below /acquisition/es and /general (the rest elided)."""
    keys = []
    for dirpath, _, names in os.walk(files.raw):
        for name in names:
            keys.append(os.path.relpath(os.path.join(dirpath, name), files.raw).replace(os.sep, "/"))
    shown = [k for k in sorted(keys) if k == "zarr.json" or k.startswith(("acquisition/es/", "session_start_time/"))]
    return "text", "\n".join(shown)


@example("root-group")
def ex_root(files: Files) -> tuple[str, str]:
    doc = load(files.raw)
    members = doc["consolidated_metadata"]["metadata"]
    shown = dict(list(members.items())[:1])
    shown[f"... {len(members) - 1} more nodes"] = "..."
    doc["consolidated_metadata"]["metadata"] = shown
    return as_json(doc)


@example("group")
def ex_group(files: Files) -> tuple[str, str]:
    return as_json(load(files.node(files.raw, "acquisition/es")))


@example("array-numeric")
def ex_numeric(files: Files) -> tuple[str, str]:
    return as_json(load(files.node(files.raw, "acquisition/es/data")))


@example("array-scalar")
def ex_scalar(files: Files) -> tuple[str, str]:
    return as_json(load(files.node(files.raw, "acquisition/es/starting_time")))


@example("array-empty")
def ex_empty(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.builders, "data/empty"))
    return as_json(pick(doc, ["shape", "data_type", "chunk_grid", "fill_value", "attributes"]))


@example("array-bool")
def ex_bool(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.builders, "data/flags"))
    return as_json(pick(doc, ["shape", "data_type", "fill_value", "codecs", "attributes"]))


@example("array-text")
def ex_text(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.raw, "general/extracellular_ephys/electrodes/location"))
    return as_json(pick(doc, ["shape", "data_type", "fill_value", "codecs", "attributes"]))


@example("array-ascii")
def ex_ascii(files: Files) -> tuple[str, str]:
    path = files.node(files.raw, "session_start_time")
    doc = pick(load(path), ["shape", "data_type", "attributes"])
    return "text", fmt(doc) + "\n\nvalue: " + json.dumps(read_elements(path)[0])


@example("array-isodatetime")
def ex_isodatetime(files: Files) -> tuple[str, str]:
    path = files.node(files.builders, "data/when")
    doc = pick(load(path), ["shape", "data_type", "attributes"])
    return "text", fmt(doc) + "\n\nvalues: " + json.dumps(read_elements(path))


@example("array-objref")
def ex_objref(files: Files) -> tuple[str, str]:
    path = files.node(files.raw, "general/extracellular_ephys/electrodes/group")
    doc = pick(load(path), ["shape", "data_type", "fill_value", "attributes"])
    return "text", fmt(doc) + "\n\nelement 0: " + read_elements(path, 1)[0]


@example("array-objref-more")
def ex_objref_more(files: Files) -> tuple[str, str]:
    lines = [f"/data/refs element {i}: {json.dumps(v) if v == '' else v}"
             for i, v in enumerate(read_elements(files.node(files.builders, "data/refs")))]
    path = files.node(files.builders, "data/scalar_ref")
    doc = load(path)
    lines.append(f"/data/scalar_ref shape {json.dumps(doc['shape'])}, data_type {json.dumps(doc['data_type'])}, "
                 f"zarr_dtype {json.dumps(doc['attributes']['zarr_dtype'])}, value: {read_elements(path)[0]}")
    return "text", "\n".join(lines)


@example("compound-struct")
def ex_struct(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.raw, "processing/ophys/ImageSegmentation/cells/pixel_mask"))
    return as_json(pick(doc, ["shape", "data_type", "fill_value", "codecs", "attributes"]))


@example("compound-rows")
def ex_rows(files: Files) -> tuple[str, str]:
    path = files.node(files.raw, "intervals/epochs/timeseries")
    doc = pick(load(path), ["shape", "data_type", "fill_value", "codecs", "attributes"])
    return "text", fmt(doc) + "\n\nrow 0: " + read_elements(path, 1)[0]


@example("attributes")
def ex_attributes(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.builders, "attrs"))
    doc["attributes"] = {k: v for k, v in doc["attributes"].items() if k not in ("one_ref", "ref_list")}
    return as_json(doc)


@example("attribute-reference")
def ex_attr_ref(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.raw, "acquisition/es/electrodes"))
    return as_json(pick(doc, ["shape", "data_type", "attributes"]))


@example("attribute-reference-list")
def ex_attr_refs(files: Files) -> tuple[str, str]:
    doc = load(files.node(files.builders, "attrs"))
    return as_json(pick(doc, ["attributes"], ["ref_list"]))


@example("link-soft")
def ex_link_soft(files: Files) -> tuple[str, str]:
    return as_json(load(files.node(files.raw, "general/extracellular_ephys/shank0")))


@example("link-dataset")
def ex_link_dataset(files: Files) -> tuple[str, str]:
    return as_json(load(files.node(files.raw, "acquisition/ts_b")))


@example("link-external")
def ex_link_external(files: Files) -> tuple[str, str]:
    group = files.node(files.derived, "acquisition/ts_view")
    children = sorted(n for n in os.listdir(group) if n != "zarr.json")
    return "text", fmt(load(group)) + "\n\nchild nodes of /acquisition/ts_view: " + json.dumps(children)


@example("spec-tree")
def ex_spec_tree(files: Files) -> tuple[str, str]:
    base = files.node(files.raw, "specifications")
    lines = []
    for dirpath, dirnames, _ in os.walk(base):
        dirnames.sort()
        rel = os.path.relpath(dirpath, files.raw).replace(os.sep, "/")
        doc = load(dirpath) if os.path.exists(os.path.join(dirpath, "zarr.json")) else None
        if doc is None:
            continue
        if doc["node_type"] == "array":
            dirnames.clear()  # the chunk key "c" of a 0-d array
            kind = f"0-d {doc['data_type']} array, zarr_dtype {doc['attributes']['zarr_dtype']}"
        else:
            kind = "group"
        lines.append(f"/{rel:<54} {kind}")
    return "text", "\n".join(lines)


@example("spec-namespace")
def ex_spec_namespace(files: Files) -> tuple[str, str]:
    path = files.node(files.raw, "specifications/hdmf-experimental")
    version = sorted(n for n in os.listdir(path) if n != "zarr.json")[0]
    array = os.path.join(path, version, "namespace")
    doc = json.loads(read_elements(array)[0])
    doc["namespaces"] = [pick(ns, ["doc", "schema", "name", "version"]) for ns in doc["namespaces"]]
    return "json", fmt(doc)


@example("spec-array")
def ex_spec_array(files: Files) -> tuple[str, str]:
    path = files.node(files.raw, "specifications/hdmf-common")
    version = sorted(n for n in os.listdir(path) if n != "zarr.json")[0]
    return as_json(load(os.path.join(path, version, "namespace")))


@example("chunks")
def ex_chunks(files: Files) -> tuple[str, str]:
    out = {}
    for name in ("tall", "wide", "labels"):
        doc = load(files.node(files.chunks, name))
        out[name] = {"shape": doc["shape"], "data_type": doc["data_type"], "chunk_grid": doc["chunk_grid"]}
    keys = []
    for name in ("tall", "wide", "processing/ecephys/LFP/lfp/data"):
        base = files.node(files.chunks, name)
        for dirpath, _, names in os.walk(base):
            keys += [os.path.relpath(os.path.join(dirpath, n), files.chunks).replace(os.sep, "/")
                     for n in names if n != "zarr.json"]
    return "text", fmt(out) + "\n\nchunk keys: " + " ".join(sorted(keys))


# --- errors -------------------------------------------------------------------------------------

def _edit(doc_path: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Change one node document by hand, dropping the root's consolidated metadata as §2 requires."""
    for path, edit in ((doc_path, change), (_root_of(doc_path), lambda d: d.pop("consolidated_metadata", None))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        edit(doc)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)


def _root_of(doc_path: str) -> str:
    """The root ``zarr.json`` of the store holding ``doc_path`` (the nearest ``*.zarr`` directory)."""
    path = os.path.dirname(doc_path)
    while not path.endswith(".zarr"):
        path = os.path.dirname(path)
    return os.path.join(path, "zarr.json")


def _read_error(path: str) -> str:
    from hdmf_zarr3 import ZarrIO

    try:
        with ZarrIO(path, mode="r") as io:
            root = io.read_builder()
            for ds in root["data"].datasets.values():
                if hasattr(ds.data, "shape") and ds.data.shape:
                    ds.data[:]
    except Exception as exc:  # noqa: BLE001 - the message is the example
        return f"{type(exc).__name__}: {exc}"
    return "no error"


@example("errors")
def ex_errors(files: Files) -> tuple[str, str]:
    """Damage copies of builders.zarr in one way each and show what the reader raises."""
    import zarr

    cases: list[tuple[str, Callable[[str], None]]] = [
        ("unknown zarr_dtype", lambda p: _edit(os.path.join(p, "data/flags/zarr.json"),
                                               lambda d: d["attributes"].update(zarr_dtype="complex128"))),
        ("zarr_dtype and data_type disagree", lambda p: _edit(os.path.join(p, "data/flags/zarr.json"),
                                                              lambda d: d["attributes"].update(zarr_dtype="int8"))),
        ("array without zarr_dtype", lambda p: _edit(os.path.join(p, "data/flags/zarr.json"),
                                                     lambda d: d["attributes"].pop("zarr_dtype"))),
        ("zarr_link not a list", lambda p: _edit(os.path.join(p, "data/zarr.json"),
                                                 lambda d: d["attributes"].update(zarr_link={"name": "x"}))),
        ("attribute object without envelope", lambda p: _edit(os.path.join(p, "attrs/zarr.json"),
                                                              lambda d: d["attributes"].update(bad={"value": 1}))),
        ("bad float token", lambda p: _edit(os.path.join(p, "attrs/zarr.json"), lambda d: d["attributes"].update(
            bad={"zarr_dtype": "float64", "value": "nan"}))),
        ("reference element not JSON", lambda p: zarr.open_array(os.path.join(p, "data/refs"), mode="r+")
         .__setitem__(0, "not json")),
        ("dangling reference", lambda p: _edit(os.path.join(p, "data/scalar_ref/zarr.json"), lambda d: d.update(
            fill_value='{"source":".","path":"/missing","object_id":null,"source_object_id":null}'))),
        ("Zarr v2 metadata in zarr.json", lambda p: _edit(os.path.join(p, "attrs/zarr.json"),
                                                          lambda d: d.update(zarr_format=2))),
        ("newer major format version", lambda p: _edit(os.path.join(p, "zarr.json"), lambda d: d["attributes"].update(
            hdmf_zarr3_format="3.0"))),
    ]
    lines = []
    for i, (what, damage) in enumerate(cases):
        copy = os.path.join(files.root, f"damaged-{i}.zarr")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(files.builders, copy)
        damage(copy)
        lines.append(f"# {what}\n{_read_error(copy)}")
    return "text", "\n".join(lines)


@example("error-reserved")
def ex_reserved(files: Files) -> tuple[str, str]:
    from hdmf.build import DatasetBuilder, GroupBuilder

    from hdmf_zarr3 import ZarrIO

    root = GroupBuilder("root")
    root.set_dataset(DatasetBuilder("d", data=[1, 2], attributes={"zarr_dtype": "int8"}))
    try:
        with ZarrIO(os.path.join(files.root, "reserved.zarr"), mode="w") as io:
            io.write_builder(root)
    except Exception as exc:  # noqa: BLE001 - the message is the example
        return "text", f"{type(exc).__name__}: {exc}"
    return "text", "no error"


# --- driver -------------------------------------------------------------------------------------

MARKER = re.compile(r"<!-- example: (?P<name>[\w-]+) -->\n```(?P<lang>\w*)\n(?P<body>.*?)\n```", re.S)


def render(files: Files, names: list[str]) -> dict[str, tuple[str, str]]:
    return {name: EXAMPLES[name](files) for name in names}


def block(name: str, lang: str, body: str) -> str:
    return f"<!-- example: {name} -->\n```{lang}\n{body}\n```"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(EXAMPLES),
                        help="examples to print (ignored by --check and --update)")
    parser.add_argument("--check", metavar="MD", help="compare the blocks quoted in MD with fresh output")
    parser.add_argument("--update", metavar="MD", help="rewrite the blocks quoted in MD with fresh output")
    parser.add_argument("--keep", metavar="DIR", help="write the example files into DIR and keep them")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")
    seed_object_ids()
    if args.keep and os.path.exists(args.keep) and os.listdir(args.keep):
        parser.error(f"--keep {args.keep}: the directory exists and is not empty")
    workdir = args.keep or tempfile.mkdtemp(prefix="hdmf_zarr3_examples_")
    os.makedirs(workdir, exist_ok=True)
    md = args.check or args.update
    try:
        files = Files(workdir)
        output = render(files, list(EXAMPLES) if md or not args.only else args.only)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    if md is None:
        for name, (lang, body) in output.items():
            print(block(name, lang, body), end="\n\n")
        return 0
    with open(md, encoding="utf-8") as f:
        text = f.read()
    quoted = {m["name"]: (m["lang"], m["body"]) for m in MARKER.finditer(text)}
    unknown = sorted(set(quoted) - set(output))
    if unknown:
        print(f"{md}: unknown examples {unknown}", file=sys.stderr)
        return 1
    if args.update:
        text = MARKER.sub(lambda m: block(m["name"], *output[m["name"]]), text)
        with open(md, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{md}: {len(quoted)} examples updated")
        return 0
    stale = [name for name, quote in quoted.items() if quote != output[name]]
    missing = [name for name in output if name not in quoted]
    for name in stale:
        print(f"{md}: example {name!r} differs from the generated output", file=sys.stderr)
    for name in missing:
        print(f"{md}: example {name!r} is not quoted", file=sys.stderr)
    return 1 if stale or missing else 0


if __name__ == "__main__":
    sys.exit(main())
