"""What fails while HDMF builds containers from a tree, as our typed errors naming the node.

HDMF's ``ObjectMapper.construct`` wraps whatever a container's constructor raises in its own
``ConstructError`` (which names the builder it was building): our own errors too (a chunk that does not
decode, a symlink leading out of the file, a file replaced while it is read), and what HDMF or PyNWB
refuse of a node's content (arguments of the wrong type or shape, tables whose parts disagree).
:func:`typed` unwraps ours (copied, the node HDMF was building added to the message, so ``.path`` and
the type stay what was raised) and turns HDMF's refusal of a file's content into a
:class:`~hdmf_zarr3.errors.CorruptStoreError` naming that node. A failure that is no ``ConstructError``
around a ``ValueError``, ``TypeError`` or ``LookupError`` (an ``AttributeError``, say: a bug of ours or
of HDMF, not the file) is left as it is.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator

from hdmf.build import Builder, ConstructError

from ...errors import CorruptStoreError, HdmfZarrError

#: The node a message of HDMF's names: ``builder root/intervals/trials/start_time``.
BUILDER_PATH = re.compile(r"builder (root(?:/[^\s,']*)?)")
CONTENT_ERRORS = (ValueError, TypeError, LookupError)  # what a node's content makes a constructor raise


def chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), outermost first, each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ if current.__cause__ is not None else current.__context__


def node_path(builder: Builder) -> str:
    """The absolute path of a builder in its file ("/" for the root)."""
    names = []
    while builder.parent is not None:
        names.append(builder.name)
        builder = builder.parent
    return "/" + "/".join(reversed(names))


def building(exc: BaseException) -> Builder | None:
    """The builder HDMF was building when ``exc`` was raised: the innermost ``ConstructError``'s."""
    found = None
    for link in chain(exc):
        if isinstance(link, ConstructError) and link.args and isinstance(link.args[0], Builder):
            found = link.args[0]
    return found


def ours_within(exc: BaseException) -> HdmfZarrError | None:
    """Our own error among ``exc`` and its causes (HDMF wraps what a dataset read raised), else ``None``."""
    return next((link for link in chain(exc) if isinstance(link, HdmfZarrError)), None)


def typed(exc: BaseException) -> HdmfZarrError | None:
    """The error to raise for ``exc``, raised while HDMF built containers (``None``: raise ``exc`` itself)."""
    links = list(chain(exc))
    ours = ours_within(exc)
    builder = building(exc)
    if ours is not None:
        return ours if builder is None else _while_building(ours, node_path(builder))
    if builder is None or not isinstance(links[-1], (ConstructError, *CONTENT_ERRORS)):
        return _unbuildable(exc)  # (HDMF's build machinery refusing with no builder it was building)
    data_type = builder.attributes.get("neurodata_type")
    what = f"a {data_type}" if isinstance(data_type, str) else "a container"
    innermost = links[-1]
    said = innermost.args[1] if isinstance(innermost, ConstructError) and len(innermost.args) > 1 else innermost
    reason = " ".join(str(said).split())
    reason = reason if len(reason) <= 300 else reason[:300] + "..."
    return CorruptStoreError(
        f"HDMF cannot build {what} from this node: {type(innermost).__name__}: {reason}",
        node_path(builder),
    )


def _while_building(ours: HdmfZarrError, node: str) -> HdmfZarrError:
    """A copy of ``ours`` (same type, ``.path`` and ``errno``) whose message also names the node HDMF was
    building; ``ours`` itself if it cannot be copied."""
    note = f" (while HDMF built the container of {node})"
    try:
        again = copy.copy(ours)
    except Exception:  # an error type whose arguments cannot be rebuilt: raised as it was
        return ours
    again.args = (f"{ours.args[0]}{note}" if ours.args else note.strip(" ()"), *ours.args[1:])
    if isinstance(ours, OSError) and isinstance(again, OSError):  # (errno is no argument: copy drops it)
        again.errno = ours.errno
    again.__cause__ = again.__context__ = None
    return again


def _unbuildable(exc: BaseException) -> CorruptStoreError | None:
    """``CorruptStoreError`` naming the node HDMF could not build a container from (``exc``, raised while HDMF's
    build machinery ran: a ``neurodata_type`` missing where the specification needs one, a field of the wrong
    kind), or ``None`` for an error raised elsewhere. The file holds what HDMF cannot build: its content is
    what is wrong (HDMF's error stays chained, and a ``ValueError`` caught before still catches it)."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(str(tb.tb_frame.f_globals.get("__name__", "")))
        tb = tb.tb_next
    if isinstance(exc, MemoryError) or not any(name.startswith("hdmf.build") for name in frames):
        return None  # (memory running out says nothing of the file)
    builder = exc.args[0] if isinstance(exc, ConstructError) and exc.args else None
    named = builder.path if isinstance(builder, Builder) else BUILDER_PATH.search(str(exc))
    where = named if isinstance(named, str) else named.group(1) if named is not None else "root"
    path = "/" + where.partition("/")[2]  # (HDMF's paths start at the root builder, "root")
    text = str(exc.args[1] if isinstance(exc, ConstructError) and len(exc.args) > 1 else exc)
    return CorruptStoreError(
        f"HDMF cannot build a container from what the file holds ({type(exc).__name__}: {text[-300:]})", path
    )
