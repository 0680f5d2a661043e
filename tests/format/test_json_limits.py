"""Parsing a node document costs bounded memory and time, whatever it holds (format/documents/limits.py).

Each worst document is built just within the limits (bytes and JSON values) and parsed as a ``zarr.json``
is, its peak traced memory and time measured; one value or byte more is refused with
``CorruptStoreError`` naming the node, before any object is built.
"""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from hdmf_zarr3 import CorruptStoreError
from hdmf_zarr3.format.documents import limits
from hdmf_zarr3.storage.stores.nodes import parse_document

MEMORY = 256 * 2**20
SECONDS = 10.0  # a second or two on a quiet machine
HEAD = b'{"zarr_format":3,"node_type":"group","attributes":{"a":'
TAIL = b"}}"
BASE = limits.count_values(HEAD + b"0" + TAIL, 10**9)


def _array_of(item: bytes, per_item: int, extra: int = 0) -> bytes:
    """A root document whose attribute ``a`` is an array of as many ``item`` as the value and byte limits
    allow (``per_item``: the values each adds, its comma included), plus ``extra`` more."""
    by_values = (limits.MAX_DOCUMENT_VALUES - BASE - 1) // per_item
    by_bytes = (limits.MAX_DOCUMENT_BYTES - len(HEAD + TAIL) - 2) // (len(item) + 1)
    n = min(by_values, by_bytes) + extra
    return HEAD + b"[" + b",".join([item] * n) + b"]" + TAIL


def _keys(extra: int = 0) -> bytes:
    n = (limits.MAX_DOCUMENT_VALUES - BASE - 1) // 2 + extra
    return HEAD + b"{" + b",".join(b'"%x":0' % i for i in range(n)) + b"}" + TAIL


def _string(size: int, first: bytes = b"") -> bytes:
    return HEAD + b'"' + first + b"a" * (size - len(HEAD) - len(TAIL) - 2 - len(first)) + b'"' + TAIL


WORST = {
    "empty lists": lambda extra=0: _array_of(b"[]", 2, extra),
    "empty objects": lambda extra=0: _array_of(b"{}", 2, extra),
    "one-key objects": lambda extra=0: _array_of(b'{"":0}', 3, extra),
    "short strings": lambda extra=0: _array_of(b'"ab"', 1, extra),
    "floats": lambda extra=0: _array_of(b"0.5", 1, extra),
    "big integers": lambda extra=0: _array_of(b"12345678901234567890", 1, extra),
    "many keys": _keys,
    "long string": lambda extra=0: _string(limits.MAX_DOCUMENT_BYTES + extra),
    "long wide string": lambda extra=0: _string(limits.MAX_WIDE_DOCUMENT_BYTES + extra, b"\\ud83d\\ude00"),
    "long raw wide string": lambda extra=0: _string(limits.MAX_WIDE_DOCUMENT_BYTES + extra, "😀".encode()),
}


def _status(field: str) -> int:
    """A ``/proc/self/status`` memory figure, in bytes."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def _peak_of(parse):
    """``parse()``'s result and the most memory the process held above its start while it ran: the peak
    resident size, reset first through ``/proc/self/clear_refs`` (Linux), or tracemalloc's traced peak where
    that cannot be done (slower: tracing slows parsing about four times)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM, the peak resident size, to the current size
    except OSError:
        tracemalloc.start()
        try:
            return parse(), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    before = _status("VmRSS")
    result = parse()
    return result, _status("VmHWM") - before


def _measure(raw: bytes):
    """Parse ``raw`` as a root ``zarr.json`` once, timed and its peak memory measured; the document, or the
    error."""

    def parse():
        try:
            return parse_document(raw, "/"), None
        except CorruptStoreError as exc:
            return None, exc

    start = time.perf_counter()
    result, peak = _peak_of(parse)
    elapsed = time.perf_counter() - start
    assert elapsed < SECONDS, f"parsing took {elapsed:.1f} s"
    assert peak < MEMORY, f"parsing took {peak / 2**20:.0f} MiB"
    return result


@pytest.mark.parametrize("name", list(WORST))
def test_worst_document_at_the_limit_parses_in_bounded_memory_and_time(name):
    raw = WORST[name]()
    assert len(raw) <= limits.MAX_DOCUMENT_BYTES
    assert limits.count_values(raw, 10**9) <= limits.MAX_DOCUMENT_VALUES
    doc, error = _measure(raw)
    assert error is None, error
    assert doc["attributes"]["a"] is not None


@pytest.mark.parametrize("name", list(WORST))
def test_one_more_value_or_byte_is_refused_naming_the_node(name):
    raw = WORST[name](2)
    doc, error = _measure(raw)
    assert doc is None
    assert error.path == "/"
    assert "more than" in str(error)


def test_deep_nesting_is_refused_quickly():
    for depth in (100, 10_000, 1_000_000):
        _, error = _measure(HEAD + b"[" * depth + b"]" * depth + TAIL)
        assert error is not None and error.path == "/"


def test_structural_characters_inside_strings_are_not_counted():
    """Text full of commas and brackets (a long description) is not mistaken for millions of values."""
    raw = _string(limits.MAX_DOCUMENT_BYTES // 2, b',[{:\\"')
    doc, error = _measure(raw)
    assert error is None, error
    assert doc["attributes"]["a"].startswith(',[{:"')


@pytest.mark.parametrize(
    "value",
    [[], {}, [[], {}], {"a": [1, "x,y", {"b": None}]}, ["[", "{", ",", ":", '"\\'], 5, "s", ["\\", '\\"', ",\\"]],
)
def test_count_values_counts_the_structure_outside_strings(value):
    raw = json.dumps(value).encode()
    exact = sum(raw.count(c) for c in (b"[", b"{", b",", b":"))  # in the document's own structure only:
    exact -= sum(s.count(c) for s in _strings(value) for c in "[{,:")  # ... less those inside its strings
    assert limits.count_values(raw, 10**6) >= _values(value) - 1
    assert limits._count_outside_strings(raw, 10**6) == exact
    windowed = limits._WINDOW
    try:
        limits._WINDOW = 3  # strings and escapes across windows
        assert limits._count_outside_strings(raw, 10**6) == exact
    finally:
        limits._WINDOW = windowed


def _strings(value):
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in _strings(v))]
    return [value] if isinstance(value, str) else []


def _values(value) -> int:
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + _values(v) for v in value.values())
    return 1


def test_every_json_parse_of_file_content_goes_through_the_limits():
    """v2 documents, cached specifications and reference elements use the same bounded parser."""
    from hdmf_zarr3.format.data.references import decode_element

    with pytest.raises(CorruptStoreError, match="more than"):
        decode_element("[" + ",".join(["[]"] * limits.MAX_ELEMENT_VALUES) + "]", "/refs")
    with pytest.raises(CorruptStoreError, match="more than"):
        decode_element('"' + "a" * limits.MAX_ELEMENT_BYTES + '"', "/refs")
    with pytest.raises(CorruptStoreError, match="not text"):
        decode_element(5, "/refs")
