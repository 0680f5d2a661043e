"""ZarrIO and NWBZarrIO: opening, reading, writing, hdmf-zarr's API, delegated below."""

from typing import TYPE_CHECKING

from ..._doors import door

if TYPE_CHECKING:
    from .closed_files import handle_for
    from .contexts import DatasetContext, DatasetOwner, ForeignZarrFile, ReadContext, WriteContext
    from .nwb import NWBZarrIO
    from .zarr_io import ZarrIO

__all__ = [
    "DatasetContext",
    "DatasetOwner",
    "ForeignZarrFile",
    "NWBZarrIO",
    "ReadContext",
    "WriteContext",
    "ZarrIO",
    "handle_for",
]
__getattr__ = door(__name__, __file__)
