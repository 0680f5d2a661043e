"""zarr-python 3.1 and 3.0 on the files we write (issue #42, point 2).

dandi-cli pins zarr-python <= 3.1.5, so every DANDI environment has 3.1; 3.0 was the first zarr-python 3. Each
runs in its own venv (``.cache/venv-zarr31``, ``.cache/venv-zarr30``, created from the package index when missing,
both at once) on the full NWB fixture written by ``NWBZarrIO`` in both conventions, and reads every array of it with
a plain ``zarr.open_group``; the values must be exactly those zarr-python 3.4 (ours) reads from the same file.

zarr-python 3.1 reads everything: the consolidated copy in the root spells compounds as it knows them
(``format/documents/struct_spelling.py``). zarr-python 3.0 has no compound data type at all: it opens the file
with ``use_consolidated=False`` and reads every other array, and the root with its consolidated copy not at all
(docs/storage.md, §1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from full_nwbfile import make_full_nwbfile, make_manager
from peer_venvs import peer_venv, tool_env

from hdmf_zarr3 import NWBZarrIO

pytestmark = [pytest.mark.peer, pytest.mark.filterwarnings("ignore")]

VERSIONS = {"3.1": "zarr==3.1.5", "3.0": "zarr==3.0.10"}

#: Run by each zarr-python: every array of the file read with a plain ``zarr.open_group`` (argv: file, then
#: "consolidated": its members from the root's copy, or "listing": every array the directory holds, by path),
#: printed as JSON: path -> [numpy dtype, shape, the values' repr] or the error.
READ_EVERY_ARRAY = """
import json, os, sys, warnings
import numpy as np, zarr
warnings.simplefilter("ignore")
np.set_printoptions(threshold=sys.maxsize, precision=17)
found = {"version": zarr.__version__, "arrays": {}}
consolidated = sys.argv[2] == "consolidated"
try:
    root = zarr.open_group(sys.argv[1], mode="r", use_consolidated=consolidated)
    if consolidated:  # every member, from the consolidated copy
        members = [(path, lambda node=node: node) for path, node in root.members(max_depth=None)]
    else:  # every array the directory holds, each opened from its own zarr.json
        paths = [os.path.relpath(d, sys.argv[1]) for d, _, files in os.walk(sys.argv[1]) if "zarr.json" in files]
        members = [(path, lambda path=path: root[path]) for path in sorted(paths) if path != "."]
except Exception as exc:
    found["root"] = f"{type(exc).__name__}: {exc}"
    members = []
for path, node in members:
    try:
        array = node()
        if isinstance(array, zarr.Array):
            values = np.asarray(array[...])
            found["arrays"][path] = [str(values.dtype), list(values.shape), repr(values.tolist())]
    except Exception as exc:
        found["arrays"][path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(found))
"""


def _python(version: str) -> Path:
    return peer_venv(f"venv-zarr{version.replace('.', '')}", [VERSIONS[version]]) / "bin" / "python"


def _read(python: Path | str, path: Path, how: str) -> dict:
    env = tool_env()
    done = subprocess.run(
        [str(python), "-c", READ_EVERY_ARRAY, str(path), how], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _array_paths(path: Path) -> set[str]:
    """Every array of the file, from its own documents."""
    found = set()
    for document in path.rglob("zarr.json"):
        if json.loads(document.read_text()).get("node_type") == "array":
            found.add(document.parent.relative_to(path).as_posix())
    return found


@pytest.fixture(scope="module")
def pythons() -> dict[str, Path]:
    with ThreadPoolExecutor(len(VERSIONS)) as pool:  # (the two venvs are installed at once)
        return dict(zip(VERSIONS, pool.map(_python, VERSIONS)))


@pytest.fixture(scope="module", params=["hdmf_zarr3", "hdmf-zarr"])
def written(request, tmp_path_factory) -> tuple[Path, dict]:
    """The full fixture in one convention, and what zarr-python 3.4 (this environment's) reads of it."""
    path = tmp_path_factory.mktemp("older-zarr") / "full.nwb.zarr"
    with NWBZarrIO(str(path), mode="w", manager=make_manager(), convention=request.param) as io:
        io.write(make_full_nwbfile())
    ours = _read(sys.executable, path, "consolidated")
    assert "root" not in ours and set(ours["arrays"]) == _array_paths(path), ours.get("root")
    assert all(isinstance(v, list) for v in ours["arrays"].values()), ours["arrays"]
    return path, ours


def _compounds(arrays: dict) -> set[str]:
    return {p for p, v in arrays.items() if isinstance(v, list) and v[0].startswith("[(")}


def test_zarr_python_3_1_reads_every_array_as_3_4_does(pythons, written):
    path, ours = written
    theirs = _read(pythons["3.1"], path, "consolidated")
    assert theirs["version"] == "3.1.5" and "root" not in theirs, theirs.get("root")
    assert theirs["arrays"] == ours["arrays"]
    assert _compounds(ours["arrays"]), "the fixture holds compound arrays"


def test_zarr_python_3_0_reads_every_array_but_the_compounds_without_the_consolidated_copy(pythons, written):
    path, ours = written
    consolidated = _read(pythons["3.0"], path, "consolidated")
    assert consolidated["version"] == "3.0.10"
    assert "Invalid Zarr format 3 data_type" in consolidated["root"], consolidated  # no compound type in 3.0
    listing = _read(pythons["3.0"], path, "listing")
    assert "root" not in listing, listing["root"]
    compounds = _compounds(ours["arrays"])
    assert set(listing["arrays"]) == set(ours["arrays"])
    for name in compounds:
        assert "data_type" in listing["arrays"][name] or "struct" in listing["arrays"][name], listing["arrays"][name]
    assert {p: v for p, v in listing["arrays"].items() if p not in compounds} == {
        p: v for p, v in ours["arrays"].items() if p not in compounds
    }
