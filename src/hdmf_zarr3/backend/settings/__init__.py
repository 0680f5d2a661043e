"""ZarrDataIO: per-dataset storage settings, what it takes from hdmf-zarr users, and the layout they choose."""

from . import bridge, hdmf_zarr_inputs, layout_choice
from .dataio import ZarrDataIO, codec_json
from .layout_choice import AUTO, POLICY, checked, from_h5py, from_zarr_settings

__all__ = [
    "AUTO",
    "POLICY",
    "ZarrDataIO",
    "bridge",
    "checked",
    "codec_json",
    "from_h5py",
    "from_zarr_settings",
    "hdmf_zarr_inputs",
    "layout_choice",
]
