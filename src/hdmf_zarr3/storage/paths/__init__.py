"""Every path a write touches, one safe way: below the file's real root, never through a symlink, only
regular files and directories, never waiting on a FIFO; side files beside the file created exclusively."""

from .confined import RootDirectory, under
from .file_ops import split_key, temporary_name, write_all
from .refusals import AUDIT_EVENT, kind_of
from .side_files import (
    create_side_file,
    link_side_file,
    open_side_file,
    private_directory,
    remove_private_directory,
    remove_side_file,
    replace_side_file,
    side_stem,
)

__all__ = [
    "AUDIT_EVENT",
    "RootDirectory",
    "create_side_file",
    "kind_of",
    "link_side_file",
    "open_side_file",
    "private_directory",
    "remove_private_directory",
    "remove_side_file",
    "replace_side_file",
    "side_stem",
    "split_key",
    "temporary_name",
    "under",
    "write_all",
]
