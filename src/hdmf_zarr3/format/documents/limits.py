"""What a node document may declare: types, sizes and nesting a reader accepts before using it.

A ``zarr.json`` comes from whoever wrote the file. Before anything is allocated, opened or decoded
for a node, its document is checked here, so that a hostile or damaged file fails with a
:class:`CorruptStoreError` (or a codec error) naming the node, instead of a numpy or zarr error,
an allocation of petabytes, a recursion overflow, or code run by a pickle codec.

=========================  =====================================================================
limit                      why
=========================  =====================================================================
array size ≤ 2**50 bytes   1 PiB, far above any NWB dataset; larger shapes only make numpy fail
chunk count ≤ 2**40        per-chunk bookkeeping (keys, grids) must stay enumerable
attribute nesting ≤ 32     HDMF attributes are at most 2-D arrays inside a typed envelope (depth 5)
document nesting ≤ 64      codec chains (sharding within sharding) stay shallow
document ≤ 32 MiB          the consolidated root of a file of 10,000 nodes (~800 bytes each) with
                           attribute arrays of a few 100,000 numbers takes ~15 MiB
... ≤ 16 MiB if wide       a document holding a character beyond U+00FF (raw, or as a ``\\u`` escape)
                           is decoded by Python at up to 4 bytes per character, as are its strings
≤ 2**21 JSON values        the same root holds ~1 million; every value parsed costs up to ~70
                           bytes (an empty list: 64, against the 3 bytes of ``[],``), so the
                           count, not the bytes, bounds the memory of a document of many tiny values
reference/row element      one reference or compound row: at most 64 KiB and 4096 values
one file ≤ 96 MiB and      all the node documents of one open file together (:class:`MetadataBudget`):
3 × 2**21 JSON values      three times one document, see :data:`MAX_FILE_METADATA_BYTES`
=========================  =====================================================================

The values are counted in the bytes before :func:`json.loads` builds any object (:func:`load_json`),
so the memory and time of parsing one document are bounded by these limits (about 250 MiB and a
second or two at worst, measured by ``tests/format/test_json_limits.py``), whatever it holds; and
those of all the documents one file holds, which stay in memory while it is open, by the budget
(about 420 MiB at worst, measured by ``tests/storage/test_metadata_budget.py``).

Codecs named ``pickle`` (``numcodecs.pickle``) are refused in every slot: array→array, array→bytes,
bytes→bytes, and the inner and index codecs of sharding.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from ...errors import CorruptStoreError, MetadataLimitError, UnsafeCodecError
from ..layout import codec_rules
from ..vocabulary import SHARDING_CODEC

MAX_ARRAY_BYTES = 2**50
MAX_CHUNKS = 2**40
MAX_ATTRIBUTE_DEPTH = 32
MAX_DOCUMENT_DEPTH = 64  # at least MAX_ATTRIBUTE_DEPTH + 2 (see members_within_depth)
#: A root's block of consolidated metadata (see .consolidated).
CONSOLIDATED_KEY = "consolidated_metadata"
MAX_DIMENSION = 2**63 - 1
UNSAFE_CODECS = frozenset({"pickle", "numcodecs.pickle"})
MAX_DOCUMENT_BYTES = 32 * 2**20
MAX_WIDE_DOCUMENT_BYTES = 16 * 2**20
MAX_DOCUMENT_VALUES = 2**21
MAX_ELEMENT_BYTES = 64 * 2**10
MAX_ELEMENT_VALUES = 4096
#: What the node documents of one open file may take together, counted as for one document. Each document
#: is bounded, but a file of 100,000 documents each just within the limits is not: its documents stay in
#: memory while it is open. A file this package writes is read from its consolidated root, one document
#: within the limits above; read node by node (mode ``r-``, a file of other writers, or
#: ``validate``), it keeps its root with that consolidated copy and every node's own document (twice the
#: metadata), plus the few bytes each node's document adds: three times one document leaves room for all
#: of it. A file of 1,000 TimeSeries takes 3% of its bytes and 6% of its values (see docs/security.md).
MAX_FILE_METADATA_BYTES = 3 * MAX_DOCUMENT_BYTES
MAX_FILE_METADATA_VALUES = 3 * MAX_DOCUMENT_VALUES

#: A character Python stores at 2 or 4 bytes: a UTF-8 lead byte of U+0100 and above, or such an escape.
_WIDE = re.compile(rb"[\xc4-\xf4]|\\u(?:0[1-9a-fA-F]|[1-9a-fA-F])")
_STRUCTURAL = (b"[", b"{", b",", b":")


def count_values(raw: bytes, stop: int) -> int:
    """An upper bound of the JSON values (and object keys) in ``raw``: its ``[ { , :`` outside strings.

    Every value but the outermost follows one of these (the first of an array its ``[``, the others a
    ``,``; an object's keys follow ``{`` or ``,``, its values ``:``). Counted with ``bytes.count`` over the
    whole text first; only when strings may hold more than ``stop`` of them are the strings told apart
    (:func:`_count_outside_strings`)."""
    total = sum(raw.count(c) for c in _STRUCTURAL)
    return total if total <= stop else _count_outside_strings(raw, stop)


#: Bytes scanned at once by :func:`_count_outside_strings` (its arrays take ~20 times this).
_WINDOW = 2**18
_STRUCTURAL_CODES = np.frombuffer(b"".join(_STRUCTURAL), dtype=np.uint8)


def _count_outside_strings(raw: bytes, stop: int) -> int:
    """The ``[ { , :`` of ``raw`` outside JSON strings, window by window (numpy: no Python step per value),
    stopping once past ``stop``. A quote opens or closes a string unless an odd run of backslashes
    precedes it (in valid JSON, backslashes occur only inside strings)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    count, inside, run = 0, 0, 0  # run: backslashes ending the previous window
    for start in range(0, len(data), _WINDOW):
        window = data[start : start + _WINDOW]
        index = np.arange(len(window))
        last_other = np.maximum.accumulate(np.where(window == 92, -1 - run, index))
        before = np.concatenate(([-1 - run], last_other[:-1]))  # last non-backslash before each byte
        quotes = (window == 34) & ((index - 1 - before) % 2 == 0)
        in_string = (np.cumsum(quotes) + inside) % 2 == 1
        count += int(np.count_nonzero(np.isin(window, _STRUCTURAL_CODES) & ~in_string))
        if count > stop:
            return count
        inside = (inside + int(np.count_nonzero(quotes))) % 2
        run = len(window) - 1 - int(last_other[-1])
    return count


class MetadataBudget:
    """The JSON one open file may have parsed and kept, summed over its documents (bytes and values).

    :func:`load_json` charges each document before it builds it, so the documents of a file together
    cost at most ``max_bytes`` and ``max_values`` (and what one document more may take): past them,
    :class:`MetadataLimitError` naming the file (``where``), the limit and the node it stopped at; the
    same for every document after.
    """

    def __init__(
        self, where: str, max_bytes: int = MAX_FILE_METADATA_BYTES, max_values: int = MAX_FILE_METADATA_VALUES
    ):
        self.where = where
        self.max_bytes = max_bytes
        self.max_values = max_values
        self.bytes = 0
        self.values = 0
        self.refused: tuple[str, str] | None = None  # (message, node) once over the budget

    def charge(self, nbytes: int, values: int, path: str) -> None:
        """Count one more document of ``nbytes`` bytes and ``values`` JSON values (at node ``path``)."""
        self.bytes += nbytes
        self.values += values
        self.check(path)

    def check(self, path: str) -> None:
        """Raise if the documents counted so far are over the budget (before reading another one)."""
        if self.refused is None:
            spent = ((self.bytes, self.max_bytes, "bytes"), (self.values, self.max_values, "JSON values"))
            over = [f"{limit} {unit}" for used, limit, unit in spent if used > limit]
            if over:
                self.refused = (
                    f"the node documents of {self.where} take more than {' and '.join(over)} together, more "
                    "than this reader accepts for one file (its metadata budget); stopped at this node",
                    path,
                )
        if self.refused is not None:
            # a new error each time: one kept here would keep, through its traceback, what was parsed
            raise MetadataLimitError(*self.refused)


def load_json(
    data: bytes | str,
    what: str,
    path: str,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_values: int = MAX_DOCUMENT_VALUES,
    budget: MetadataBudget | None = None,
) -> Any:
    """Parse JSON read from a file (``what``: its name in messages) within the limits above.

    Too large or too many values (or, with a ``budget``, the file's documents together over it: the document
    is charged first, its bytes and values): :class:`MetadataLimitError`; not UTF-8, not JSON or nested too
    deeply to parse: :class:`CorruptStoreError`; both naming ``path``, before (or instead of) building the
    objects."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    values = check_size(raw, what, path, max_bytes, max_values)
    if budget is not None:
        budget.charge(len(raw), values, path)
    try:
        return json.loads(data if isinstance(data, str) else raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptStoreError(f"{what} is not valid UTF-8 JSON ({str(exc)[:200]})", path) from exc
    except RecursionError:
        raise CorruptStoreError(f"{what} nests too deeply to parse", path) from None


def within_document_limits(raw: bytes) -> bool:
    """Whether a reader accepts ``raw`` as one node document (what a writer checks before storing a root
    that inlines every node: one too large is not consolidated, and readers list the file instead)."""
    try:
        check_size(raw, "zarr.json", "/", MAX_DOCUMENT_BYTES, MAX_DOCUMENT_VALUES)
    except MetadataLimitError:
        return False
    return True


def check_size(raw: bytes, what: str, path: str, max_bytes: int, max_values: int) -> int:
    """The JSON values of ``raw`` (an upper bound), or :class:`MetadataLimitError` when it has more bytes,
    wide characters or values than the limits allow."""
    if len(raw) > max_bytes:
        raise MetadataLimitError(f"{what} is {len(raw)} bytes, more than the {max_bytes} this reader accepts", path)
    wide_limit = max_bytes * MAX_WIDE_DOCUMENT_BYTES // MAX_DOCUMENT_BYTES
    if len(raw) > wide_limit and _WIDE.search(raw):
        raise MetadataLimitError(
            f"{what} is {len(raw)} bytes with characters beyond U+00FF, more than the {wide_limit} this "
            "reader accepts for such text (4 bytes per character in memory)",
            path,
        )
    values = count_values(raw, max_values)
    if values > max_values:
        raise MetadataLimitError(
            f"{what} holds more than {max_values} JSON values, more than this reader accepts", path
        )
    return values


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether JSON ``value`` nests lists/objects deeper than ``limit`` (iterative: no recursion).

    Visited one level at a time, each level in one comprehension (a document of two million tiny
    values is checked in a fraction of a second); only lists and objects are kept."""
    level = [value] if isinstance(value, (list, dict)) else []
    for _ in range(limit):
        if not level:
            return False
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (list, dict))
        ]
    return bool(level)


def members_within_depth(metadata: dict[str, Any]) -> bool:
    """Whether no member document of a consolidated block's ``metadata`` (node path -> document) nests
    deeper than :func:`check_node` allows: one walk of the whole block instead of one per document and
    attribute.

    An attribute's value sits three levels below ``metadata`` (member, ``attributes``, value): a block no
    deeper than that plus :data:`MAX_ATTRIBUTE_DEPTH` holds no value over its limit, nor a document over
    :data:`MAX_DOCUMENT_DEPTH`. A deeper block is checked document by document (the error names the node).
    """
    return not depth_exceeds(metadata, 3 + MAX_ATTRIBUTE_DEPTH)


def check_node(doc: dict[str, Any], path: str, depth_checked: bool = False) -> None:
    """Check a Zarr v3 node document (already known to be an object with ``zarr_format`` 3).

    ``depth_checked``: its nesting is known to be within the limits (:func:`members_within_depth`). A root's
    consolidated block's members are not walked here: they are node documents, checked as such when the
    block is read (:func:`.consolidated.expand`); members not read are not walked by anything."""
    if doc.get("node_type") == "array":
        check_array(doc, path)
    if depth_checked:
        return
    attrs = doc.get("attributes", {})
    for key, value in attrs.items() if isinstance(attrs, dict) else ():
        if isinstance(value, (list, dict)) and depth_exceeds(value, MAX_ATTRIBUTE_DEPTH):  # (most are scalars)
            raise CorruptStoreError(f"attribute {key!r} nests deeper than {MAX_ATTRIBUTE_DEPTH} levels", path)
    # the attributes (two levels below the document, at most MAX_ATTRIBUTE_DEPTH deep) are within its bound
    rest = {k: v for k, v in doc.items() if k != "attributes" or not isinstance(attrs, dict)}
    block = rest.get(CONSOLIDATED_KEY)
    if isinstance(block, dict) and isinstance(block.get("metadata"), dict):
        rest[CONSOLIDATED_KEY] = {k: v for k, v in block.items() if k != "metadata"}
    if depth_exceeds(rest, MAX_DOCUMENT_DEPTH):
        raise CorruptStoreError(f"zarr.json nests deeper than {MAX_DOCUMENT_DEPTH} levels", path)


def _dimensions(value: Any, what: str, path: str, minimum: int) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise CorruptStoreError(f"{what} must be a list of integers, got {str(value)[:80]}", path)
    if any(v < minimum or v > MAX_DIMENSION for v in value):
        raise CorruptStoreError(f"{what} {value} has a value below {minimum} or above 2**63 - 1", path)
    return value


def check_array(doc: dict[str, Any], path: str) -> None:
    """Types and sizes of an array document: shape, chunk grid, data type, codecs."""
    shape = _dimensions(doc.get("shape"), "shape", path, 0)
    grid = doc.get("chunk_grid")
    if not isinstance(grid, dict) or not isinstance(grid.get("configuration"), dict):
        raise CorruptStoreError(f"chunk_grid must be an object with a configuration, got {str(grid)[:80]}", path)
    if grid.get("name") != "regular":
        raise CorruptStoreError(f"unsupported chunk grid {grid.get('name')!r} (only 'regular')", path)
    chunks = _dimensions(grid["configuration"].get("chunk_shape"), "chunk_shape", path, 1)
    if len(chunks) != len(shape):
        raise CorruptStoreError(f"chunk_shape {chunks} does not have the {len(shape)} dimensions of shape", path)
    data_type = doc.get("data_type")
    if not isinstance(data_type, str) and not (isinstance(data_type, dict) and isinstance(data_type.get("name"), str)):
        raise CorruptStoreError(f"data_type must be a name or an object with a name, got {str(data_type)[:80]}", path)
    size = math.prod(shape) * data_type_itemsize(data_type)
    if size > MAX_ARRAY_BYTES:
        raise CorruptStoreError(f"shape {shape} declares {size} bytes, more than this reader accepts (2**50)", path)
    codecs = doc.get("codecs")
    if not isinstance(codecs, list) or not codecs:
        raise CorruptStoreError(f"codecs must be a non-empty list, got {str(codecs)[:80]}", path)
    count = math.prod(-(-s // c) for s, c in zip(shape, chunks)) * check_codecs(codecs, path, chunks)
    codec_rules.check_fill_value(data_type, doc.get("fill_value"), path)
    if count > MAX_CHUNKS:
        raise CorruptStoreError(
            f"shape {shape} with chunks {chunks} makes {count} chunks, more than this reader accepts (2**40)", path
        )


def check_codecs(codecs: list[Any], path: str, chunks: list[int], what: str = "codecs") -> int:
    """Refuse malformed codec entries, chains and configurations (:mod:`.codec_rules`) and pickle in any
    slot; return the number of chunks stored per chunk of ``chunks`` (inner chunks per shard when
    sharded, else 1)."""
    inner = 1
    for codec in codecs:
        if not isinstance(codec, dict) or not isinstance(codec.get("name"), str):
            raise CorruptStoreError(f"codec entry must be an object with a name, got {str(codec)[:80]}", path)
        name = codec["name"]
        if name in UNSAFE_CODECS or name.rsplit(".", 1)[-1] == "pickle":
            raise UnsafeCodecError(f"codec {name!r} would run code from the file on read; it is never used", path)
        config = codec.get("configuration", {})
        if not isinstance(config, dict):
            raise CorruptStoreError(f"configuration of codec {name!r} must be an object", path)
        codec_rules.check_codec_config(codec, len(chunks), path)
        if name == SHARDING_CODEC:
            for key in ("codecs", "index_codecs"):
                if not isinstance(config.get(key, []), list):
                    raise CorruptStoreError(f"sharding {key} must be a list", path)
            sub = _dimensions(config.get("chunk_shape"), "sharding chunk_shape", path, 1)
            if len(sub) != len(chunks):
                raise CorruptStoreError(f"sharding chunk_shape {sub} does not have {len(chunks)} dimensions", path)
            if any(c % s for c, s in zip(chunks, sub)):
                raise CorruptStoreError(f"shard shape {chunks} is not a whole multiple of its chunk_shape {sub}", path)
            inner = math.prod(-(-c // s) for c, s in zip(chunks, sub))
            check_codecs(config.get("index_codecs", []), path, [1] * len(chunks), "sharding index_codecs")
            inner *= check_codecs(config.get("codecs", []), path, sub, "sharding codecs")
    codec_rules.check_chain(codecs, path, what)
    return inner


def provisional_shape(bounds: list[int | None], chunks: list[int], data_type: str | dict[str, Any]) -> list[int]:
    """The largest shape a reader accepts, for a stream whose length along ``None`` axes is unknown yet:
    what a writer stores until the stream ends, so that a crashed stream still reads (as fill values)."""
    shape = [b if b is not None else c for b, c in zip(bounds, chunks)]
    for axis, bound in enumerate(bounds):
        if bound is None:
            others = math.prod(s for i, s in enumerate(shape) if i != axis) or 1
            other_chunks = math.prod(-(-s // c) for i, (s, c) in enumerate(zip(shape, chunks)) if i != axis)
            by_size = MAX_ARRAY_BYTES // (others * data_type_itemsize(data_type))
            by_count = MAX_CHUNKS // max(1, other_chunks) * chunks[axis]
            shape[axis] = max(chunks[axis], min(by_size, by_count) // chunks[axis] * chunks[axis])
    return shape


def data_type_itemsize(data_type: str | dict[str, Any]) -> int:
    """Bytes per element, at least 1 (variable-length and unknown types count one byte)."""
    if isinstance(data_type, dict):
        fields = (
            data_type.get("configuration", {}).get("fields")
            if isinstance(data_type.get("configuration"), dict)
            else None
        )
        if isinstance(fields, list):
            return max(1, sum(data_type_itemsize(f.get("data_type", "")) if isinstance(f, dict) else 1 for f in fields))
        return 1
    try:
        return max(1, np.dtype(data_type).itemsize)
    except Exception:  # noqa: BLE001 - numpy's parser raises TypeError, ValueError, SyntaxError... on hostile names
        return 1
