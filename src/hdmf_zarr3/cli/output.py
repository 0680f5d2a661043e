"""What the commands print: every line escaped for the terminal, warnings too.

Lines the commands print hold names, types, attribute values and messages from the file; each goes through
:func:`~hdmf_zarr3.format.data.terminal_text.printable` (control characters and bidirectional overrides shown
as escapes; offered by the :mod:`hdmf_zarr3.inspection` door, as the CLI imports only the public API), so a
file cannot erase, rewrite or reorder what a command says about it. ``--json`` prints JSON, whose
encoder escapes the same characters.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

from ..inspection import printable


def say(*parts: Any, file: TextIO | None = None, flush: bool = False) -> None:
    """Print ``parts`` (joined by spaces) as one line, escaped for the terminal."""
    print(printable(" ".join(str(part) for part in parts)), file=file or sys.stdout, flush=flush)


@contextlib.contextmanager
def escaped_warnings() -> Iterator[None]:
    """Warnings shown while a command runs (an incomplete file's nodes, HDMF's) are escaped line by line."""
    original = warnings.formatwarning

    def formatwarning(message: Any, category: Any, filename: str, lineno: int, line: str | None = None) -> str:
        return original(printable(message), category, filename, lineno, line)  # the message is the file's part

    warnings.formatwarning = formatwarning
    try:
        yield
    finally:
        warnings.formatwarning = original
