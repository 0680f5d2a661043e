"""Tests of ``hdmf_zarr3.format``: the pure rules (dtypes, encodings, documents, layout policy, safe pickle).

Each test folder is a package so that test modules may share a basename across folders; ``tests/`` itself is
not a package and is on ``sys.path`` (pytest's rootdir-based import), so the helper modules there import by name."""
