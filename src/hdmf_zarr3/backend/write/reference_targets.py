"""Turn HDMF reference targets (containers, builders, links) into reference records."""

from __future__ import annotations

from typing import Any

from hdmf.build import Builder, BuildManager, GroupBuilder, LinkBuilder, ReferenceBuilder

from ...errors import ReferenceError_, UnsupportedDataError
from ...format.data import Reference, references
from ...format.vocabulary import names as node_names
from ...storage.stores import locations


def _is_file_root(builder: Builder) -> bool:
    """A parentless group read as the root of its file (readers name it ``root``, located at ``/``)."""
    return isinstance(builder, GroupBuilder) and builder.name == "root" and builder.location in (None, "", "/")


class ReferenceEncoder:
    """Encodes references relative to the file whose root builder is ``root``.

    A target inside ``root``'s tree (or, during export, inside the file being exported) is in the same
    file (``source "."``); any other target is in the file its builder was read from, named relative
    to ``directory``.
    """

    def __init__(
        self, root: GroupBuilder, manager: BuildManager | None, directory: str | None, export_source: str | None = None
    ):
        self.root = root
        self.manager = manager
        self.directory = directory
        self.export_source = locations.absolute(export_source) if export_source else None
        self.root_oid = _object_id(root)

    def __call__(self, obj: Any, where: str | None = None) -> Reference:
        """The record of a reference (or link) to ``obj``; errors name ``where``, the referring node."""
        builder = self.builder_of(obj, where)
        top, names = builder, []
        while top.parent is not None:
            names.append(top.name)
            top = top.parent
        oid = _object_id(builder)
        if top is self.root:
            return Reference(node_names.SAME_FILE, "/" + "/".join(reversed(names)), oid, self.root_oid)
        if top is builder and _is_file_root(builder):
            path = "/"
        elif top is builder and builder.location is not None:
            path = node_names.join(node_names.normalize(builder.location), builder.name)
        else:
            path = "/" + "/".join(reversed(names))
        if builder.source is None:
            raise ReferenceError_(f"target {path!r} is outside this file and has no source file")
        if self.export_source is not None and locations.absolute(builder.source) == self.export_source:
            return Reference(node_names.SAME_FILE, path, oid, self.root_oid)
        top_oid = _object_id(top) if (top is not builder or path == "/") else None
        return Reference(self.relative(builder.source), path, oid, top_oid)

    def builder_of(self, obj: Any, where: str | None = None) -> Builder:
        if isinstance(obj, ReferenceBuilder):
            obj = obj.builder
        obj = link_target(obj, where)
        if isinstance(obj, Builder):
            return obj
        if self.manager is None:
            raise ReferenceError_(f"cannot reference {type(obj).__name__} without a BuildManager")
        built = self.manager.get_builder(obj) or self.manager.build(obj)
        if built is None:
            raise ReferenceError_(f"cannot build a reference to {obj!r}")
        return built

    def relative(self, source: str) -> str:
        """``source`` relative to this file's directory (POSIX separators); absolute if unknown. A location that
        reading would refuse (a control character) is refused here, before anything is written."""
        problem = references.text_problem(source, "the location of the other file")
        if problem is not None:
            raise UnsupportedDataError(f"{problem}: a link or reference to it could not be read back", source)
        return locations.relative_to(source, self.directory)


def link_target(obj: Any, where: str | None = None) -> Any:
    """The group or dataset a link leads to, through any chain of links (the format stores a chain as one
    link to its end, as HDMF builds a link to a linked container). HDMF's types forbid links to links, but
    a builder edited by hand can hold one: a link that leads back to itself is refused, naming it."""
    seen: list[LinkBuilder] = []
    while isinstance(obj, LinkBuilder):
        if any(obj is s for s in seen):
            if obj is seen[0] and len(seen) == 1:
                raise ReferenceError_("the link points to itself", where)
            chain = " -> ".join(builder_path(b) for b in [*seen[seen.index(obj) :], obj])
            raise ReferenceError_(f"the link leads to a cycle of links ({chain}), never to a group or dataset", where)
        seen.append(obj)
        obj = obj.builder
    return obj


def builder_path(builder: Builder) -> str:
    names = []
    while builder is not None and builder.parent is not None:
        names.append(builder.name)
        builder = builder.parent
    return "/" + "/".join(reversed(names))


def _object_id(builder: Builder) -> str | None:
    """A builder's ``object_id`` for a reference record; ids that are not strings are not recorded."""
    found = builder.attributes.get("object_id")
    return found if isinstance(found, str) else None
