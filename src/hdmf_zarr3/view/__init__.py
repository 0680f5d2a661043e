"""``hdmf-zarr3 view``: a local, read-only web viewer of an NWB Zarr file.

- :mod:`.server` -- the HTTP server on 127.0.0.1 (token, Host check, routing): :func:`serve`, :class:`ViewServer`.
- :mod:`.viewed_file` -- the file opened for viewing (the io, the NWBFile, nodes by path).
- :mod:`.tree`, :mod:`.tables`, :mod:`.series`, :mod:`.images` -- one view model each, plain data out.
- :mod:`.budget` -- what one request may read, checked from the metadata before reading.
- ``static/`` -- the page (HTML, CSS, JavaScript; no CDN).
"""

from .server import ViewServer, serve
from .viewed_file import ViewedFile

__all__ = ["ViewedFile", "ViewServer", "serve"]
