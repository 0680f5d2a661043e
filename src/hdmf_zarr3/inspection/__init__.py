"""Looking inside a file without reading it into containers: :func:`validate` says what is wrong with it,
:func:`info` what it holds and how each array is stored. ``hdmf-zarr3 validate`` and ``hdmf-zarr3 info``
print what these return.

This room stands above the backend (it reads whole files through ``NWBZarrIO`` and ``ZarrIO``), beside
:mod:`hdmf_zarr3.dandi` (DANDI's rules); neither imports the other. Its door also offers
:func:`~hdmf_zarr3.format.data.terminal_text.printable`, how text read from a file is shown on a terminal
(control characters escaped), for the command line, which imports only the public API.
"""

from ..format.data import printable
from .file_info import FileInfo, NodeInfo, VirtualChunks, info
from .validation import Problem, ValidationReport, validate

__all__ = ["FileInfo", "NodeInfo", "Problem", "ValidationReport", "VirtualChunks", "info", "printable", "validate"]
