"""Arguments shared by several sub-commands."""

from __future__ import annotations

import argparse
import json


def add_storage_options(parser: argparse.ArgumentParser, what: str = "PATH", flag: str = "--storage-options") -> None:
    """The ``--storage-options JSON`` argument shared by the sub-commands that open URLs."""
    parser.add_argument(flag, type=json.loads, default=None, metavar="JSON",
                        help=f'options of the object store {what} is a URL of, e.g. \'{{"endpoint": "http://..."}}\'')
