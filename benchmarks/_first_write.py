"""The first write of benchmark (b)'s file in a fresh interpreter, as a script meets it once: the imports, then
the write. Prints one JSON line, ``{"import": s, "write": s}``. Usage (from ``benchmarks/``)::

    python _first_write.py ours|hdf5 PATH SERIES UNITS TRIALS [--rich]
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    started = time.perf_counter()
    backend, path, series, units, trials = sys.argv[1:6]
    if backend == "hdf5":
        from pynwb import NWBHDF5IO as io_class
    else:
        from hdmf_zarr3 import NWBZarrIO as io_class
    from _common import quiet
    from _data import many_small

    quiet()
    imported = time.perf_counter() - started
    nwbfile = many_small(int(series), int(units), int(trials), rich="--rich" in sys.argv)
    started = time.perf_counter()
    with io_class(path, mode="w") as io:
        io.write(nwbfile)
    print(json.dumps({"import": imported, "write": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
