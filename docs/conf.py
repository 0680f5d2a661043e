"""Sphinx configuration of the hdmf_zarr3 documentation.

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (``tests/project/test_docs.py``
does the same on a copy of ``docs/`` and ``tutorials/``, with warnings as errors). The pages are Markdown
(MyST); the API reference is autodoc; the CLI reference is generated from ``hdmf_zarr3.cli.build_parser()``;
the tutorial gallery is built by sphinx-gallery from every ``tutorials/plot_*.py``, each of which is run.

Where the tutorials run: sphinx-gallery runs each script with its working directory set to the directory
holding the script, and the tutorials write files under relative names (``tutorial.nwb.zarr``), as a user
would. So that nothing is written into the repository, the gallery is made from a scratch copy of
``tutorials/`` in a temporary directory (removed when the build finishes); the scripts run there. A
tutorial that raises fails the build (sphinx-gallery reports every failing example, then stops the build
with an error). ``plot_virtual_back_compat.py`` reads a file of PyNWB's source distribution: the one
unpacked in ``$HDMF_ZARR3_PYNWB_SDIST`` if set (``tests/project/test_docs.py`` sets it to the tests'
cache), else it downloads the sdist with pip.
"""

from __future__ import annotations

import atexit
import logging
import re
import shutil
import tempfile
from pathlib import Path

import hdmf_zarr3

DOCS = Path(__file__).resolve().parent
TUTORIALS = DOCS.parent / "tutorials"

# -- Project ---------------------------------------------------------------------------------------------
project = "hdmf_zarr3"
author = "hdmf_zarr3 developers"
copyright = "hdmf_zarr3 developers"
release = hdmf_zarr3.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_examples", "_plans", "Thumbs.db", ".DS_Store"]  # _plans: work notes, not pages
# No network: no intersphinx, no linkcheck.

# -- MyST (the Markdown pages) ---------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # "storage.md#9-chunking-and-codecs" links work as on GitHub

# -- autodoc / numpydoc (the docstrings are numpydoc style) ---------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_default_options = {"show-inheritance": True}
autodoc_inherit_docstrings = False  # HDMF's docval docstrings are documented by HDMF, not here
numpydoc_show_class_members = False  # members are listed explicitly in api.rst
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

# -- HTML ------------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"hdmf_zarr3 {release}"
html_static_path: list[str] = []

# -- The tutorial gallery --------------------------------------------------------------------------------
_scratch = Path(tempfile.mkdtemp(prefix="hdmf_zarr3-tutorials-"))
_examples = _scratch / "tutorials"
shutil.copytree(TUTORIALS, _examples, ignore=shutil.ignore_patterns("__pycache__", "*.zarr", "*.nwb"))
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
# The S3 tutorial runs moto's server, whose HTTP server (werkzeug) logs every request; its log lines would
# end up in the page among the tutorial's own output.
logging.getLogger("werkzeug").setLevel(logging.WARNING)

sphinx_gallery_conf = {
    "examples_dirs": [str(_examples)],  # a scratch copy of ../tutorials: the scripts run (and write) there
    "gallery_dirs": ["tutorials"],
    "filename_pattern": r"plot_",  # run every plot_*.py
    "ignore_pattern": r"^(?!plot_)",  # anything else in tutorials/ is a helper, not a page
    "image_scrapers": (),  # no figures (and no matplotlib needed)
    "reset_modules": (),  # the default resets matplotlib, which the tutorials do not use
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,  # run them all, then fail the build listing every failure
    "only_warn_on_example_error": False,
    "run_stale_examples": False,
    "show_memory": False,
    "write_computation_times": False,  # no sg_execution_times pages
    "plot_gallery": "True",
}


# Links that work on GitHub and must point at the built gallery here: "../tutorials" (the directory of
# scripts) becomes the gallery's index, "../tutorials/plot_x.py" the page made from that script.
_TUTORIAL_LINK = re.compile(r"\]\(\.\./tutorials/?(?:(plot_\w+)\.py)?\)")


def _tutorial_links(app, docname, source):
    source[0] = _TUTORIAL_LINK.sub(
        lambda m: f"](tutorials/{m.group(1)}.rst)" if m.group(1) else "](tutorials/index.rst)", source[0]
    )


def _remove_scratch(app, exception):
    shutil.rmtree(_scratch, ignore_errors=True)


def setup(app):
    app.connect("source-read", _tutorial_links)
    app.connect("build-finished", _remove_scratch)
