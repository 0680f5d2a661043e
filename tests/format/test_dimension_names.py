"""The dimension-name rule (format/documents/dimension_names.py): every axis named, one length per name in a group."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hdmf_zarr3.format.documents.dimension_names import group_names, renamed_documents


def _lengths(arrays, names):
    """name -> set of lengths it has in the group (and the arrays that use one name twice)."""
    seen: dict[str, set[int]] = {}
    for array, (shape, _) in arrays.items():
        assert len(names[array]) == len(shape)
        assert len(set(names[array])) == len(shape), f"{array} uses one name twice: {names[array]}"
        for name, length in zip(names[array], shape):
            seen.setdefault(name, set()).add(length)
    return seen


def test_consistent_spec_names_are_kept():
    arrays = {"data": ((100, 8), ["num_times", "num_channels"]), "timestamps": ((100,), ["num_times"])}
    assert group_names(arrays) == {"data": ["num_times", "num_channels"], "timestamps": ["num_times"]}


def test_a_ragged_column_gets_its_own_name_and_the_table_keeps_the_spec_name():
    # a DynamicTable: spike_times (ragged data, 18 values) shares the spec name dim0 with the columns
    arrays = {
        "id": ((4,), ["num_rows"]),
        "quality": ((4,), ["dim0"]),
        "location": ((4,), ["dim0"]),
        "spike_times": ((18,), ["dim0"]),
        "spike_times_index": ((4,), ["num_rows"]),
    }
    assert group_names(arrays) == {
        "id": ["num_rows"],
        "quality": ["dim0"],
        "location": ["dim0"],
        "spike_times": ["spike_times.dim0"],
        "spike_times_index": ["num_rows"],
    }


def test_on_a_tie_the_smallest_length_keeps_the_name():
    arrays = {"quality": ((4,), ["dim0"]), "spike_times": ((18,), ["dim0"])}
    assert group_names(arrays) == {"quality": ["dim0"], "spike_times": ["spike_times.dim0"]}


def test_unnamed_axes_and_scalars():
    arrays = {"rgb": ((5, 5, 3), None), "value": ((), None), "partly": ((2, 3), ["t", None])}
    assert group_names(arrays) == {
        "rgb": ["rgb.dim0", "rgb.dim1", "rgb.dim2"],
        "value": [],
        "partly": ["t", "partly.dim1"],
    }


def test_names_that_do_not_fit_the_rank_are_ignored():
    assert group_names({"x": ((3, 4), ["only_one"])}) == {"x": ["x.dim0", "x.dim1"]}
    # (a file's document may hold anything there)
    assert group_names({"x": ((3,), 5), "y": ((2,), [7])}) == {"x": ["x.dim0"], "y": ["y.dim0"]}  # type: ignore[dict-item]


def test_one_name_on_two_axes_of_one_array_is_split():
    names = group_names({"m": ((3, 3), ["n", "n"])})["m"]
    assert names[0] != names[1]


def test_a_unique_name_never_meets_another_candidate():
    # "c.b" (the unique name of c's "b") is also the candidate of another array, with another length
    arrays = {"a": ((2,), ["b"]), "c": ((3,), ["b"]), "d": ((5,), ["c.b"])}
    names = group_names(arrays)
    assert all(len(v) == 1 for v in _lengths(arrays, names).values())
    assert names == {"a": ["b"], "c": ["c.b~2"], "d": ["c.b"]}


def test_the_rule_gives_its_own_names_again():
    arrays = {"quality": ((4,), ["dim0"]), "spike_times": ((18,), ["dim0"]), "rgb": ((2, 2), None)}
    names = group_names(arrays)
    again = group_names({a: (shape, names[a]) for a, (shape, _) in arrays.items()})
    assert again == names


def test_renamed_documents_changes_only_the_groups_asked_and_only_what_differs():
    def doc(shape, names=None):
        out = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "attributes": {}}
        if names is not None:
            out["dimension_names"] = names
        return out

    documents = {
        "/": {"zarr_format": 3, "node_type": "group", "attributes": {}},
        "/units": {"zarr_format": 3, "node_type": "group", "attributes": {}},
        "/units/quality": doc((4,), ["dim0"]),
        "/units/spike_times": doc((18,), ["dim0"]),
        "/units/id": doc((4,), ["num_elements"]),
        "/other": {"zarr_format": 3, "node_type": "group", "attributes": {}},
        "/other/x": doc((3,)),
        "/scalar": doc(()),
    }
    changed = renamed_documents(documents, ["/units", "/"])
    assert set(changed) == {"/units/spike_times", "/scalar"}
    assert changed["/units/spike_times"]["dimension_names"] == ["spike_times.dim0"]
    assert changed["/scalar"]["dimension_names"] == []
    assert documents["/units/spike_times"]["dimension_names"] == ["dim0"]  # (copies: the input is not changed)


_names = st.one_of(st.none(), st.sampled_from(["dim0", "num_rows", "a", "a.dim0", "b.a", "x", "a.b", "a.b~2"]))
_array = st.integers(0, 3).flatmap(
    lambda ndim: st.tuples(
        st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim),
        st.one_of(st.none(), st.lists(_names, min_size=ndim, max_size=ndim)),
    )
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "x", "a.b", "dim0", "c"]), _array, max_size=6))
def test_no_name_ever_has_two_lengths_in_one_group(arrays):
    names = group_names(arrays)
    assert set(names) == set(arrays)
    assert all(len(lengths) == 1 for lengths in _lengths(arrays, names).values())
    # a given name every axis of the group agrees on (and no array has twice) is kept
    given: dict[str, set[int]] = {}
    for shape, labels in arrays.values():
        if labels is not None:
            for label, length in zip(labels, shape):
                if label is not None:
                    given.setdefault(label, set()).add(length)
    for array, (_, labels) in arrays.items():
        for axis, label in enumerate(labels or []):
            if label is not None and len(given[label]) == 1 and labels.count(label) == 1:
                if not any(label == f"{a}.dim{i}" for a, (s, _) in arrays.items() for i in range(len(s))):
                    assert names[array][axis] == label, (array, axis)
    # the rule gives its own names again
    again = group_names({a: (shape, names[a]) for a, (shape, _) in arrays.items()})
    assert again == names


def test_documents_zarr_stored_itself_are_named_too():
    # zarr's ArrayV3Metadata.to_dict() (an append through zarr) gives tuples
    documents = {
        "/t": {"zarr_format": 3, "node_type": "group", "attributes": {}},
        "/t/a": {"zarr_format": 3, "node_type": "array", "shape": (5,), "dimension_names": ("dim0",)},
        "/t/b": {"zarr_format": 3, "node_type": "array", "shape": [3], "dimension_names": ["dim0"]},
        "/t/c": {"zarr_format": 3, "node_type": "array", "shape": [3], "dimension_names": ["dim0"]},
    }
    assert renamed_documents(documents, ["/t"]) == {"/t/a": {**documents["/t/a"], "dimension_names": ["a.dim0"]}}
