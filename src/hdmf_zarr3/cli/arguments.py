"""Arguments shared by several sub-commands."""

from __future__ import annotations

import argparse
import json
import re


def add_storage_options(parser: argparse.ArgumentParser, what: str = "PATH", flag: str = "--storage-options") -> None:
    """The ``--storage-options JSON`` argument shared by the sub-commands that open URLs."""
    parser.add_argument(
        flag,
        type=json.loads,
        default=None,
        metavar="JSON",
        help=f'options of the object store {what} is a URL of, e.g. \'{{"endpoint": "http://..."}}\'',
    )


def add_allow_incomplete(parser: argparse.ArgumentParser, what: str) -> None:
    """``--allow-incomplete``: open a file whose last write or append did not finish (``allow_incomplete=True``)."""
    parser.add_argument("--allow-incomplete", action="store_true", help=what)


def incomplete_hint(message: str) -> str:
    """An :class:`~hdmf_zarr3.IncompleteFileError` message with the command line's way to go on."""
    message = message.replace("open it with allow_incomplete=True", "run with --allow-incomplete")
    return re.sub(r"run hdmf_zarr3\.recover\((['\"])(.*?)\1\)", r"run `hdmf-zarr3 recover \2`", message)
