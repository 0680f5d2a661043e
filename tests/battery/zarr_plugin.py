"""pytest plugin that re-targets PyNWB's HDF5 round-trip battery onto ``hdmf_zarr3.NWBZarrIO``.

Used by tests/suites/test_pynwb_battery.py, which runs pynwb's ``tests/integration/hdf5`` (from the pynwb
sdist) with this directory on PYTHONPATH and ``-p zarr_plugin``.  It is imported as a top-level
module, not as ``tests.battery.zarr_plugin``: pynwb's own test-suite is the package ``tests``, and
the two would clash in ``sys.modules``.

What it patches
---------------
* ``pynwb.testing.testh5io``: the round-trip mixins (NWBH5IOMixin, AcquisitionH5IOMixin,
  NWBH5IOFlexMixin) look up the module globals ``NWBHDF5IO``, ``pynwb_validate`` and
  ``remove_test_file`` when they run.  For each re-targeted test, ``NWBHDF5IO`` becomes the Zarr IO
  class and ``pynwb_validate(path=...)`` opens the store with it and returns
  ``pynwb.validate(io=io)``.
* ``remove_test_file`` (in ``pynwb.testing``, ``pynwb.testing.utils`` and ``testh5io``) is replaced,
  for the whole session, by a version that also deletes directory trees (Zarr stores are
  directories).  It still honours ``CLEAN_NWB``.  For HDF5 files it does what the original did.
* Test modules that use ``NWBHDF5IO`` / ``pynwb.validate`` themselves: the test module's own globals
  that refer to those objects are swapped for the duration of each re-targeted test.  If the test
  code calls ``os.remove``/``os.unlink`` to clean up (test_file_copy.py does), the module's ``os``
  global is swapped for a proxy whose ``remove``/``unlink`` also delete directories.

Which tests stay on HDF5
------------------------
A test is kept on HDF5 (nothing is patched for it, so it runs exactly as in the baseline) when its
code uses an HDF5-specific API: h5py (e.g. it opens the written file with ``h5py.File`` to check the
on-disk layout), ``hdmf.backends.hdf5.HDF5IO`` or ``H5DataIO``.  "Its code" means the test method
plus the non-test methods (setUp, tearDown, helpers, overridden roundtripContainer, ...) of its class
and base classes defined in the test-suite (not in pynwb/hdmf).  Those tests check HDF5 behaviour,
so running them against a Zarr store would not test anything meaningful.  For such a test, the
mixins' globals point at the real NWBHDF5IO too, so e.g. a mixin round trip followed by an
``h5py.File`` inspection still writes HDF5.  ``_HDF5_SEMANTICS`` lists the few tests that use no
HDF5 API but check an HDF5-only convention; they are kept on HDF5 as well.

Reporting
---------
Each test gets two junit-xml properties:
``battery_backend`` = ``zarr`` or ``hdf5 (uses <names>)``, and
``battery_hdf5_opens`` = how many ``h5py.File`` objects the test created (a re-targeted test with
a non-zero count reached HDF5 by some path this plugin does not patch).

Hangs
-----
A test that runs longer than ``HDMF_ZARR3_BATTERY_TEST_TIMEOUT`` seconds (default 120; 0 disables)
is interrupted with SIGALRM and fails with a ``BatteryTestTimeout`` that lists every thread's stack,
so one deadlock costs one test instead of the whole run.

``HDMF_ZARR3_BATTERY_IO=module:attr`` selects a different IO class (default
``hdmf_zarr3:NWBZarrIO``); ``pynwb:NWBHDF5IO`` is a self-test of this plugin's machinery.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import os
import shutil
import signal
import sys
import textwrap
import threading
import traceback
import types
from pathlib import Path

import pytest

IO_ENV = "HDMF_ZARR3_BATTERY_IO"
MODE_ENV = "HDMF_ZARR3_BATTERY_MODE"
#: zarr: everything on the Zarr IO; hdf5-to-zarr / zarr-to-hdf5: the file a test writes first uses
#: the first backend and the file it exports to (``test_export_*``) the second.
MODES = ("zarr", "hdf5-to-zarr", "zarr-to-hdf5")
TEST_TIMEOUT_ENV = "HDMF_ZARR3_BATTERY_TEST_TIMEOUT"
DEFAULT_TEST_TIMEOUT = 120.0
DEFAULT_IO = "hdmf_zarr3:NWBZarrIO"
BACKEND_PROPERTY = "battery_backend"
HDF5_OPENS_PROPERTY = "battery_hdf5_opens"

# Globals of pynwb.testing.testh5io that the round-trip mixins look up at call time.
_MIXIN_GLOBALS = ("NWBHDF5IO", "pynwb_validate", "remove_test_file")
# Modules whose objects mark a test as HDF5-specific.
_HDF5_MODULES = ("h5py", "hdmf.backends.hdf5")
# Classes/functions from these packages are library code, not part of the battery under test.
_LIBRARY_PREFIXES = ("pynwb", "hdmf", "unittest", "builtins", "abc")
# Tests (node-id suffixes) that use no HDF5 API but check HDF5-backend conventions, with the reason.
_HDF5_SEMANTICS: dict[str, str] = {}
_OS_REMOVE = "os.remove"  # pseudo-name recorded when test code calls os.remove / os.unlink


def remove_test_path(path) -> None:
    """``pynwb.testing.remove_test_file`` that also removes directories (Zarr stores)."""
    if os.getenv("CLEAN_NWB", True) in ("False", "false", "FALSE", "0", 0, False):
        return
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


class _DirAwareOs(types.ModuleType):
    """Stand-in for ``os`` in a re-targeted test module: remove()/unlink() also delete directories."""

    def __init__(self):
        super().__init__("os")

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def remove(path, *args, **kwargs):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path, *args, **kwargs)

    unlink = remove


class BatteryTestTimeout(Exception):
    """Raised in a test that exceeded the per-test timeout."""


def _thread_stacks() -> str:
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue  # the interrupted thread's stack is the exception's own traceback
        stack = "".join(traceback.format_stack(frame)[-12:])
        parts.append(f"--- thread {names.get(ident, ident)} ---\n{stack}")
    return "\n".join(parts)


def _load_io_class(spec: str):
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise pytest.UsageError(f"zarr_plugin: {IO_ENV} must look like 'module:attr', got {spec!r}")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # ImportError, AttributeError, or anything the package raises on import
        raise pytest.UsageError(
            f"zarr_plugin: cannot load the IO class {spec!r} ({type(exc).__name__}: {exc})"
        ) from exc


def _make_router(primary, export):
    """A stand-in for NWBHDF5IO that opens ``test_export_*`` files with ``export`` and others with
    ``primary`` (the mixins name the exported file ``test_export_<type>.nwb``)."""

    def pick(path):
        return export if os.path.basename(os.fspath(path or "")).startswith("test_export_") else primary

    class RoutedIO:
        def __new__(cls, *args, **kwargs):
            return pick(args[0] if args else kwargs.get("path"))(*args, **kwargs)

        @staticmethod
        def export_io(**kwargs):
            target = pick(kwargs.get("path"))
            if target is not primary and not isinstance(kwargs.get("src_io"), target):
                # HDF5IO refuses link_data=True from another backend (it cannot link into a Zarr store)
                # and says so; the battery's call leaves write_args at its default, so copy instead.
                write_args = dict(kwargs.get("write_args") or {})
                write_args.setdefault("link_data", False)
                kwargs["write_args"] = write_args
            return target.export_io(**kwargs)

        @staticmethod
        def read_nwb(**kwargs):
            return pick(kwargs.get("path")).read_nwb(**kwargs)

    RoutedIO.__name__ = f"Routed[{primary.__name__}->{export.__name__}]"
    return RoutedIO


def _make_validate(io_cls, pynwb_validate):
    def validate_store(path=None, io=None, **kwargs):
        """Replacement for ``pynwb.validate``: open ``path`` with the Zarr IO and validate that io."""
        if io is not None:
            return pynwb_validate(io=io, **kwargs)
        io = io_cls(path, mode="r")
        try:
            return pynwb_validate(io=io, **kwargs)
        finally:
            io.close()

    return validate_store


def _referenced_names(func) -> set[str]:
    """Global names and imported modules referenced by a function's source (strings/comments ignored)."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(func)))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("remove", "unlink")
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            names.add(_OS_REMOVE)
    return names


def _is_library(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith(_LIBRARY_PREFIXES)


def _from_hdf5_module(module_name: str) -> bool:
    return any(module_name == m or module_name.startswith(m + ".") for m in _HDF5_MODULES)


class _Retargeter:
    def __init__(self, io_cls):
        self.io_cls = io_cls
        self.testh5io = importlib.import_module("pynwb.testing.testh5io")
        missing = [name for name in _MIXIN_GLOBALS if not hasattr(self.testh5io, name)]
        if missing:
            raise pytest.UsageError(
                f"zarr_plugin: pynwb.testing.testh5io no longer defines {missing}; the plugin needs updating"
            )
        self.hdf5_io = self.testh5io.NWBHDF5IO
        self.hdf5_validate = self.testh5io.pynwb_validate
        self.validate = _make_validate(io_cls, self.hdf5_validate)
        self.os_proxy = _DirAwareOs()
        self.test_timeout = float(os.environ.get(TEST_TIMEOUT_ENV, DEFAULT_TEST_TIMEOUT))
        self.hdf5_opens = 0
        self._session_undo: list = []  # patches for the whole session
        self._test_undo: list = []  # patches for the running test

    # -- patching helpers -------------------------------------------------------------------------

    @staticmethod
    def _set(undo: list, target, name: str, value) -> None:
        """Set ``target[name]`` (dict) or ``target.name`` (object), remembering the old value in ``undo``."""
        if isinstance(target, dict):
            undo.append((target, name, target[name]))
            target[name] = value
        else:
            undo.append((target, name, getattr(target, name)))
            setattr(target, name, value)

    @staticmethod
    def _restore(undo: list) -> None:
        for target, name, value in reversed(undo):
            if isinstance(target, dict):
                target[name] = value
            else:
                setattr(target, name, value)
        undo.clear()

    # -- session-wide patches ---------------------------------------------------------------------

    def install(self) -> None:
        utils = importlib.import_module("pynwb.testing.utils")
        testing = importlib.import_module("pynwb.testing")
        for module in (utils, testing, self.testh5io):
            self._set(self._session_undo, module, "remove_test_file", remove_test_path)

        import h5py

        original_init = h5py.File.__init__

        @functools.wraps(original_init)
        def counting_init(file_self, *args, **kwargs):
            self.hdf5_opens += 1
            return original_init(file_self, *args, **kwargs)

        self._set(self._session_undo, h5py.File, "__init__", counting_init)

    def uninstall(self) -> None:
        self._restore(self._session_undo)

    # -- per-test decision -----------------------------------------------------------------------

    @staticmethod
    def _battery_functions(item) -> list:
        """The test function plus non-test methods of its class hierarchy that belong to the battery."""
        funcs = []
        test_func = getattr(item, "function", None)
        if test_func is not None:
            funcs.append(test_func)
        cls = getattr(item, "cls", None)
        for klass in getattr(cls, "__mro__", ()):
            if _is_library(klass) or klass is object:
                continue
            for name, attr in vars(klass).items():
                if isinstance(attr, (staticmethod, classmethod)):
                    attr = attr.__func__
                elif isinstance(attr, property):
                    attr = attr.fget
                if inspect.isfunction(attr) and not name.startswith("test"):
                    funcs.append(attr)
        return funcs

    def _hdf5_names(self, funcs) -> list[str]:
        hits = set()
        for func in funcs:
            module_globals = getattr(inspect.unwrap(func), "__globals__", {})
            for name in _referenced_names(func):
                if _from_hdf5_module(name):  # `import h5py` / `from hdmf.backends.hdf5 import ...`
                    hits.add(name)
                    continue
                if name not in module_globals:
                    continue
                value = module_globals[name]
                if value is self.hdf5_io or value is self.io_cls:
                    continue
                owner = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
                if isinstance(owner, str) and _from_hdf5_module(owner):
                    hits.add(name)
        return sorted(hits)

    def _retarget(self, funcs):
        namespaces = {id(vars(self.testh5io)): (vars(self.testh5io), False)}
        for func in funcs:
            func = inspect.unwrap(func)
            if _is_library(func):
                continue
            uses_os_remove = _OS_REMOVE in _referenced_names(func)
            key = id(func.__globals__)
            previous = namespaces.get(key, (func.__globals__, False))[1]
            namespaces[key] = (func.__globals__, previous or uses_os_remove)
        for namespace, uses_os_remove in namespaces.values():
            for name, value in list(namespace.items()):
                if value is self.hdf5_io:
                    self._set(self._test_undo, namespace, name, self.io_cls)
                elif value is self.hdf5_validate:
                    self._set(self._test_undo, namespace, name, self.validate)
                elif name == "os" and value is os and uses_os_remove:
                    self._set(self._test_undo, namespace, name, self.os_proxy)

    # -- hooks -----------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        funcs = self._battery_functions(item)
        hdf5_names = self._hdf5_names(funcs)
        convention = next((why for suffix, why in _HDF5_SEMANTICS.items() if item.nodeid.endswith(suffix)), None)
        if hdf5_names:
            item.user_properties.append((BACKEND_PROPERTY, f"hdf5 (uses {', '.join(hdf5_names)})"))
        elif convention:
            item.user_properties.append((BACKEND_PROPERTY, f"hdf5 (checks {convention})"))
        else:
            item.user_properties.append((BACKEND_PROPERTY, "zarr"))
            self._retarget(funcs)
        self.hdf5_opens = 0
        try:
            return (yield)
        finally:
            self._restore(self._test_undo)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        if self.test_timeout <= 0 or threading.current_thread() is not threading.main_thread():
            return (yield)

        def on_alarm(signum, frame):
            raise BatteryTestTimeout(
                f"test still running after {self.test_timeout:g} s ({TEST_TIMEOUT_ENV}); "
                f"other threads:\n{_thread_stacks()}"
            )

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.test_timeout)
        try:
            return (yield)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        try:
            return (yield)
        finally:
            # appended before the teardown report is built, so junitxml records it
            item.user_properties.append((HDF5_OPENS_PROPERTY, str(self.hdf5_opens)))


def pytest_configure(config):
    io_cls = _load_io_class(os.environ.get(IO_ENV, DEFAULT_IO))
    mode = os.environ.get(MODE_ENV, "zarr")
    if mode not in MODES:
        raise pytest.UsageError(f"zarr_plugin: {MODE_ENV} must be one of {MODES}, got {mode!r}")
    if mode != "zarr":
        from pynwb import NWBHDF5IO

        io_cls = _make_router(NWBHDF5IO, io_cls) if mode == "hdf5-to-zarr" else _make_router(io_cls, NWBHDF5IO)
    retargeter = _Retargeter(io_cls)
    retargeter.install()
    config.pluginmanager.register(retargeter, "hdmf_zarr3_retargeter")
    config.stash[_RETARGETER_KEY] = retargeter


def pytest_unconfigure(config):
    retargeter = config.stash.get(_RETARGETER_KEY, None)
    if retargeter is not None:
        retargeter.uninstall()


def pytest_report_header(config):
    retargeter = config.stash.get(_RETARGETER_KEY, None)
    if retargeter is not None:
        io_cls = retargeter.io_cls
        return f"zarr_plugin: re-targeting pynwb's round-trip battery onto {io_cls.__module__}.{io_cls.__name__}"
    return None


_RETARGETER_KEY = pytest.StashKey[_Retargeter]()
