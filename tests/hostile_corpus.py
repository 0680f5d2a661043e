"""Helpers of tests/backend/test_hostile.py: tiny base files, ways to damage them, and a bounded, guarded reader.

Every case file lives at ``<tmp>/here/f.zarr``; ``<tmp>`` is the sandbox: nothing may be written outside it
while a file is read. :func:`read_everything` opens a file, reads its builders and touches every byte of
data, under a hard time limit, a traced-memory limit, an address-space limit (so that a hostile file
cannot take the machine down) and an audit hook that refuses code execution, unpickling of globals,
network access and writes outside the sandbox.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import resource
import shutil
import signal
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from hdmf.build import Builder, DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder
from nwb_factories import small_nwbfile
from session_machinery import in_session_machinery
from writing import write_builder, write_nwb

from hdmf_zarr3 import HdmfZarrError, NWBZarrIO, ZarrIO

TIME_LIMIT = 20.0  # seconds per read
MEMORY_LIMIT = 256 * 2**20  # traced bytes per read
ADDRESS_MARGIN = 4 * 2**30  # address space a read may add (a safety net; tracemalloc is the measure)
TARGET = np.arange(4.0)  # /a/target of the base file
EXTERNAL = np.array([10.0, 20.0, 30.0])  # /t of the external target files
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


class HostileEffect(BaseException):
    """A read did something a hostile file must never cause (a BaseException: library code cannot swallow it)."""


# --- base files ------------------------------------------------------------------------------------------
def base_builder() -> GroupBuilder:
    target = DatasetBuilder("target", TARGET)
    a = GroupBuilder("a", datasets={"target": target})
    b = GroupBuilder("b")
    b.set_link(LinkBuilder(target, "lnk"))
    return GroupBuilder(
        "root",
        groups={"a": a, "b": b},
        attributes={"matrix": np.arange(4).reshape(2, 2), "plain": [1, 2]},
        datasets={
            "x": DatasetBuilder("x", np.arange(6, dtype="int32"), attributes={"ref": ReferenceBuilder(target)}),
            "s": DatasetBuilder("s", ["u", "v"], dtype="text"),
            "sc": DatasetBuilder("sc", 3.0),
            "refs": DatasetBuilder("refs", [ReferenceBuilder(target), ReferenceBuilder(a)], dtype="object"),
            "rows": DatasetBuilder(
                "rows",
                [(1, ReferenceBuilder(a))],
                dtype=[
                    {"name": "i", "dtype": "int32"},
                    {"name": "r", "dtype": {"target_type": "X", "reftype": "object"}},
                ],
            ),
        },
    )


#: Text a terminal obeys: erase the line, return to its start and say "valid", ring, reverse what follows, CSI.
TERMINAL_TEXT = "\x1b[2K\rvalid\x07\u202edilav\x9b31m\x1b]0;title\x07"


def write_hostile_text_file(path: Path, text: str = TERMINAL_TEXT, unknown_type: bool = False) -> Path:
    """A small NWB file whose names and attribute values hold ``text``: a TimeSeries named ``ts<text>`` (its
    description, unit and comments ``text`` too) and a trial column of that name whose values are ``text``;
    with ``unknown_type``, the TimeSeries' ``neurodata_type`` is ``T<text>`` (a problem ``validate`` reports
    naming it). Returns ``path``."""
    from pynwb import TimeSeries

    nwb = small_nwbfile()
    series = TimeSeries(name=f"ts{text}", data=np.arange(5.0), unit=text, rate=1.0, description=text, comments=text)
    nwb.add_acquisition(series)
    nwb.add_trial_column(name=f"c{text}", description=text, data=[text, text])  # (the file has two trials)
    write_nwb(path, nwb)
    if unknown_type:
        edit(path, f"/acquisition/ts{text}", lambda doc: doc["attributes"].update(neurodata_type=f"T{text}"))
    return path


def write_external_target(path: Path) -> None:
    write_builder(path, GroupBuilder("root", datasets={"t": DatasetBuilder("t", EXTERNAL)}))


def layouts_builder() -> GroupBuilder:
    """One array per read path: chunked (direct decoder), sharded, uncompressed, zstd, gzip, strings, 2-d,
    a scalar (read with the scalars) and a single chunk (read whole through zarr)."""
    from hdmf_zarr3 import ZarrDataIO

    def io(data, chunks, **kwargs):
        return ZarrDataIO(data, chunks=chunks, shards=kwargs.pop("shards", None), **kwargs)

    return GroupBuilder(
        "root",
        datasets={
            "blosc": DatasetBuilder("blosc", io(np.arange(12.0), (4,))),
            "sharded": DatasetBuilder("sharded", io(np.arange(16, dtype="int16"), (2,), shards=(8,))),
            "raw": DatasetBuilder("raw", io(np.arange(12, dtype="int32"), (4,), compressors=[])),
            "zstd": DatasetBuilder(
                "zstd",
                io(np.arange(12, dtype="int32"), (4,), compressors=[{"name": "zstd", "configuration": {"level": 1}}]),
            ),
            "gzip": DatasetBuilder(
                "gzip",
                io(np.arange(12, dtype="int32"), (4,), compressors=[{"name": "gzip", "configuration": {"level": 1}}]),
            ),
            "text": DatasetBuilder(
                "text", io(np.array(["a", "bb", "ccc", "d", "e"], dtype=object), (2,)), dtype="text"
            ),
            "grid": DatasetBuilder("grid", io(np.arange(24.0).reshape(4, 6), (2, 3))),
            # a scalar in a chunk, as written before format 1.1 (a fill value of one's own keeps the chunk)
            "scalar": DatasetBuilder("scalar", ZarrDataIO(np.array(2.5), fill_value=-1.0)),
            "single": DatasetBuilder("single", np.arange(5, dtype="int64")),
        },
    )


def write_layouts_nwb(path: Path) -> None:
    """A small NWB file with TimeSeries data chunked (read by the direct decoder) and sharded."""
    from pynwb import TimeSeries

    from hdmf_zarr3 import ZarrDataIO

    nwbfile = small_nwbfile(10)
    nwbfile.add_acquisition(
        TimeSeries(name="chunked", unit="m", rate=1.0, data=ZarrDataIO(np.arange(12.0), chunks=(4,), shards=None))
    )
    nwbfile.add_acquisition(
        TimeSeries(name="sharded", unit="m", rate=1.0, data=ZarrDataIO(np.arange(16.0), chunks=(2,), shards=(8,)))
    )
    write_nwb(path, nwbfile)


def write_ephys_nwb(path: Path) -> None:
    """A small NWB file whose ElectricalSeries selects electrodes by a DynamicTableRegion (which HDMF reads
    while it builds the containers), beside the units and trials tables."""
    from pynwb.ecephys import ElectricalSeries

    nwbfile = small_nwbfile(10)
    device = nwbfile.create_device("probe")
    group = nwbfile.create_electrode_group("shank", description="x", location="x", device=device)
    for _ in range(3):
        nwbfile.add_electrode(group=group, location="x")
    region = nwbfile.create_electrode_table_region([0, 2], "two of three")
    nwbfile.add_acquisition(ElectricalSeries(name="es", data=np.zeros((5, 2)), electrodes=region, rate=1.0))
    write_nwb(path, nwbfile)


#: The base files the cases start from (test_hostile.py: ``base`` and ``ephys``; test_hostile_chunks.py:
#: ``layouts``).
BASE_FILES = {
    "base.zarr": lambda path: write_builder(path, base_builder()),
    "base.nwb.zarr": lambda path: write_nwb(path, small_nwbfile(10)),
    "layouts.zarr": lambda path: write_builder(path, layouts_builder()),
    "layouts.nwb.zarr": write_layouts_nwb,
    "ephys.nwb.zarr": write_ephys_nwb,
}


def write_bases(top: Path) -> Path:
    """Write every base file into ``top`` (once per session: the ``hostile_bases`` fixture); return ``top``."""
    for name, write in BASE_FILES.items():
        write(top / name)
    return top


def fresh_case(base: Path, tmp_path: Path) -> Path:
    """A fresh copy of the base file ``base``, at ``<tmp>/here/f.zarr``, to be damaged by one case."""
    case = tmp_path / "here" / "f.zarr"
    shutil.copytree(base, case)
    return case


def zip_directory(
    directory: Path, target: Path, replace: dict[str, bytes | None] | None = None, method: int = 0
) -> None:
    """Pack ``directory`` into ``target`` (zip method ``method``), with members replaced (``None``: left out)."""
    import zipfile

    replace = replace or {}
    with zipfile.ZipFile(target, "w", compression=method) as archive:
        for file in sorted(p for p in directory.rglob("*") if p.is_file()):
            name = file.relative_to(directory).as_posix()
            data = replace.get(name, file.read_bytes())
            if data is not None:
                archive.writestr(name, data)


# --- damaging a file -------------------------------------------------------------------------------------
def _key(f: Path, node: str) -> Path:
    return f / "zarr.json" if node == "/" else f / node.strip("/") / "zarr.json"


def load(f: Path, node: str) -> dict[str, Any]:
    return json.loads(_key(f, node).read_text())


def dump(f: Path, node: str, doc: Any) -> None:
    _key(f, node).write_text(json.dumps(doc, allow_nan=True))  # allow_nan: bare NaN/Infinity on purpose


def deconsolidate(f: Path) -> None:
    """Drop the consolidated block, so the reader lists the store and reads every node's own zarr.json."""
    root = load(f, "/")
    root.pop("consolidated_metadata", None)
    dump(f, "/", root)


def edit(f: Path, node: str, change) -> None:
    """Apply ``change(doc)`` (in place) to the document of ``node``, as the reader will see it."""
    deconsolidate(f)
    doc = load(f, node)
    change(doc)
    dump(f, node, doc)


def edit_consolidated(f: Path, node: str, change) -> None:
    """Apply ``change(doc)`` to the consolidated copy of ``node`` only (its own zarr.json stays intact)."""
    root = load(f, "/")
    change(root["consolidated_metadata"]["metadata"][node.strip("/")])
    dump(f, "/", root)


def put_raw(f: Path, node: str, data: bytes) -> None:
    """Replace the zarr.json of ``node`` with raw bytes."""
    if node != "/":
        deconsolidate(f)
    _key(f, node).write_bytes(data)


def raw_attribute(f: Path, node: str, name: str, text: str) -> None:
    """Give ``node`` an attribute whose value is the raw JSON ``text`` (too deep for json.dumps)."""
    deconsolidate(f)
    doc = load(f, node)
    doc["attributes"][name] = "@@RAW@@"
    _key(f, node).write_text(json.dumps(doc).replace('"@@RAW@@"', text))


def set_elements(f: Path, node: str, values: list[str]) -> None:
    """Overwrite the elements of a ``string`` array (chunks only; its zarr.json is untouched)."""
    arr = zarr.open_array(f / node.strip("/"), mode="r+")
    arr[...] = np.array(values, dtype=object)


def text_fields(value: Any, here: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every place a JSON value holds text: ``(path, None)`` for a string at ``path``, ``(path, key)`` for the key
    ``key`` of the object at ``path`` (names: attributes, consolidated members, codec settings)."""
    if isinstance(value, str):
        return [(here, None)]
    found: list[tuple[tuple, Any]] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            found += [(here, key), *text_fields(sub, (*here, key))]
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found += text_fields(sub, (*here, i))
    return found


def replace_text(doc: Any, field: tuple[tuple, Any], text: str) -> None:
    """Put ``text`` at ``field`` (one of :func:`text_fields`) of ``doc``, in place; a renamed key keeps its place."""
    path, key = field
    parent = doc
    for step in path[:-1] if key is None else path:
        parent = parent[step]
    if key is None:
        parent[path[-1]] = text
    else:
        items = [(text if k == key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)


def record(source: str, path: str, **extra: Any) -> dict[str, Any]:
    return {**extra, "source": source, "path": path, "object_id": None, "source_object_id": None}


class Exploit:
    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def exploit_pickle(canary: Path) -> bytes:
    """Pickle bytes that, if ever unpickled, create ``canary``."""
    return pickle.dumps(Exploit(f"touch {canary}"), protocol=2)


# --- reading, bounded and guarded ------------------------------------------------------------------------
_GUARD: dict[str, Any] = {"sandbox": None, "effects": []}
_EXEC_EVENTS = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "subprocess.Popen",
    "pickle.find_class",
    "socket.connect",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.sendto",
    "ctypes.dlopen",
)
_PATH_EVENTS = (
    "os.mkdir",
    "os.remove",
    "os.rmdir",
    "os.rename",
    "os.symlink",
    "os.link",
    "os.truncate",
    "shutil.rmtree",
    "os.chmod",
    "os.utime",
)


def _outside(path: Any) -> bool:
    if isinstance(path, int):
        return False
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    real = os.path.realpath(text)
    if "__pycache__" in real.split(os.sep):  # lazy imports may cache bytecode
        return False
    return os.path.commonpath([real, _GUARD["sandbox"]]) != _GUARD["sandbox"]


def _hook(event: str, args: tuple) -> None:
    if _GUARD["sandbox"] is None or in_session_machinery():
        return
    bad = event.startswith(_EXEC_EVENTS)
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[0], args[1], args[2] or 0
        writes = (mode is not None and any(c in str(mode) for c in "wax+")) or bool(
            flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        )
        bad = writes and _outside(path)
    elif event in _PATH_EVENTS:
        bad = any(_outside(a) for a in args[:2] if isinstance(a, (str, bytes, os.PathLike)))
    if bad:
        _GUARD["effects"].append((event, repr(args)[:200]))
        raise HostileEffect(f"a hostile file caused {event}{repr(args)[:200]}")


_hook_installed = False


def refuse(what: str):
    def refused(*args: Any, **kwargs: Any) -> Any:
        _GUARD["effects"].append((what, repr(args)[:200]))
        raise HostileEffect(f"{what} was called while reading a hostile file")

    return refused


def _address_space() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _timeout(signum: int, frame: Any) -> None:
    raise HostileEffect(f"read took more than {TIME_LIMIT} s")


@contextlib.contextmanager
def bounded(sandbox: Path):
    """Time, memory and side-effect limits around one read (see the module docstring)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_hook)
        _hook_installed = True
    _GUARD.update(sandbox=os.path.realpath(sandbox), effects=[])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + ADDRESS_MARGIN if sys.platform == "linux" else resource.RLIM_INFINITY
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT + 5)
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] - base
        if not tracing:
            tracemalloc.stop()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        effects, _GUARD["sandbox"] = _GUARD["effects"], None
        assert not effects, f"side effects while reading: {effects}"
        assert elapsed < TIME_LIMIT, f"read took {elapsed:.1f} s"
        assert peak < MEMORY_LIMIT, f"read allocated {peak / 2**20:.0f} MiB"


def read_everything(path: Path, nwb: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Open, read every builder and every element of ``path``; values by path (``/x@attr`` for attributes,
    link paths for links; builders that references name are summarised as their data or ``("group", name)``).

    Then holds ``validate`` to what reading did (:func:`validate_agrees`)."""
    try:
        with bounded(Path(path).parent.parent):
            io = (NWBZarrIO if nwb else ZarrIO)(path, mode="r", **kwargs)
            try:
                if nwb:
                    io.read()
                root = io.read_builder()
                values = Walker().walk(root)
            finally:
                io.close()
    except HdmfZarrError as exc:
        if not kwargs:  # validate reads as the default reader does (no external_roots, ...)
            validate_agrees(path, error=exc)
        raise
    if not kwargs:
        validate_agrees(path, nodes=_builder_paths(root))
    return values


def _builder_paths(root: GroupBuilder) -> set[str]:
    out, stack = set(), [("/", root)]
    while stack:
        path, builder = stack.pop()
        out.add(path)
        if isinstance(builder, GroupBuilder):
            for name, sub in {**builder.groups, **builder.datasets}.items():
                stack.append((f"{path.rstrip('/')}/{name}", sub))
    return out


def validate_agrees(path: Path, error: Exception | None = None, nodes: set[str] | None = None) -> None:
    """validate <=> read, both ways (issue #27): a file ``read()`` refuses (``error``) is one validate reports
    a problem in; a file validate finds nothing in is read whole (``nodes``: every node the reader built,
    against every ``zarr.json`` outside the cached specifications)."""
    import warnings

    from hdmf_zarr3.inspection import validate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = validate(str(path)).problems
    if error is not None:
        assert found, f"read() raised {error!r} but validate reports nothing"
        return
    if found or nodes is None or not Path(path).is_dir():
        return
    on_disk = {
        "/" + p.parent.relative_to(path).as_posix() if p.parent != Path(path) else "/"
        for p in Path(path).rglob("zarr.json")
    }
    on_disk = {p.replace("/.", "/") for p in on_disk if not p.startswith("/specifications")}
    assert on_disk <= nodes, f"validate reports nothing, yet read() left out {sorted(on_disk - nodes)}"


def touch_values(data: Any) -> None:
    """Read a dataset every way a user does: whole, sliced, indexed, its length and by iteration (and
    ``compute()`` for dask arrays)."""
    if hasattr(data, "compute"):
        data.compute()
        data[1:3].compute()
        return
    if not (hasattr(data, "shape") and hasattr(data, "__getitem__")) or isinstance(data, (np.ndarray, str)):
        return
    if not data.shape:
        data[()]
        return
    data[:]
    data[1:3]
    data[0]
    data[-1]
    len(data)
    list(iter(data))


@contextlib.contextmanager
def _dask_tokens_without_unpickling():
    """Dask names its own classes by pickling and unpickling them, which the guard refuses (it cannot tell
    dask's own unpickling from a file's): name them by module and qualified name instead, meanwhile."""
    import dask.tokenize

    original = dask.tokenize._normalize_pickle
    dask.tokenize._normalize_pickle = lambda o: (
        type(o).__module__,
        type(o).__qualname__,
        getattr(o, "__qualname__", None),
        id(o),
    )
    try:
        yield
    finally:
        dask.tokenize._normalize_pickle = original


def read_values(path: Path, nwb: bool = False, dask: bool = False, zarrio: bool = False, **kwargs: Any) -> None:
    """Open ``path`` (``NWBZarrIO``, or with ``zarrio`` ``ZarrIO`` with PyNWB's manager, and ``read()``; or
    ``ZarrIO`` and its builders), then read the values of every dataset with :func:`touch_values`; with
    ``dask``, numeric datasets as dask arrays (every size)."""
    from pynwb import get_manager

    from hdmf_zarr3.integrations import dask_arrays

    if nwb and zarrio:
        kwargs["manager"] = get_manager()
    with _dask_tokens_without_unpickling(), bounded(Path(path).parent.parent):
        io = (NWBZarrIO if nwb and not zarrio else ZarrIO)(path, mode="r", **kwargs)
        try:
            if nwb:
                previous, dask_arrays.DASK_FROM_BYTES = dask_arrays.DASK_FROM_BYTES, 0
                try:
                    nwbfile = io.read(dask=dask)
                finally:
                    dask_arrays.DASK_FROM_BYTES = previous
                for obj in nwbfile.objects.values():  # fields (TimeSeries.data, ...) and Data.data (table columns)
                    for value in [*getattr(obj, "fields", {}).values(), getattr(obj, "data", None)]:
                        touch_values(value)
                return
            stack = [io.read_builder()]
            while stack:
                group = stack.pop()
                stack.extend(group.groups.values())
                for dataset in group.datasets.values():
                    data = dataset.data
                    if (
                        dask
                        and getattr(data, "storage", None) is not None
                        and data.storage.kind == "numeric"
                        and data.shape
                    ):
                        data = dask_arrays.as_dask(
                            io.store_handle.store, data.path, data.document, data.dtype, io.store_handle.life
                        )
                    touch_values(data)
        finally:
            io.close()


class Walker:
    def __init__(self):
        self.out: dict[str, Any] = {}
        self.memo: dict[int, Any] = {}

    def walk(self, root: GroupBuilder) -> dict[str, Any]:
        self.visit(root, "")
        return self.out

    def visit(self, builder: Builder, path: str) -> Any:
        if id(builder) in self.memo:
            return self.memo[id(builder)]
        self.memo[id(builder)] = ("group", builder.name)  # before the children: cycles end here
        for key, value in builder.attributes.items():
            self.out[f"{path or '/'}@{key}"] = self.summary(value)
        if isinstance(builder, DatasetBuilder):
            self.memo[id(builder)] = self.out[path] = self.summary(builder.data)
        else:
            for name, sub in {**builder.groups, **builder.datasets}.items():
                self.visit(sub, f"{path}/{name}")
            for name, link in builder.links.items():
                self.out[f"{path}/{name}"] = self.visit(link.builder, f"{path}/{name}")
        return self.memo[id(builder)]

    def summary(self, value: Any) -> Any:
        if isinstance(value, Builder):
            return self.visit(value, value.path if value.parent is not None else f"<{value.name}>")
        if isinstance(value, ReferenceBuilder):
            return self.summary(value.builder)
        if isinstance(value, (list, tuple)):
            return type(value)(self.summary(v) for v in value)
        if isinstance(value, np.void) and value.dtype.names:  # a compound row: its fields, references summarised
            return tuple(self.summary(v) for v in value.item())
        if isinstance(value, np.ndarray) and value.dtype.names:
            return self.summary(value[()]) if value.ndim == 0 else [self.summary(row) for row in value]
        if isinstance(value, np.ndarray):
            return [self.summary(v) for v in value.tolist()] if value.dtype == object else value
        if hasattr(value, "shape") and hasattr(value, "__getitem__") and not isinstance(value, (np.generic, str)):
            return self.summary(value[()])  # a lazy dataset: read all of it
        return value
