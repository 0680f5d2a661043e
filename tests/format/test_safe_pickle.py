"""The pickle decoder of hdmf-zarr <= 0.13 chunks: plain numpy data in, nothing executed, ever."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from hdmf_zarr3.errors import UnsafeDataError
from hdmf_zarr3.format.data import safe_pickle


@pytest.fixture(autouse=True)
def no_python_unpickler(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("Python's unpickler was used")

    monkeypatch.setattr(pickle, "Unpickler", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)


class Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_plain_arrays_of_every_protocol(protocol):
    records = np.empty(3, dtype=object)
    records[:] = [{"source": ".", "path": "/a", "object_id": None}, "text", None]
    out = safe_pickle.loads(pickle.dumps(records, protocol=protocol), "/x")
    assert out.dtype == object and list(out) == list(records)
    rows = np.array([(1, 2.5, {"path": "/b"})], dtype=[("a", "<i4"), ("b", "<f8"), ("c", "O")])
    out = safe_pickle.loads(pickle.dumps(rows, protocol=protocol), "/x")
    assert out.dtype.names == ("a", "b", "c") and out[0]["c"] == {"path": "/b"} and out[0]["b"] == 2.5
    numbers = np.arange(6, dtype=">i2").reshape(2, 3)
    np.testing.assert_array_equal(safe_pickle.loads(pickle.dumps(numbers, protocol=protocol), "/x"), numbers)


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_code_is_refused_and_never_runs(protocol, tmp_path):
    marker = tmp_path / "pwned"
    payload = np.empty(1, dtype=object)
    payload[0] = Exploit(marker)
    with pytest.raises(UnsafeDataError, match=r"/node: pickled chunk refused \((refused global|refused opcode)"):
        safe_pickle.loads(pickle.dumps(payload, protocol=protocol), "/node")
    with pytest.raises(UnsafeDataError, match="/node"):
        safe_pickle.loads(pickle.dumps(Exploit(marker), protocol=protocol), "/node")
    assert not marker.exists()


@pytest.mark.parametrize(
    "data", [b"", b"garbage", pickle.dumps({"a": 1}), pickle.dumps([1, 2]), pickle.dumps(np.array([1.0]))[:-3]]
)
def test_malformed_or_non_array_pickles_are_refused(data):
    with pytest.raises(UnsafeDataError, match="/n: pickled chunk refused"):
        safe_pickle.loads(data, "/n")
