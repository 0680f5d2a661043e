"""The hdmf and numcodecs shims (``hdmf_zarr3.integrations.hdmf_shims``): nothing at import, applied by
the first ZarrIO, to every hdmf module that bound ``extend_data``, gated on the hdmf version; extending
works through each binding."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import hdmf.data_utils
import numpy as np
import pytest
from hdmf.common import DynamicTable, VectorData, get_manager
from hdmf.term_set import TermSet, TermSetWrapper

from hdmf_zarr3 import ZarrIO
from hdmf_zarr3.backend.datasets.lazy import ZarrDataset
from hdmf_zarr3.integrations import hdmf_shims


def _run(code: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_import_changes_nothing_in_hdmf_or_numcodecs():
    out = _run("""
        import hdmf.container, hdmf.data_utils, hdmf.term_set
        from hdmf.build import ObjectMapper
        from numcodecs.blosc import Blosc
        before = {m.__name__: m.extend_data for m in (hdmf.data_utils, hdmf.container, hdmf.term_set)}
        decode = Blosc.decode
        from hdmf.common import DynamicTableRegion
        region_check = DynamicTableRegion._check_indices_in_bounds
        no_convert = set(ObjectMapper._ObjectMapper__no_convert)
        import hdmf_zarr3, hdmf_zarr3.integrations.hdmf_shims, hdmf_zarr3.cli  # noqa: F401
        import hdmf_zarr3.backend.zarrio.nwb  # noqa: F401
        after = {m.__name__: m.extend_data for m in (hdmf.data_utils, hdmf.container, hdmf.term_set)}
        assert after == before, after
        assert all(f.__module__ == "hdmf.data_utils" for f in after.values()), after
        assert Blosc.decode is decode
        assert DynamicTableRegion._check_indices_in_bounds is region_check
        assert set(ObjectMapper._ObjectMapper__no_convert) == no_convert
        print("unchanged")
    """)
    assert out.strip() == "unchanged"


def test_opening_a_store_checks_blosc_frames(tmp_path):
    """The CLI opens stores without a ZarrIO: the blosc check comes with the first store opened."""
    out = _run(
        """
        import sys
        from numcodecs.blosc import Blosc
        from hdmf_zarr3.storage.handles.store_opening import open_store
        assert not getattr(Blosc.decode, "_hdmf_zarr3_checked", False)
        open_store(sys.argv[1], "w").close()
        assert Blosc.decode._hdmf_zarr3_checked
        print("checked")
    """,
        str(tmp_path / "f.zarr"),
    )
    assert out.strip() == "checked"


def test_first_zarrio_binds_the_shim_in_every_hdmf_module(tmp_path):
    """All of hdmf imported first (as an application would), then one ZarrIO: no name in any hdmf module is
    still bound to hdmf's original ``extend_data`` (its three import sites are data_utils, container and
    term_set), and blosc frames are checked."""
    out = _run(
        """
        import importlib, pkgutil, sys, threading
        import hdmf
        for info in pkgutil.walk_packages(hdmf.__path__, "hdmf."):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional dependency (e.g. linkml) is missing: the module binds nothing
                pass
        original = hdmf.data_utils.extend_data
        from hdmf_zarr3 import ZarrIO
        from hdmf_zarr3.integrations import hdmf_shims
        from numcodecs.blosc import Blosc
        threads = [threading.Thread(target=lambda i=i: ZarrIO(sys.argv[1] + f"/f{i}.zarr", mode="w").close())
                   for i in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        left = [f"{name}.{attr}" for name, module in sorted(sys.modules.items())
                if name == "hdmf" or name.startswith("hdmf.") for attr, value in vars(module).items()
                if value is original]
        assert left == [], left
        sites = [name for name, module in sys.modules.items()
                 if getattr(module, "extend_data", None) is hdmf_shims.extend_data]
        assert {"hdmf.data_utils", "hdmf.container", "hdmf.term_set"} <= set(sites), sites
        assert hdmf_shims.extend_data.__wrapped__ is original
        assert Blosc.decode._hdmf_zarr3_checked and Blosc.decode.__wrapped__.__qualname__ == "Blosc.decode"
        print("bound")
    """,
        str(tmp_path),
    )
    assert out.strip() == "bound"


def test_outside_the_hdmf_range_extend_data_is_left_alone(tmp_path):
    out = _run(
        """
        import sys
        import hdmf, hdmf.container, hdmf.data_utils
        from hdmf_zarr3 import ZarrIO
        original = hdmf.data_utils.extend_data
        hdmf.__version__ = "7.0.0"  # a version past EXTEND_DATA_HDMF
        ZarrIO(sys.argv[1], mode="w").close()
        assert hdmf.data_utils.extend_data is original and hdmf.container.extend_data is original
        print("left alone")
    """,
        str(tmp_path / "f.zarr"),
    )
    assert out.strip() == "left alone"


@pytest.mark.parametrize(
    ("version", "inside"),
    [("6.2.0", True), ("6.9.1.dev3", True), ("6.1.9", False), ("7.0.0", False), ("", False), ("unknown", False)],
)
def test_version_in_the_range(version, inside):
    assert hdmf_shims.version_in(version, hdmf_shims.EXTEND_DATA_HDMF) is inside


def _table(path) -> None:
    table = DynamicTable(name="t", description="d", columns=[VectorData(name="c", description="c", data=[1.0, 2.0])])
    with ZarrIO(path, mode="w", manager=get_manager()) as io:
        io.write(table)


def test_the_installed_hdmf_needs_the_shim(tmp_path):
    """hdmf's own ``extend_data`` refuses our lazy datasets: the installed version is rightly inside the range."""
    _table(tmp_path / "f.zarr")
    assert hdmf_shims.extend_data_needed()
    with ZarrIO(tmp_path / "f.zarr", mode="a", manager=get_manager()) as io:
        data = io.read()["c"].data
        assert isinstance(data, ZarrDataset)
        with pytest.raises(ValueError, match="cannot extend"):
            hdmf_shims.extend_data.__wrapped__(data, [3.0])


class _AnyTerm(TermSet):
    """A term set accepting every term (hdmf's TermSet needs linkml to load a schema)."""

    def __init__(self):
        pass

    def validate(self, term):
        return True


def test_extending_a_column_read_from_zarr_through_each_import_site(tmp_path):
    """``VectorData.extend`` calls container's binding; a column whose data is a ``TermSetWrapper`` reaches
    term_set's (``TermSetWrapper.extend``); ``DataIO.extend`` reaches data_utils'. hdmf's public constructors do
    not wrap a lazy dataset in a TermSetWrapper (its docval takes lists and arrays), so the wrapper's value is set
    after construction to reach that binding with a dataset read from Zarr."""
    _table(tmp_path / "f.zarr")
    with ZarrIO(tmp_path / "f.zarr", mode="a", manager=get_manager()) as io:
        column = io.read()["c"]
        column.extend([3.0])  # hdmf.container.extend_data
        data = column.data
        wrapper = TermSetWrapper(value=[], termset=_AnyTerm())
        wrapper._TermSetWrapper__value = data
        VectorData(name="v", description="v", data=wrapper).extend([4.0, 5.0])  # hdmf.term_set.extend_data
        hdmf.data_utils.DataIO(data=data).extend([6.0])  # hdmf.data_utils.extend_data
        assert isinstance(column.data, ZarrDataset) and column.data[:].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with ZarrIO(tmp_path / "f.zarr", mode="r", manager=get_manager()) as io:
        assert io.read_builder()["c"].data[:].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # (ids not extended)


def test_everything_not_ours_goes_to_hdmf():
    assert hdmf_shims.extend_data([1], [2]) == [1, 2]
    assert hdmf_shims.extend_data(np.array([1]), [2]).tolist() == [1, 2]
    with pytest.raises(ValueError, match="cannot extend object of type"):
        hdmf_shims.extend_data(object(), [1])


def test_activate_is_idempotent_and_thread_safe():
    before = hdmf.data_utils.extend_data
    threads = [threading.Thread(target=hdmf_shims.activate, args=(ZarrDataset,)) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert hdmf.data_utils.extend_data is before is hdmf_shims.extend_data


def test_the_region_shim_replaces_the_method_hdmf_has():
    """hdmf's ``DynamicTableRegion._check_indices_in_bounds`` is there, with the parameters the shim takes: this
    fails when hdmf renames or changes it (and :func:`activate` refuses to run instead of doing nothing)."""
    import inspect

    from hdmf.common import DynamicTableRegion

    hdmf_shims.activate(ZarrDataset)
    method = DynamicTableRegion.__dict__["_check_indices_in_bounds"]
    assert method.__wrapped__.__module__ == "hdmf.common.table"
    assert tuple(inspect.signature(method.__wrapped__).parameters) == hdmf_shims.REGION_CHECK_PARAMETERS


def test_a_region_method_hdmf_renamed_is_refused(monkeypatch):
    from hdmf.common import DynamicTableRegion

    monkeypatch.delattr(DynamicTableRegion, "_check_indices_in_bounds")
    with pytest.raises(RuntimeError, match="_check_indices_in_bounds is not the method"):
        hdmf_shims._install_region_bounds()


def test_a_region_not_read_from_zarr_goes_to_hdmf():
    from hdmf.common import DynamicTable, DynamicTableRegion

    table = DynamicTable(name="t", description="two rows", id=[0, 1])
    region = DynamicTableRegion(name="r", data=[0, 1], description="r", table=table)
    assert hdmf_shims.check_region_bounds(region, [0, 1], table) is None
    said = hdmf_shims.check_region_bounds(region, np.array([0, 5, -1]), table)
    assert said is not None and said.startswith("DynamicTableRegion values [ 5 -1] are out of bounds")
