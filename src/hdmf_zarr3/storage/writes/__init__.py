"""Many keys stored at once: local directories, appended rows, whole write units."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from . import row_appends
    from .local import finish_cleanup, local_root, put_files, remove_tree
    from .row_appends import RowAppend
    from .task_groups import Group, ShieldingExecutor, install, settled, until_done
    from .unit_writer import UnitWriter

__all__ = [
    "Group",
    "RowAppend",
    "ShieldingExecutor",
    "UnitWriter",
    "finish_cleanup",
    "install",
    "local_root",
    "put_files",
    "remove_tree",
    "row_appends",
    "settled",
    "until_done",
]
__getattr__ = door(__name__, __file__)
