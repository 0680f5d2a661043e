"""``hdmf-zarr3 check-dandi PATH``: what DANDI refuses, or requires and misses, in a Zarr NWB file.

The findings are those of ``hdmf_zarr3.check_dandi()``, under dandi-cli's own rule ids: what
``dandi validate`` reports as errors and ``dandi upload`` (default ``--validation require``) refuses
(TensorStore cannot open an array: every string and compound array, dandi-cli issue #1918; keys more
than 7 levels deep; objects over 5 GiB), and what DANDI requires of NWB content but skips for Zarr
(nwbinspector with DANDI's configuration: a Subject with subject_id, species, sex, and age or
date_of_birth; PyNWB's validator). Warnings: what DANDI lets through (file layout names, best practices).
Exit status 1 when there is any error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import posixpath
from typing import Any

from ..dandi import check_dandi
from .arguments import add_storage_options
from .output import say


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check-dandi",
        help="check a Zarr NWB file against what DANDI refuses or requires",
        description=__doc__.split("\n\n", 1)[1].replace("``", "'"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", help="the file (path or URL)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_storage_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report = check_dandi(args.path, args.storage_options)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 1 if report.refused else 0
    for finding in report.findings:
        say(finding)
    for way in report.ways_through:
        say(f"way through: {way}")
    name = posixpath.basename(str(args.path).rstrip("/"))
    errors, warnings = len(report.errors), len(report.warnings)
    verdict = f"{errors} error(s): DANDI will refuse it" if errors else "DANDI takes it"
    say(f"{name}: {verdict} ({warnings} warning(s))")
    return 1 if report.refused else 0
