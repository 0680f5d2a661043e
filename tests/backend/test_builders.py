"""Every construct of the format round-trips at the builder level (no PyNWB involved)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from hdmf.build import DatasetBuilder, GroupBuilder, LinkBuilder, ReferenceBuilder

from hdmf_zarr3 import CorruptStoreError, ReservedNameError, ZarrIO, validate

NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "bool"]


def write(path, root):
    with ZarrIO(path, mode="w") as io:
        io.write_builder(root)


def read(path):
    io = ZarrIO(path, mode="r")
    return io, io.read_builder()


def materialize(data):
    if hasattr(data, "dataset") or hasattr(data, "storage"):
        return data[()] if data.shape == () else data[:]
    return data


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numeric_datasets_roundtrip(tmp_path, dtype):
    rng = np.random.default_rng(0)
    arr = (rng.integers(0, 100, (7, 3)) > 50) if dtype == "bool" else rng.integers(0, 100, (7, 3)).astype(dtype)
    root = GroupBuilder(
        "root",
        datasets={
            "arr": DatasetBuilder("arr", arr, dtype=dtype),
            "scalar": DatasetBuilder("scalar", arr.flat[0], dtype=dtype),
            "empty": DatasetBuilder("empty", np.zeros((0,), dtype=dtype), dtype=dtype),
        },
    )
    write(tmp_path / "f.zarr", root)
    io, back = read(tmp_path / "f.zarr")
    got = back.datasets["arr"].data[:]
    assert got.dtype == np.dtype(dtype) and np.array_equal(got, arr)
    scalar = back.datasets["scalar"].data
    assert isinstance(scalar, np.generic) and scalar.dtype == np.dtype(dtype) and scalar == arr.flat[0]
    empty = back.datasets["empty"].data
    assert empty.shape == (0,) and empty[:].dtype == np.dtype(dtype)
    for name in ("arr", "scalar", "empty"):
        assert back.datasets[name].attributes == {}
    # the dtype is recorded exactly, and the array opens with plain zarr-python
    z = zarr.open_array(tmp_path / "f.zarr" / "arr", mode="r")
    assert z.attrs["zarr_dtype"] == dtype and np.array_equal(z[:], arr)
    io.close()


@pytest.mark.parametrize(
    "dtype,values",
    [
        ("text", ["a", "ünïcödé", "", "x" * 1000]),
        ("ascii", [b"abc", b"", b"plain"]),
        ("isodatetime", ["2020-01-01T00:00:00+00:00", "2021-06-01T12:30:00.123000-04:00"]),
    ],
)
def test_string_datasets_roundtrip(tmp_path, dtype, values):
    root = GroupBuilder(
        "root",
        datasets={
            "s": DatasetBuilder("s", values, dtype=dtype),
            "scalar": DatasetBuilder("scalar", values[0], dtype=dtype),
            "empty": DatasetBuilder("empty", [], dtype=dtype),
            "grid": DatasetBuilder("grid", [values[:2], values[:2]], dtype=dtype),
        },
    )
    write(tmp_path / "f.zarr", root)
    io, back = read(tmp_path / "f.zarr")
    expect = [v.decode() if isinstance(v, bytes) else v for v in values]
    got = back.datasets["s"].data
    assert len(got) == len(values) and list(got[:]) == expect
    assert got[1] == expect[1] and isinstance(got[1], str)
    assert back.datasets["scalar"].data == expect[0]
    assert back.datasets["empty"].data.shape == (0,)
    assert back.datasets["grid"].data[:].tolist() == [expect[:2], expect[:2]]
    z = zarr.open_array(tmp_path / "f.zarr" / "s", mode="r")
    assert z.attrs["zarr_dtype"] == dtype
    assert str(z.metadata.data_type.to_json(zarr_format=3)) == "string"
    assert list(z[:]) == expect
    io.close()


def test_attributes_keep_their_types(tmp_path):
    attrs = {
        "text": "hello",
        "py_int": 3,
        "py_float": 1.5,
        "py_bool": True,
        "u32": np.uint32(7),
        "i8": np.int8(-3),
        "f32": np.float32(0.25),
        "npbool": np.bool_(False),
        "nan": np.float64("nan"),
        "inf": float("inf"),
        "f_arr": np.array([1.0, np.nan, -np.inf], dtype="float32"),
        "u16_2d": np.arange(6, dtype="uint16").reshape(2, 3),
        "str_list": ["a", "b"],
        "str_arr": np.array(["x", "yy"]),
        "int_list": [1, 2, 3],
        "empty_list": [],
        "empty_f_arr": np.zeros((0, 3), dtype="float32"),
        "bytes": b"abc",
    }
    root = GroupBuilder("root", attributes=attrs, datasets={"d": DatasetBuilder("d", [1, 2], attributes=attrs)})
    write(tmp_path / "f.zarr", root)
    io, back = read(tmp_path / "f.zarr")
    for got in (back.attributes, back.datasets["d"].attributes):
        assert got["text"] == "hello" and got["py_int"] == 3 and got["py_float"] == 1.5 and got["py_bool"] is True
        for key in ("u32", "i8", "f32", "npbool"):
            assert type(got[key]) is type(attrs[key]) and got[key] == attrs[key], key
        assert np.isnan(got["nan"]) and got["inf"] == float("inf")
        assert got["f_arr"].dtype == np.float32 and np.array_equal(got["f_arr"], attrs["f_arr"], equal_nan=True)
        assert got["u16_2d"].dtype == np.uint16 and np.array_equal(got["u16_2d"], attrs["u16_2d"])
        assert list(got["str_list"]) == ["a", "b"] and list(got["str_arr"]) == ["x", "yy"]
        assert list(got["int_list"]) == [1, 2, 3] and list(got["empty_list"]) == []
        assert got["empty_f_arr"].shape == (0, 3) and got["empty_f_arr"].dtype == np.float32
        assert got["bytes"] == "abc"
    # every document is strict JSON (no NaN tokens)
    raw = (tmp_path / "f.zarr" / "zarr.json").read_text()
    json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))
    io.close()


def test_reserved_attribute_names_are_refused(tmp_path):
    root = GroupBuilder("root", attributes={"zarr_dtype": "x"})
    with pytest.raises(ReservedNameError, match="zarr_dtype"):
        write(tmp_path / "f.zarr", root)


def _linked_tree(root_name="root"):
    data = DatasetBuilder("data", np.arange(5), attributes={"object_id": "oid-data"})
    target = GroupBuilder("target", datasets={"data": data}, attributes={"object_id": "oid-target"})
    root = GroupBuilder(root_name, groups={"target": target}, attributes={"object_id": "oid-root"})
    holder = GroupBuilder("holder")
    root.set_group(holder)
    holder.set_link(LinkBuilder(target, name="to_group"))
    holder.set_link(LinkBuilder(data, name="to_data"))
    holder.set_attribute("ref_attr", ReferenceBuilder(target))
    holder.set_attribute("ref_list", [ReferenceBuilder(target), ReferenceBuilder(data)])
    holder.set_dataset(DatasetBuilder("refs", [ReferenceBuilder(target), ReferenceBuilder(data)], dtype="object"))
    holder.set_dataset(DatasetBuilder("ref_scalar", ReferenceBuilder(data), dtype="object"))
    return root


@pytest.mark.parametrize("root_name", ["root", "some_other_name"])
def test_links_and_references_resolve_by_path(tmp_path, root_name):
    write(tmp_path / "f.zarr", _linked_tree(root_name))
    io, back = read(tmp_path / "f.zarr")
    holder, target = back.groups["holder"], back.groups["target"]
    data = target.datasets["data"]
    assert holder.links["to_group"].builder is target
    assert holder.links["to_data"].builder is data
    assert holder.attributes["ref_attr"] is target
    assert holder.attributes["ref_list"] == [target, data]
    refs = holder.datasets["refs"].data
    assert refs[0] is target and refs[1] is data and list(refs) == [target, data]
    assert isinstance(holder.datasets["ref_scalar"].data, ReferenceBuilder)
    assert holder.datasets["ref_scalar"].data.builder is data
    # the stored records name the target by path and object id; no pickle anywhere
    links = zarr.open_group(tmp_path / "f.zarr" / "holder", mode="r").attrs["zarr_link"]
    assert {(lk["name"], lk["source"], lk["path"], lk["object_id"]) for lk in links} == {
        ("to_group", ".", "/target", "oid-target"),
        ("to_data", ".", "/target/data", "oid-data"),
    }
    assert all(lk["source_object_id"] == "oid-root" for lk in links)
    element = json.loads(str(zarr.open_array(tmp_path / "f.zarr" / "holder" / "refs", mode="r")[0]))
    assert element == {"source": ".", "path": "/target", "object_id": "oid-target", "source_object_id": "oid-root"}
    io.close()


def test_read_builder_is_cached_identity_stable_and_marked_written(tmp_path):
    write(tmp_path / "f.zarr", _linked_tree())
    io, back = read(tmp_path / "f.zarr")
    assert io.read_builder() is back

    def walk(b):
        yield b
        if isinstance(b, GroupBuilder):
            for sub in list(b.groups.values()) + list(b.datasets.values()) + list(b.links.values()):
                yield from walk(sub)

    for b in walk(back):
        assert io.get_written(b), b.name
    assert io.get_builder("/target/data") is back.groups["target"].datasets["data"]
    io.close()


def test_external_link_to_another_file(tmp_path):
    other = GroupBuilder(
        "root", datasets={"x": DatasetBuilder("x", np.arange(3))}, attributes={"object_id": "oid-other"}
    )
    write(tmp_path / "other.zarr", other)
    with ZarrIO(tmp_path / "other.zarr", mode="r") as src:
        x = src.read_builder().datasets["x"]
        main = GroupBuilder("root")
        main.set_link(LinkBuilder(x, name="ext"))
        write(tmp_path / "main.zarr", main)
    links = zarr.open_group(tmp_path / "main.zarr", mode="r").attrs["zarr_link"]
    assert links[0]["source"] == "other.zarr" and links[0]["path"] == "/x"
    io, back = read(tmp_path / "main.zarr")
    assert np.array_equal(back.links["ext"].builder.data[:], [0, 1, 2])
    io.close()


def test_compound_datasets(tmp_path):
    target = GroupBuilder("ts", attributes={"object_id": "oid-ts"})
    numeric = np.array([(1, 2.5), (3, -1.0)], dtype=[("a", "int32"), ("b", "float64")])
    with_refs = [(0, 5, ReferenceBuilder(target)), (5, 2, ReferenceBuilder(target))]
    with_text = [(1, "first", b"asc"), (2, "sëcond", b"")]
    root = GroupBuilder(
        "root",
        groups={"ts": target},
        datasets={
            "numeric": DatasetBuilder(
                "numeric", numeric, dtype=[{"name": "a", "dtype": "int32"}, {"name": "b", "dtype": "float64"}]
            ),
            "refs": DatasetBuilder(
                "refs",
                with_refs,
                dtype=[
                    {"name": "idx_start", "dtype": "int32"},
                    {"name": "count", "dtype": "int32"},
                    {"name": "timeseries", "dtype": {"target_type": "TimeSeries", "reftype": "object"}},
                ],
            ),
            "text": DatasetBuilder(
                "text",
                with_text,
                dtype=[
                    {"name": "i", "dtype": "uint8"},
                    {"name": "t", "dtype": "text"},
                    {"name": "s", "dtype": "ascii"},
                ],
            ),
        },
    )
    write(tmp_path / "f.zarr", root)
    io, back = read(tmp_path / "f.zarr")
    got = back.datasets["numeric"].data[:]
    assert got.dtype.names == ("a", "b") and got.tolist() == numeric.tolist()
    refs = back.datasets["refs"].data
    assert refs[0].item() == (0, 5, back.groups["ts"]) and len(refs) == 2  # np.void rows, as h5py gives
    assert back.datasets["refs"].dtype[2] == {"name": "timeseries", "dtype": "object"}
    text = back.datasets["text"].data
    assert text[:].tolist() == [(1, "first", "asc"), (2, "sëcond", "")]
    assert [f["dtype"] for f in zarr.open_array(tmp_path / "f.zarr" / "text").attrs["zarr_dtype"]] == [
        "uint8",
        "text",
        "ascii",
    ]  # string subtypes survive
    # all-numeric compounds are Zarr v3 structs, readable by plain zarr-python
    z = zarr.open_array(tmp_path / "f.zarr" / "numeric", mode="r")
    assert z[:].tolist() == numeric.tolist()
    # nothing padded: rows with strings or references are variable-length strings
    assert zarr.open_array(tmp_path / "f.zarr" / "refs").metadata.to_dict()["data_type"] == "string"
    io.close()


def test_every_array_opens_with_plain_zarr(tmp_path):
    write(tmp_path / "f.zarr", _linked_tree())
    group = zarr.open_group(tmp_path / "f.zarr", mode="r")
    arrays = list(group.arrays()) + [a for _, g in group.groups() for a in g.arrays()]
    assert arrays
    for _, arr in arrays:
        arr[...]  # decodes with registered data types and codecs only


def test_dataio_settings_survive_on_reference_datasets(tmp_path):
    """HDMF drops non-H5DataIO wrappers from reference datasets; the writer still honours them."""
    from hdmf.common import DynamicTable, VectorData
    from hdmf.common import get_manager as hdmf_manager
    from hdmf.data_utils import DataIO

    class SettingsIO(DataIO):
        @property
        def io_settings(self):
            return {"chunks": (2,)}

    target = DynamicTable(name="target", description="t")
    target.add_column("x", "x")
    for i in range(5):
        target.add_row(x=i)
    refs = VectorData(name="refs", description="object references", data=SettingsIO([target] * 5))
    table = DynamicTable(name="table", description="d", columns=[refs], id=list(range(5)))
    from hdmf.common import SimpleMultiContainer

    root = SimpleMultiContainer(name="root", containers=[target, table])
    with ZarrIO(tmp_path / "f.zarr", mode="w", manager=hdmf_manager()) as io:
        io.write(root)
    z = zarr.open_array(tmp_path / "f.zarr" / "table" / "refs", mode="r")
    assert z.attrs["zarr_dtype"] == "object" and z.chunks == (2,)


@pytest.mark.parametrize("name", ["..", ".", "__meta", "zarr.json", "a/b", ""])
def test_invalid_node_names_are_refused(tmp_path, name):
    from hdmf_zarr3 import InvalidNameError

    root = GroupBuilder("root")
    root.set_group(GroupBuilder(name, attributes={"x": 1}))
    with pytest.raises(InvalidNameError, match="invalid node name"):
        write(tmp_path / "sub" / "f.zarr", root)
    assert not (tmp_path / "sub" / "zarr.json").exists()


def _tree(path):
    return {p.relative_to(path): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


@pytest.mark.parametrize("kind", ["group", "dataset", "link"])
@pytest.mark.parametrize("name", ["é" * 128, "x" * 256, "\udc80"], ids=["256-utf8-bytes", "256-ascii", "surrogate"])
def test_names_no_filesystem_takes_are_refused_before_anything_is_written(tmp_path, name, kind):
    """A node name becomes a directory name: over 255 bytes of UTF-8 (or not UTF-8 at all) no file system
    takes it, and finding out halfway through a write would leave the file half written."""
    from hdmf_zarr3 import InvalidNameError

    def tree():
        root = GroupBuilder("root", datasets={"d": DatasetBuilder("d", data=[1, 2])})
        inner = GroupBuilder("g")
        root.set_group(inner)
        if kind == "group":
            inner.set_group(GroupBuilder(name, attributes={"x": 1}))
        elif kind == "dataset":
            inner.set_dataset(DatasetBuilder(name, data=np.arange(3)))
        else:
            inner.set_link(LinkBuilder(root.datasets["d"], name))
        return root

    with pytest.raises(InvalidNameError, match="/g: invalid node name .* (255 bytes|UTF-8)"):
        write(tmp_path / "new.zarr", tree())
    assert list(tmp_path.iterdir()) == []  # nothing created, not even the directory or its lock
    write(tmp_path / "old.zarr", GroupBuilder("root", datasets={"d": DatasetBuilder("d", data=[1, 2])}))
    before = _tree(tmp_path / "old.zarr")
    for mode in ("a", "r+"):  # ("w" empties the file when it is opened, as h5py does)
        with pytest.raises(InvalidNameError), ZarrIO(tmp_path / "old.zarr", mode=mode) as io:
            io.write_builder(tree())
        assert _tree(tmp_path / "old.zarr") == before, mode


@pytest.mark.parametrize("kind", ["link", "reference"])
@pytest.mark.parametrize(
    "where", ["o\nther.zarr", "o\x1bther.zarr", "o\udc80ther.zarr"], ids=["newline", "escape", "surrogate"]
)
def test_a_link_or_reference_into_a_file_reading_would_refuse_is_refused_before_anything_is_written(
    tmp_path, where, kind
):
    """Issue #38: a reader refuses a ``source`` with a control character (or not UTF-8); a writer refuses to
    store one, instead of writing a file it cannot read back."""
    from hdmf_zarr3 import UnsupportedDataError

    def tree():
        target = DatasetBuilder("t", np.arange(3.0), source=str(tmp_path / where))
        target.location = "/"  # the root dataset of the other file, as a reader hands it out
        if kind == "link":
            return GroupBuilder("root", links={"l": LinkBuilder(target, "l")})
        return GroupBuilder("root", datasets={"r": DatasetBuilder("r", ReferenceBuilder(target))})

    with pytest.raises(UnsupportedDataError, match="control character|lone surrogate"):
        write(tmp_path / "new.zarr", tree())
    assert not (tmp_path / "new.zarr").exists()


def test_a_name_of_255_bytes_is_written(tmp_path):
    name = "é" * 127 + "x"
    root = GroupBuilder("root", groups={name: GroupBuilder(name, attributes={"x": 1})})
    write(tmp_path / "f.zarr", root)
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        assert io.read_builder().groups[name].attributes["x"] == 1


def test_region_references_are_refused_not_mislabelled(tmp_path):
    from hdmf_zarr3 import UnsupportedDataError

    root = GroupBuilder("root")
    target = DatasetBuilder("t", data=[1, 2, 3])
    root.set_dataset(target)
    root.set_dataset(DatasetBuilder("reg", data=[ReferenceBuilder(target)], dtype="region"))
    with pytest.raises(UnsupportedDataError, match="/reg: region references"):
        write(tmp_path / "f.zarr", root)


def test_scalar_compound_reads_as_0d_structured_array(tmp_path):
    value = np.array((0.0, 2.0, 3.0), dtype=[("x", "f4"), ("y", "f4"), ("z", "f4")])
    root = GroupBuilder(
        "root",
        datasets={
            "pos": DatasetBuilder(
                "pos",
                value,
                dtype=[
                    {"name": "x", "dtype": "float32"},
                    {"name": "y", "dtype": "float32"},
                    {"name": "z", "dtype": "float32"},
                ],
            )
        },
    )
    write(tmp_path / "f.zarr", root)
    io, back = read(tmp_path / "f.zarr")
    data = back.datasets["pos"].data
    assert isinstance(data, np.ndarray) and data.shape == () and data.tolist() == (0.0, 2.0, 3.0)
    io.close()


def test_link_to_the_root_of_another_file(tmp_path):
    write(tmp_path / "a.zarr", GroupBuilder("root", attributes={"object_id": "oid-a"}))
    with ZarrIO(tmp_path / "a.zarr", mode="r") as src:
        main = GroupBuilder("root")
        main.set_link(LinkBuilder(src.read_builder(), name="other"))
        write(tmp_path / "c.zarr", main)
    link = zarr.open_group(tmp_path / "c.zarr", mode="r").attrs["zarr_link"][0]
    assert (link["path"], link["source"], link["source_object_id"]) == ("/", "a.zarr", "oid-a")
    io, back = read(tmp_path / "c.zarr")
    assert back.links["other"].builder.attributes["object_id"] == "oid-a"
    io.close()


def test_list_of_bytes_attribute_is_ascii(tmp_path):
    write(tmp_path / "f.zarr", GroupBuilder("root", attributes={"b": [b"a", b"bc"]}))
    assert zarr.open_group(tmp_path / "f.zarr", mode="r").attrs["b"] == {"zarr_dtype": "ascii", "value": ["a", "bc"]}


def _hand_linked_tree(kind):
    """A tree whose group /b holds links edited by hand past HDMF's type checks (which forbid links to links)."""
    target = DatasetBuilder("target", data=np.arange(3.0))
    b = GroupBuilder("b")
    root = GroupBuilder("root", groups={"a": GroupBuilder("a", datasets={"target": target}), "b": b})
    first = LinkBuilder(target, "l1")
    b.set_link(first)
    second = LinkBuilder(target, "l2")
    b.set_link(second)
    if kind == "itself":
        first["builder"] = first
    elif kind == "cycle":
        first["builder"], second["builder"] = second, first
    else:  # a chain: l2 -> l1 -> /a/target
        second["builder"] = first
    return root


@pytest.mark.parametrize(
    "kind,message",
    [
        ("itself", "/b/l1: the link points to itself"),
        (
            "cycle",
            "/b/l1: the link leads to a cycle of links "
            r"\(/b/l1 -> /b/l2 -> /b/l1\)",
        ),
    ],
)
def test_links_that_lead_back_to_themselves_are_refused_before_anything_is_written(tmp_path, kind, message):
    from hdmf_zarr3 import HdmfZarrError

    with pytest.raises(HdmfZarrError, match=message):
        write(tmp_path / "f.zarr", _hand_linked_tree(kind))
    assert list(tmp_path.iterdir()) == []


def test_a_chain_of_links_is_written_as_links_to_its_end(tmp_path):
    write(tmp_path / "f.zarr", _hand_linked_tree("chain"))
    links = json.loads((tmp_path / "f.zarr" / "b" / "zarr.json").read_text())["attributes"]["zarr_link"]
    assert {link["name"]: link["path"] for link in links} == {"l1": "/a/target", "l2": "/a/target"}
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io:
        b = io.read_builder().groups["b"]
        assert b.links["l2"].builder is b.links["l1"].builder is io.read_builder().groups["a"].datasets["target"]


def test_group_attributes_are_set_as_hdmf_sets_them_without_a_checked_call_per_name(tmp_path, monkeypatch):
    # HDMF's GroupBuilder.set_attribute makes two docval calls per name: the read sets them all at once
    # (same attributes, same obj_type), and still refuses a name a child uses, typed, also by validate.
    root = GroupBuilder(
        "root",
        groups={"g": GroupBuilder("g", attributes={"a": 1, "b": "text", "c": np.arange(3)})},
        datasets={"d": DatasetBuilder("d", np.arange(4))},
        attributes={"neurodata_type": "X"},
    )
    write(tmp_path / "f.zarr", root)
    calls = []
    original = GroupBuilder.set_attribute
    monkeypatch.setattr(GroupBuilder, "set_attribute", lambda self, *a, **k: (calls.append(a), original(self, *a, **k)))
    io, back = read(tmp_path / "f.zarr")
    with io:
        assert calls == []
        g = back.groups["g"]
        assert (g.attributes["a"], g.attributes["b"], list(g.attributes["c"])) == (1, "text", [0, 1, 2])
        expected = GroupBuilder("probe")
        original(expected, "a", 1)
        assert {k: g.obj_type[k] for k in ("a", "b", "c")} == dict.fromkeys("abc", expected.obj_type["a"])
        assert back.attributes["neurodata_type"] == "X"
        with pytest.raises(ValueError, match="already exists"):
            g.set_group(GroupBuilder("a"))  # obj_type knows the names as attributes
    doc_path = tmp_path / "f.zarr" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["attributes"]["d"] = 5  # the root's attribute named as its dataset
    doc_path.write_text(json.dumps(doc))
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io, pytest.raises(CorruptStoreError, match="'d' has the name") as e:
        io.read_builder()
    assert e.value.path == "/"
    report = validate(tmp_path / "f.zarr")
    assert not report.valid and "'d' has the name of one of the group's datasets" in str(report)


def test_a_link_named_as_an_attribute_of_its_group_is_refused_typed(tmp_path):
    target = DatasetBuilder("d", np.arange(4))
    write(tmp_path / "f.zarr", GroupBuilder("root", datasets={"d": target}, links={"x": LinkBuilder(target, "x")}))
    doc_path = tmp_path / "f.zarr" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["attributes"]["x"] = 5
    doc_path.write_text(json.dumps(doc))
    with ZarrIO(tmp_path / "f.zarr", mode="r") as io, pytest.raises(CorruptStoreError, match="link 'x' has the name"):
        io.read_builder()
    assert "link 'x' has the name of an attribute" in str(validate(tmp_path / "f.zarr"))


def _every_builder(root):
    yield root
    if isinstance(root, GroupBuilder):
        for child in (*root.groups.values(), *root.datasets.values()):
            yield from _every_builder(child)
        yield from root.links.values()


def _fields(builder):
    """What a builder holds, its children by name and data by kind (lazy datasets differ per read)."""
    out = {}
    for key, value in vars(builder).items():
        if isinstance(value, (GroupBuilder, DatasetBuilder)):
            value = ("builder", value.name)
        out[key] = value
    items = {}
    for key, value in dict(builder).items():
        if key in ("groups", "datasets", "links"):
            value = sorted(value)
        elif key == "data":
            value = type(value).__name__
        elif key == "builder":
            value = value.path
        items[key] = value
    return out, items, builder.path


def test_builders_are_made_as_hdmf_makes_them_without_its_argument_checks(tmp_path, monkeypatch):
    # HDMF's builder constructors and set_group/set_dataset check every argument (docval): a read makes
    # its builders without calling them, with the same fields, parents and paths as they would give.
    from hdmf_zarr3.backend.read import builders

    write(tmp_path / "f.zarr", _linked_tree())
    assert builders.FAST
    calls = []
    for cls, name in ((GroupBuilder, "__init__"), (DatasetBuilder, "__init__"), (GroupBuilder, "set_group")):
        original = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, _o=original, **k: (calls.append(a), _o(self, *a, **k))[1])
    monkeypatch.setattr(GroupBuilder, "set_dataset", lambda self, *a, **k: calls.append(a))
    io, fast = read(tmp_path / "f.zarr")
    with io:
        assert calls == []
        fast_fields = [_fields(b) for b in _every_builder(fast)]
    monkeypatch.undo()
    monkeypatch.setattr(builders, "FAST", False)
    io, public = read(tmp_path / "f.zarr")
    with io:
        assert fast_fields == [_fields(b) for b in _every_builder(public)]
    holder = fast.groups["holder"]
    assert holder.parent is fast and holder.datasets["refs"].parent is holder
    assert holder.datasets["refs"].path == "root/holder/refs" and holder.location == "/"
    with pytest.raises(ValueError, match="already exists"):
        holder.set_group(GroupBuilder("refs"))  # obj_type knows the dataset's name
    with pytest.raises(AttributeError, match="Cannot overwrite parent"):
        holder.parent = GroupBuilder("other")


@pytest.mark.parametrize("change", ["a field a copy cannot make", "a constructor that refuses an argument"])
def test_builders_are_made_through_hdmf_when_its_builders_change(monkeypatch, change):
    # the layout of HDMF's builders is asked of HDMF at import; a field the copy cannot make faithfully
    # (an object each builder makes for itself), or a constructor the probe cannot call, turns the fast
    # path off without failing the import, and reads use HDMF's API
    import importlib

    from hdmf_zarr3.backend.read import builders

    cls = GroupBuilder if change == "a field a copy cannot make" else DatasetBuilder
    original = cls.__init__

    def init(self, *args, **kwargs):
        if cls is DatasetBuilder and kwargs.get("dimension_labels") == ("probe-label",):
            raise TypeError("unexpected keyword argument 'dimension_labels'")
        original(self, *args, **kwargs)
        self.registry = object()

    try:
        with monkeypatch.context() as patch:
            patch.setattr(cls, "__init__", init)
            assert importlib.reload(builders).FAST is False
            group = builders.new_group("g", "src", "/")
            assert group.location == "/" and group.name == "g"
    finally:
        assert importlib.reload(builders).FAST is True


def test_the_builders_of_a_rich_nwb_file_are_the_same_made_either_way(tmp_path, monkeypatch):
    # every kind of node PyNWB writes (extensions, links, references, compound rows, regions, scalars):
    # the same fields, items and paths whether the read makes its builders itself or through HDMF's API
    from full_nwbfile import make_full_nwbfile, make_manager

    from hdmf_zarr3 import NWBZarrIO
    from hdmf_zarr3.backend.read import builders

    path = tmp_path / "full.nwb.zarr"
    with NWBZarrIO(path, mode="w", manager=make_manager()) as io:
        io.write(make_full_nwbfile())
    made = {}
    for fast in (True, False):
        monkeypatch.setattr(builders, "FAST", fast)
        with NWBZarrIO(path, mode="r", manager=make_manager()) as io:
            made[fast] = [_fields(b) for b in _every_builder(io.read_builder())]
            assert io.read().acquisition  # HDMF constructs the file from them either way
    assert len(made[True]) > 100 and made[True] == made[False]
