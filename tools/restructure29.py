"""Issue #29: move the modules of src/hdmf_zarr3 into rooms and rewrite every reference to them.

Usage (standard library only; run from anywhere)::

    python tools/restructure29.py [CHECKOUT] [--dry-run] [--ruff PATH]

What it does, in order, and prints as it goes:

1. refuses a dirty tree (``git status --porcelain`` not empty);
2. rewrites every reference to a moved module in src/, tests/, benchmarks/, docs/ (not docs/_plans/),
   tutorials/, scripts/ and pyproject.toml (not CHANGELOG.md: its entries keep their names):
   ``from``-imports (relative ones recomputed from the importing module's new place,
   ``from pkg import module`` split per new package, with ``as old_name`` when the module was
   renamed), dotted names (``hdmf_zarr3.storage.locks``, ``storage.locks`` in import-linter contracts
   and ``:mod:`` roles, monkeypatch targets in strings) and paths (``storage/locks.py``);
3. ``git mv`` each module (``MOVES`` below) and writes each new room's ``__init__.py``;
4. copies the files of ``tools/restructure29_files/`` into the tree (the doors test);
5. lists modules the table does not name (added on main after the table was written): they stay where
   they are and must be placed by hand (or added to ``MOVES``);
6. with ``--ruff``, sorts imports and formats the files it changed.

Idempotent: a move whose destination exists is skipped, and a reference is rewritten only to a module
the table moves away from a name that is not, after the move, a package of its own (``storage/stores.py``
becomes the room ``storage/stores/``: a second run leaves ``hdmf_zarr3.storage.stores`` alone).
The plan, module by module, is docs/_plans/rooms.md.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

PKG = "hdmf_zarr3"
SCOPES = ("src", "tests", "benchmarks", "docs", "tutorials", "scripts")
TEXT_SUFFIXES = {".py", ".md", ".rst", ".toml", ".txt", ".cfg", ".ipynb"}

# old module (dotted, below hdmf_zarr3) -> new module. The why of each line is in docs/_plans/rooms.md.
MOVES: dict[str, str] = {
    # backend/zarrio: ZarrIO, NWBZarrIO and what they hand to their collaborators
    "backend.io": "backend.zarrio.zarr_io",
    "backend.io_reading": "backend.zarrio.reading",
    "backend.io_writing": "backend.zarrio.writing",
    "backend.opening": "backend.zarrio.opening",
    "backend.hdmf_zarr_api": "backend.zarrio.hdmf_zarr_api",
    "backend.nwb": "backend.zarrio.nwb",
    "backend.contexts": "backend.zarrio.contexts",
    "backend.closed_files": "backend.zarrio.closed_files",
    # backend/read: one pass over the node documents into builders
    "backend.reader": "backend.read.reader",
    "backend.externals": "backend.read.externals",
    "backend.integrity": "backend.read.integrity",
    # backend/write: one walk into a plan, the plan stored
    "backend.writer": "backend.write.writer",
    "backend.write_plan": "backend.write.plan",
    "backend.streaming": "backend.write.streaming",
    "backend.parallel": "backend.write.parallel",
    "backend.pending_references": "backend.write.pending_references",
    "backend.reference_targets": "backend.write.reference_targets",
    "backend.virtual_writes": "backend.write.virtual",
    "backend.layout_choice": "backend.write.layout_choice",
    # backend/datasets: the lazy dataset and what changes it
    "backend.datasets": "backend.datasets.lazy",
    "backend.dataset_info": "backend.datasets.info",
    "backend.dataset_changes": "backend.datasets.changes",
    "backend.resolving_datasets": "backend.datasets.resolving",
    "backend.appended_rows": "backend.datasets.appended_rows",
    # backend/settings: ZarrDataIO
    "backend.dataio": "backend.settings.dataio",
    "backend.dataio_bridge": "backend.settings.bridge",
    "backend.dataio_sources": "backend.settings.sources",
    # backend/specs: the cached specifications
    "backend.spec_cache": "backend.specs.cache",
    "backend.spec_copy": "backend.specs.copying",
    # storage/stores: opening a store, its handle, its documents
    "storage.stores": "storage.stores.opening",
    "storage.handle": "storage.stores.handle",
    "storage.options": "storage.stores.options",
    "storage.locations": "storage.stores.locations",
    "storage.local_paths": "storage.stores.local_paths",
    "storage.nodes": "storage.stores.nodes",
    "storage.document_cache": "storage.stores.document_cache",
    "storage.listing": "storage.stores.listing",
    "storage.v2": "storage.stores.v2",
    "storage.pools": "storage.stores.pools",
    "storage.zarr_adapter": "storage.stores.zarr_adapter",
    # storage/codecs: chunks encoded and decoded without zarr's pipeline
    "storage.direct": "storage.codecs.direct_write",
    "storage.direct_read": "storage.codecs.direct_read",
    "storage.chunks": "storage.codecs.single_chunk",
    "storage.decoding": "storage.codecs.decoding",
    "storage.chunkwise": "storage.codecs.chunkwise",
    "storage.missing_chunks": "storage.codecs.missing_chunks",
    "storage.array_check": "storage.codecs.array_check",
    # storage/writes: how many objects are stored at once
    "storage.local_writes": "storage.writes.local",
    "storage.row_appends": "storage.writes.row_appends",
    "storage.task_groups": "storage.writes.task_groups",
    "storage.unit_writer": "storage.writes.unit_writer",
    # storage/safety: nothing lost, nothing read that should not be
    "storage.locks": "storage.safety.locks",
    "storage.lock_places": "storage.safety.lock_places",
    "storage.living_store": "storage.safety.living_store",
    "storage.journal": "storage.safety.journal",
    "storage.recovery": "storage.safety.recovery",
    "storage.guarded": "storage.safety.guarded",
    "storage.rollback": "storage.safety.rollback",
    "storage.replacing": "storage.safety.replacing",
    "storage.self_overwrite": "storage.safety.self_overwrite",
    "storage.open_files": "storage.safety.open_files",
    "storage.failures": "storage.safety.failures",
    "storage.audit": "storage.safety.audit",
    # storage/remote: object stores and web servers
    "storage.remote": "storage.remote.object_stores",
    "storage.remote_errors": "storage.remote.errors",
    "storage.http_sources": "storage.remote.http_sources",
    "storage.obstore_keys": "storage.remote.obstore_keys",
    "storage.ranged_file": "storage.remote.ranged_file",
    "storage.generations": "storage.remote.generations",
    # storage/virtual and storage/zip
    "storage.virtual_repo": "storage.virtual.repo",
    "storage.virtual_sources": "storage.virtual.sources",
    "storage.zipped": "storage.zip.zipped",
    "storage.zip_overlay": "storage.zip.overlay",
    # format/data: data types and values
    "format.dtypes": "format.data.dtypes",
    "format.values": "format.data.values",
    "format.references": "format.data.references",
    "format.safe_pickle": "format.data.safe_pickle",
    "format.array_encoding": "format.data.array_encoding",
    "format.selection": "format.data.selection",
    # format/documents: the zarr.json documents and what a file's tree says
    "format.documents": "format.documents.zarr_json",
    "format.array_view": "format.documents.array_view",
    "format.consolidated": "format.documents.consolidated",
    "format.completion": "format.documents.completion",
    "format.orphans": "format.documents.orphans",
    "format.limits": "format.documents.limits",
    "format.names": "format.documents.names",
    "format.dimension_names": "format.documents.dimension_names",
    # format/layout: every layout rule
    "format.layout_policy": "format.layout.policy",
    "format.layout_types": "format.layout.types",
    "format.hdf5_layout": "format.layout.hdf5",
    "format.relayout": "format.layout.relayout",
    "format.chunkless": "format.layout.chunkless",
    "format.stored_chunks": "format.layout.stored_chunks",
    "format.codec_rules": "format.layout.codec_rules",
    "format.tensorstore_rules": "format.layout.tensorstore_rules",
    "format.virtual_codecs": "format.layout.virtual_codecs",
    # format/specs: cached specifications as stored
    "format.speccache": "format.specs.layout",
    "format.spec_check": "format.specs.check",
    "format.spec_dtypes": "format.specs.dtypes",
    # h5py_adapters: h5py below the backend; hdf5/ keeps only the conversion
    "hdf5.regions": "h5py_adapters.regions",
    "hdf5.relayout_text": "h5py_adapters.relayout_text",
    "hdf5.virtual_chunks": "h5py_adapters.virtual_chunks",
    "hdf5.destination": "h5py_adapters.destination",
    "hdf5.source": "h5py_adapters.source",
}

ROOM_DOCS: dict[str, str] = {
    "backend.zarrio": "ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated below.",
    "backend.read": "Reading a builder tree: one pass over the node documents, and the files it links into.",
    "backend.write": "Writing a builder tree: one walk into a WritePlan, then the plan stored in batches.",
    "backend.datasets": "Lazy, h5py-like datasets handed to HDMF on read, and what changes them in place.",
    "backend.settings": "ZarrDataIO: per-dataset storage settings, and what it takes from hdmf-zarr users.",
    "backend.specs": "The cached specifications: read, written, and kept across an export or conversion.",
    "storage.stores": "Opening a store: what a user passes becomes a StoreHandle with its documents.",
    "storage.codecs": "Chunks and shards encoded and decoded directly, without zarr's per-array machinery.",
    "storage.writes": "Many keys stored at once: local directories, appended rows, whole write units.",
    "storage.safety": "Nothing lost, nothing read that should not be: locks, journal, rollback, recovery.",
    "storage.remote": "Object stores and web servers: opening, options, retries, one version per reader.",
    "storage.virtual": "Icechunk repositories whose chunks are read in place from HDF5 files.",
    "storage.zip": "Single-file stores: a zip replaced atomically or changed in place.",
    "format.data": "Data types and values: how HDMF values become stored arrays and JSON.",
    "format.documents": "The zarr.json documents: what a node may declare and what a file's tree says.",
    "format.layout": "Every layout rule: chunks, shards and codecs, default, from HDF5, or refused.",
    "format.specs": "Cached specifications as stored, and checked before HDMF sees them.",
    "h5py_adapters": "h5py below the backend: region references, layout text, virtual chunks, destinations.",
}

SEGMENTS = re.compile(r'(?:"(backend|storage|format|hdf5)"|\b(BACKEND|STORAGE|FORMAT|HDF5)) / "(\w+)\.py"')
DOTTED = re.compile(r"(?<![\w])(hdmf_zarr3\.)?((?:backend|storage|format|hdf5)(?:\.\w+)+)")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _file(src: Path, dotted: str) -> Path:
    return src.joinpath(*dotted.split(".")).with_suffix(".py")


def _is_package(src: Path, dotted: str) -> bool:
    return src.joinpath(*dotted.split("."), "__init__.py").is_file()


class Mover:
    """The table applied to one checkout."""

    def __init__(self, root: Path, dry_run: bool) -> None:
        self.root = root
        self.src = root / "src" / PKG
        self.dry_run = dry_run
        # a mapping is active unless it has been applied and its old name is now a package (idempotence)
        self.pending = {old: new for old, new in MOVES.items() if _file(self.src, old).is_file()}
        self.active = {
            old: new
            for old, new in MOVES.items()
            if old in self.pending or not self.src.joinpath(*old.split(".")).is_dir()
        }
        self.changed: list[Path] = []

    # -- names ------------------------------------------------------------------------------------------
    def map_name(self, dotted: str) -> str:
        """``a.b.c`` (below hdmf_zarr3) with its longest moved prefix replaced."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in self.active:
                return ".".join([self.active[head], *parts[i:]])
        return dotted

    def _sub_dotted(self, match: re.Match[str]) -> str:
        return (match.group(1) or "") + self.map_name(match.group(2))

    def _sub_path(self, text: str) -> str:
        for old, new in self.active.items():
            old_path, new_path = old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"
            text = re.sub(rf"(?<![\w/]){re.escape(old_path)}(?![\w])", new_path, text)
        return text

    def _sub_segments(self, match: re.Match[str]) -> str:
        """``"storage" / "handle.py"`` -> ``"storage" / "stores" / "handle.py"``."""
        layer = match.group(1) or match.group(2).lower()
        old = f"{layer}.{match.group(3)}"
        if old not in self.active:
            return match.group(0)
        top, *rooms, stem = self.active[old].split(".")
        quoted = [f'"{part}"' for part in [*rooms, stem + ".py"]]
        if match.group(1):
            return " / ".join([f'"{top}"', *quoted])
        # a variable (FORMAT = PACKAGE / "format") stays when the module stays in its layer
        return " / ".join([match.group(2), *quoted]) if top == layer else match.group(0)

    def rewrite_text(self, text: str) -> str:
        text = SEGMENTS.sub(self._sub_segments, text)
        return self._sub_path(DOTTED.sub(self._sub_dotted, text))

    # -- python ---------------------------------------------------------------------------------------
    def module_of(self, path: Path) -> tuple[str, bool] | None:
        """The dotted name (below hdmf_zarr3, '' for the root) of a file of src/, and whether it is an __init__."""
        try:
            rel = path.relative_to(self.src).with_suffix("")
        except ValueError:
            return None
        parts = list(rel.parts)
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        return ".".join(parts), is_init

    @staticmethod
    def _package(module: str, is_init: bool) -> list[str]:
        parts = module.split(".") if module else []
        return parts if is_init else parts[:-1]

    def _render(self, target: str, relative: bool, here_pkg: list[str]) -> tuple[int, str]:
        """(level, module) of ``from`` for a target below hdmf_zarr3, relative to the package here_pkg."""
        if not relative:
            return 0, ".".join([PKG, *target.split(".")]) if target else PKG
        tparts = target.split(".") if target else []
        common = 0
        while common < min(len(here_pkg), len(tparts)) and here_pkg[common] == tparts[common]:
            common += 1
        return len(here_pkg) - common + 1, ".".join(tparts[common:])

    def rewrite_python(self, path: Path, text: str) -> str:
        """Every ``from`` import rewritten through the table; the rest through rewrite_text."""
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return self.rewrite_text(text)
        where = self.module_of(path)
        old_pkg = self._package(*where) if where else []
        if where:
            new_mod = self.map_name(where[0]) if not where[1] else where[0]
            new_pkg = self._package(new_mod, where[1])
        else:
            new_pkg = []
        lines = text.splitlines(keepends=True)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        spans: list[tuple[int, int, str]] = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                if not where:
                    continue
                base_parts = old_pkg[: len(old_pkg) - node.level + 1] if node.level > 1 else list(old_pkg)
                base = ".".join([*base_parts, *(node.module.split(".") if node.module else [])])
            elif node.module == PKG or (node.module or "").startswith(PKG + "."):
                base = node.module[len(PKG) + 1 :] if node.module != PKG else ""
            else:
                continue
            groups: dict[str, list[str]] = {}
            moved_names = False
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if full in self.active:
                    moved_names = True
                    new_full = self.active[full]
                    target, name = new_full.rsplit(".", 1)
                    local = alias.asname or alias.name
                    groups.setdefault(target, []).append(name if name == local else f"{name} as {local}")
                else:
                    target = self.map_name(base) if base else base
                    groups.setdefault(target, []).append(
                        alias.name if not alias.asname else f"{alias.name} as {alias.asname}"
                    )
            rendered = [(self._render(target, bool(node.level), new_pkg), names) for target, names in groups.items()]
            if not moved_names and len(rendered) == 1 and rendered[0][0] == (node.level, node.module or ""):
                continue
            indent = " " * node.col_offset
            statements = []
            for (level, module), names in rendered:
                statements.append(f"from {'.' * level}{module} import {', '.join(names)}")
            start = offsets[node.lineno - 1] + node.col_offset
            end = offsets[node.end_lineno - 1] + node.end_col_offset
            spans.append((start, end, ("\n" + indent).join(statements)))
        out, last = [], 0
        for start, end, new in sorted(spans):
            out.append(self.rewrite_text(text[last:start]))
            out.append(new)
            last = end
        out.append(self.rewrite_text(text[last:]))
        return "".join(out)

    # -- the steps --------------------------------------------------------------------------------------
    def files(self) -> list[Path]:
        # CHANGELOG.md keeps the names each entry was written with; docs/_plans/ is the plan, old names included
        found = [self.root / "pyproject.toml"]
        for scope in SCOPES:
            base = self.root / scope
            if base.is_dir():
                found += [p for p in base.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES]
        skip = ("/.venv/", "/_build/", "/.git/", "/node_modules/", "/docs/_plans/")
        return [p for p in found if p.is_file() and not any(s in str(p) for s in skip)]

    def rewrite_all(self) -> None:
        for path in self.files():
            text = path.read_text(encoding="utf-8")
            new = self.rewrite_python(path, text) if path.suffix == ".py" else self.rewrite_text(text)
            if new != text:
                print(f"rewrite {path.relative_to(self.root)}")
                self.changed.append(path)
                if not self.dry_run:
                    path.write_text(new, encoding="utf-8")

    def move_all(self) -> None:
        for old, new in self.pending.items():
            dst = _file(self.src, new)
            if dst.exists():
                print(f"skip    {old} (both {old} and {new} exist: resolve by hand)")
                continue
            for i in range(1, len(new.split("."))):
                room = ".".join(new.split(".")[:i])
                init = self.src.joinpath(*room.split("."), "__init__.py")
                if not init.exists():
                    print(f"create  {init.relative_to(self.root)}")
                    if not self.dry_run:
                        init.parent.mkdir(parents=True, exist_ok=True)
                        doc = ROOM_DOCS.get(room, room)
                        init.write_text(f'"""{doc}"""\n\n__all__: list[str] = []\n', encoding="utf-8")
                        _git(self.root, "add", str(init))
                    self.changed.append(init)
            print(f"git mv  {old} -> {new}")
            if not self.dry_run:
                _git(self.root, "mv", str(_file(self.src, old)), str(dst))
            self.changed.append(dst)

    def copy_files(self) -> None:
        extra = Path(__file__).resolve().parent / "restructure29_files"
        for src in sorted(extra.rglob("*")) if extra.is_dir() else []:
            if src.is_dir():
                continue
            dst = self.root / src.relative_to(extra)
            if dst.exists() and dst.read_bytes() == src.read_bytes():
                continue
            print(f"copy    {dst.relative_to(self.root)}")
            if not self.dry_run:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                _git(self.root, "add", str(dst))
            self.changed.append(dst)

    def unplaced(self) -> list[str]:
        placed = set(MOVES.values())
        left = []
        for layer in ("backend", "storage", "format", "hdf5"):
            for path in sorted((self.src / layer).glob("*.py")):
                if path.name == "__init__.py":
                    continue
                name = f"{layer}.{path.stem}"
                if name not in placed and name not in {"hdf5.conversion", "hdf5.virtual_conversion"}:
                    left.append(name)
        return left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", default=".", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    parser.add_argument("--ruff", help="a ruff executable: sort imports and format the files changed")
    args = parser.parse_args(argv)
    root = Path(_git(args.checkout, "rev-parse", "--show-toplevel").strip())
    if _git(root, "status", "--porcelain").strip():
        print(f"refused: {root} has uncommitted changes (commit or stash them first)", file=sys.stderr)
        return 2
    mover = Mover(root, args.dry_run)
    mover.rewrite_all()
    mover.move_all()
    mover.copy_files()
    for name in mover.unplaced():
        print(f"unplaced {name}: not in MOVES, left where it is (place it by hand)")
    changed = sorted({str(p) for p in mover.changed if p.suffix == ".py" and p.exists()})
    if args.ruff and changed and not args.dry_run:
        subprocess.run([args.ruff, "check", "--select", "I", "--fix", "-q", *changed], check=False)
        subprocess.run([args.ruff, "format", "-q", *changed], check=False)
    print(f"done: {len(mover.pending)} modules moved, {len(set(mover.changed))} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
