"""ZarrDataIO: per-dataset storage settings, what it takes from hdmf-zarr users, and the layout they choose."""

from . import bridge, dataio_arguments, hdmf_zarr_inputs, layout_choice
from .dataio import ZarrDataIO
from .dataio_arguments import codec_json
from .layout_choice import AUTO, POLICY, ZarrSettings, checked, from_h5py, from_zarr_settings

__all__ = [
    "AUTO",
    "POLICY",
    "ZarrDataIO",
    "ZarrSettings",
    "bridge",
    "checked",
    "codec_json",
    "dataio_arguments",
    "from_h5py",
    "from_zarr_settings",
    "hdmf_zarr_inputs",
    "layout_choice",
]
