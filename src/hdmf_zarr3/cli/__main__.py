"""``python -m hdmf_zarr3.cli``: the same as the ``hdmf-zarr3`` command."""

import sys

from .command_line import main

sys.exit(main())
