"""HDMF builders made for a read, without HDMF's argument checks per call.

A read of a file of many small parts makes thousands of builders. HDMF's constructors check every
argument through docval, three checked calls per builder (the class, its base, theirs), and
``set_group``/``set_dataset``/``set_attribute`` one or two more per child or name: about half of
``read_builder()`` for a file of 1,500 nodes. The reader knows its arguments are right (names are
strings from the file, children unique by construction), so here:

- a builder is made by copying the state HDMF's public constructor gives a probe builder, with this
  builder's name, source, location (and a dataset's data, dtype and dimension labels) put in the places
  the probe shows them to take;
- a child is added, and a group's attributes set, as ``set_group``/``set_dataset``/``set_attribute``
  add them, refusing the same name clashes (typed: a file that clashes is corrupt).

Nothing here assumes HDMF's private attribute names: at import, builders made both ways are compared,
field by field; if HDMF's builders ever differ from what this makes (a new field, a field that is not
a plain value), the public API is used instead (:data:`FAST` is then False).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hdmf.build import Builder, DatasetBuilder, GroupBuilder

from ...errors import CorruptStoreError

_IMMUTABLE = (type(None), bool, int, float, str, tuple)


def _kinds() -> tuple[str, str, str]:
    """The values a GroupBuilder's public ``obj_type`` gives the name of an attribute, a group and a
    dataset (asked of HDMF, not assumed)."""
    probe = GroupBuilder("probe")
    probe.set_attribute("a", 0)
    probe.set_group(GroupBuilder("g"))
    probe.set_dataset(DatasetBuilder("d"))
    return probe.obj_type["a"], probe.obj_type["g"], probe.obj_type["d"]


_ATTRIBUTE_KIND, _GROUP_KIND, _DATASET_KIND = _kinds()


def set_group_attributes(builder: GroupBuilder, attrs: dict[str, Any], path: str) -> None:
    """What ``builder.set_attribute`` does for each of ``attrs``, without its two docval calls per name.

    A name that one of the group's groups, datasets or links (at ``path``) already uses is refused, as
    HDMF refuses it, with a :class:`CorruptStoreError`."""
    kinds = builder.obj_type
    for key in attrs:
        if kinds.get(key, _ATTRIBUTE_KIND) != _ATTRIBUTE_KIND:
            raise CorruptStoreError(f"attribute {key!r} has the name of one of the group's {kinds[key]}", path)
    builder.attributes.update(attrs)
    kinds.update(dict.fromkeys(attrs, _ATTRIBUTE_KIND))


class _Recipe:
    """How the public constructor of ``cls`` lays out a builder's state: which fields (instance
    attributes, dict items) hold which argument, and what every other field starts as."""

    def __init__(self, cls: type[Builder], make: Callable[[dict[str, Any]], Any], markers: dict[str, Any]):
        self.cls = cls
        try:
            probe = make(markers)
        except Exception:  # noqa: BLE001 - HDMF's constructor changed: use it, do not copy it
            probe = None
        fields, items = (vars(probe), dict(probe)) if probe is not None else ({}, {})
        self.slots = {arg: [k for k, v in fields.items() if v is m] for arg, m in markers.items()}
        self.item_slots = {arg: [k for k, v in items.items() if v is m] for arg, m in markers.items()}
        taken = {k for ks in self.slots.values() for k in ks}
        taken_items = {k for ks in self.item_slots.values() for k in ks}
        self.fields = {k: v for k, v in fields.items() if k not in taken}
        self.items = {k: v for k, v in items.items() if k not in taken_items}
        # a field other than an empty container or a plain value cannot be copied faithfully
        plain = all(_fresh_able(v) for v in (*self.fields.values(), *self.items.values()))
        self.usable = probe is not None and plain and all(self.slots[a] or self.item_slots[a] for a in markers)

    def make(self, args: dict[str, Any]) -> Any:
        builder = dict.__new__(self.cls)  # (a dict subclass: what its constructor starts from)
        state = {k: (type(v)() if isinstance(v, (dict, list)) else v) for k, v in self.fields.items()}
        items = {k: (type(v)() if isinstance(v, (dict, list)) else v) for k, v in self.items.items()}
        for arg, value in args.items():
            state.update(dict.fromkeys(self.slots[arg], value))
            items.update(dict.fromkeys(self.item_slots[arg], value))
        vars(builder).update(state)
        dict.update(builder, items)
        return builder


def _fresh_able(value: Any) -> bool:
    return isinstance(value, _IMMUTABLE) or (type(value) in (dict, list) and not value)


def _public_group(args: dict[str, Any]) -> GroupBuilder:
    builder = GroupBuilder(args["name"], source=args["source"])
    builder.location = args["location"]
    return builder


def _public_dataset(args: dict[str, Any]) -> DatasetBuilder:
    builder = DatasetBuilder(
        args["name"],
        data=args["data"],
        dtype=args["dtype"],
        source=args["source"],
        dimension_labels=args["dimension_labels"],
    )
    builder.location = args["location"]
    return builder


def _markers(*names: str) -> dict[str, Any]:
    """A distinct value per argument, found by identity in the probe's state."""
    values = {"dimension_labels": ("probe-label",), "data": ["probe-data"]}
    return {n: values.get(n, f"probe-{n}") for n in names}


_GROUP = _Recipe(GroupBuilder, _public_group, _markers("name", "source", "location"))
_DATASET = _Recipe(
    DatasetBuilder, _public_dataset, _markers("name", "source", "location", "data", "dtype", "dimension_labels")
)


def _parent_slot() -> str | None:
    """The field in which ``set_group`` keeps a child's parent (None: not one field). Whatever else it
    changes on a child, the probe trees of :func:`_agrees` show."""
    parent, child = GroupBuilder("parent"), GroupBuilder("child")
    parent.set_group(child)
    slots = [k for k, v in vars(child).items() if v is parent]
    return slots[0] if len(slots) == 1 else None


_PARENT = _parent_slot()


def new_group(name: str, source: str | None, location: str, fast: bool | None = None) -> GroupBuilder:
    """``GroupBuilder(name, source=source)`` at ``location`` (``fast``: made here, default :data:`FAST`)."""
    args = {"name": name, "source": source, "location": location}
    return _GROUP.make(args) if (FAST if fast is None else fast) else _public_group(args)


def new_dataset(
    name: str,
    data: Any,
    dtype: Any,
    source: str | None,
    location: str,
    dimension_labels: tuple[str, ...] | None,
    fast: bool | None = None,
) -> DatasetBuilder:
    """``DatasetBuilder(name, data=data, dtype=dtype, source=source, dimension_labels=...)`` at ``location``.

    Through HDMF's constructor when ``data`` is itself a builder (HDMF then changes the dtype)."""
    args = {
        "name": name,
        "data": data,
        "dtype": dtype,
        "source": source,
        "location": location,
        "dimension_labels": dimension_labels,
    }
    if not (FAST if fast is None else fast) or isinstance(data, (GroupBuilder, DatasetBuilder)):
        return _public_dataset(args)
    return _DATASET.make(args)


def add_child(group: GroupBuilder, child: GroupBuilder | DatasetBuilder, fast: bool | None = None) -> None:
    """``group.set_group(child)`` or ``group.set_dataset(child)``.

    Through HDMF's method for anything unusual: a name the group already uses (HDMF raises or keeps
    the child it has), a child that has a parent, or one whose source differs (HDMF then changes it)."""
    is_group = isinstance(child, GroupBuilder)
    usual = child.name not in group.obj_type and child.parent is None and child.source == group.source
    if not (FAST if fast is None else fast) or not usual:
        (group.set_group if is_group else group.set_dataset)(child)
        return
    kind = _GROUP_KIND if is_group else _DATASET_KIND
    dict.__getitem__(group, kind)[child.name] = child
    group.obj_type[child.name] = kind
    vars(child)[_PARENT] = group


def _same(a: Any, b: Any) -> bool:
    """Whether builders ``a`` and ``b`` have the same fields and items, children compared in turn."""
    if type(a) is not type(b) or vars(a).keys() != vars(b).keys() or dict(a).keys() != dict(b).keys():
        return False
    for k, v in vars(a).items():
        w = vars(b)[k]
        if isinstance(v, (GroupBuilder, DatasetBuilder)):  # the parent: by name, not again in full
            if type(w) is not type(v) or v.name != w.name:
                return False
        elif v != w or (isinstance(v, (dict, list)) and v is w):
            return False
    for k, v in dict(a).items():
        w = dict.__getitem__(b, k)
        if isinstance(v, dict) and any(isinstance(c, (GroupBuilder, DatasetBuilder)) for c in v.values()):
            if v.keys() != w.keys() or not all(_same(v[n], w[n]) for n in v):
                return False
        elif v is not w and v != w:
            return False
    return True


def _probe_tree(fast: bool) -> GroupBuilder:
    root = new_group("root", "src", "/", fast)
    inner = new_group("g", "src", "/", fast)
    add_child(root, inner, fast)
    add_child(inner, new_dataset("d", _PROBE_DATA, "int32", "src", "/g", ("t",), fast), fast)
    add_child(root, new_dataset("e", None, None, "src", "/", None, fast), fast)
    set_group_attributes(inner, {"a": 1}, "/g")
    return root


_PROBE_DATA = ["x"]


def _agrees() -> bool:
    """Whether builders made here match those HDMF's public API makes (a small tree of each kind)."""
    if not (_GROUP.usable and _DATASET.usable and _PARENT is not None):
        return False
    try:
        ours, public = _probe_tree(True), _probe_tree(False)
        inner = ours.groups["g"]
        behaves = inner.parent is ours and inner.path == "root/g" and inner.datasets["d"].data is _PROBE_DATA
        return behaves and _same(ours, public)
    except Exception:  # noqa: BLE001 - any surprise means: use HDMF's API
        return False


#: Whether builders are made here (True) or through HDMF's public API (HDMF's builders changed).
FAST: bool = _agrees()
