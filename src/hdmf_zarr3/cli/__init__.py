"""The ``hdmf-zarr3`` command line: move NWB files between HDF5 and Zarr, and look inside them.

Each sub-command lives in its own module (``<command>_command.py``) and adds its parser with
``add_parser(subparsers)``; the parsed arguments carry the function that runs it. Errors are reported in
one line (the error type and its message, which names the file and the node), with the traceback only
under ``--debug``.
Output cut short by its reader (``hdmf-zarr3 info | head``) ends the command quietly with status 1,
as Python's documentation recommends for a closed pipe (SIGPIPE is ignored by Python).
"""

from .command_line import build_parser, main

__all__ = ["build_parser", "main"]
