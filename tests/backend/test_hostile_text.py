"""Issue #38: text is checked where it enters. A hypothesis fuzzer puts hostile text (NUL and other control
characters, lone surrogates, ``..``, slashes, URLs, percent escapes, reserved names, long names) into any string
of a file's node documents — a value or a key, in a node's own ``zarr.json`` or in the root's consolidated copy —
and reads everything (:func:`hostile_corpus.read_everything`: bounded, no side effects, and ``validate`` agreeing
with ``read()`` both ways). Every mutant reads, or gives our typed error; never a raw ``ValueError`` from the
file system, a ``KeyError``, a ``UnicodeEncodeError`` or HDMF's own errors.

``HDMF_ZARR3_TEXT_FUZZ=N`` runs N random examples instead of the derandomized few of the suite.
"""

from __future__ import annotations

import os
import shutil
import warnings

from hostile_corpus import deconsolidate, dump, load, read_everything, replace_text, text_fields
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdmf_zarr3 import HdmfZarrError

#: Texts a hostile writer would choose: what the file system, URLs, node paths and JSON treat specially.
HOSTILE_TEXTS = [
    "",
    ".",
    "..",
    "/",
    "a/b",
    "../../etc/passwd",
    "\x00",
    "a\x00b",
    "\n",
    "\x1b[2J",
    "\x7f",
    "\ud800",
    "\udc80",
    "%00",
    "%2e%2e",
    "file:///etc/passwd",
    "file:///tmp/u%20r%20l.zarr",
    "s3://bucket/x.zarr.zip",
    "https://example.invalid/x",
    "https://[::1/x",
    "http://h:99999/x",
    "__journal",
    "zarr.json",
    "c/0",
    "x" * 300,
    "é" * 200,
    "\u202e",
]
_CONTROL_HEAVY = st.text(st.characters(codec="utf-8") | st.sampled_from(["\x00", "\n", "/", ".", "\\"]), max_size=12)
TEXTS = st.sampled_from(HOSTILE_TEXTS) | _CONTROL_HEAVY


def _mutate(f, data, consolidated: bool) -> None:
    """Replace one to three texts: in the root's consolidated copy (``consolidated``), else in node documents."""
    nodes = ["/"] if consolidated else sorted(_nodes(f))
    if not consolidated:
        deconsolidate(f)
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        node = data.draw(st.sampled_from(nodes), label="node")
        doc = load(f, node)
        # every string value; of the keys, the names (attributes, consolidated members): a renamed structural
        # key (``zarr_format``) is a missing field, which the other hostile tests cover
        fields = [(path, key) for path, key in text_fields(doc) if key is None or _names(path)]
        field = data.draw(st.sampled_from(fields), label="field")
        original = field[1] if field[1] is not None else _value(doc, field[0])
        inserted = st.builds(lambda t, i, o=original: o[:i] + t + o[i:], TEXTS, st.integers(0, 40))
        text = data.draw(TEXTS | inserted, label="text")
        replace_text(doc, field, text)
        dump(f, node, doc)


def _nodes(f):
    return {
        "/" + p.parent.relative_to(f).as_posix() if p.parent != f else "/"
        for p in f.rglob("zarr.json")
        if "specifications" not in p.parts  # (test_hostile_specs.py fuzzes the cached specifications)
    }


def _names(path) -> bool:
    return bool(path) and path[-1] in ("attributes", "metadata") or "attributes" in path[:-1] and "value" not in path


def _value(doc, path):
    for step in path:
        doc = doc[step]
    return doc


@settings(
    max_examples=int(os.environ.get("HDMF_ZARR3_TEXT_FUZZ", "30")),
    deadline=None,
    derandomize=os.environ.get("HDMF_ZARR3_TEXT_FUZZ") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_text_anywhere_in_the_documents_reads_or_gives_our_typed_error(hostile_bases, tmp_path_factory, data):
    """The builder base file (links, references, compound rows, text) and, one example in four, the NWB base
    file read through PyNWB (neurodata types, namespaces, table columns)."""
    nwb = data.draw(st.sampled_from([False, False, False, True]), label="nwb")
    f = tmp_path_factory.mktemp("text") / "here" / "f.zarr"
    shutil.copytree(hostile_bases / ("base.nwb.zarr" if nwb else "base.zarr"), f)
    _mutate(f, data, consolidated=data.draw(st.booleans(), label="consolidated"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            read_everything(f, nwb=nwb)
        except HdmfZarrError:
            pass
        except TypeError as exc:  # NWBHDF5IO's contract, which NWBZarrIO.read keeps: no nwb_version, or one below 2
            assert nwb and "NWB version" in str(exc), exc
