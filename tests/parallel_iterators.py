"""GenericDataChunkIterators for tests/backend/test_parallel_write.py.

They live in a module of their own, importable by name, because worker processes started with "spawn"
import the class a pickle names (``tests/`` is on ``sys.path`` in pytest, and spawn hands the parent's
``sys.path`` to its children).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
from hdmf.data_utils import GenericDataChunkIterator


class ArrayIterator(GenericDataChunkIterator):
    """Reads an in-memory array; pickled as the array and its keywords (not its selection generator)."""

    def __init__(self, data: np.ndarray, **kwargs: Any):
        self.data = np.asarray(data)
        self._kwargs = kwargs
        super().__init__(**kwargs)

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        return self.data[selection]

    def _get_maxshape(self) -> tuple[int, ...]:
        return self.data.shape

    def _get_dtype(self) -> np.dtype:
        return self.data.dtype

    def __reduce__(self) -> tuple:
        return functools.partial(type(self), **self._kwargs), (self.data,)


class UnpicklableIterator(ArrayIterator):
    """The same, but pickled as GenericDataChunkIterator is by default: refused (no ``_to_dict``)."""

    def __reduce__(self) -> tuple:
        return GenericDataChunkIterator.__reduce__(self)


class FailingIterator(ArrayIterator):
    """Raises for any region that holds row ``bad_row``."""

    def __init__(self, data: np.ndarray, bad_row: int = 0, **kwargs: Any):
        self.bad_row = bad_row
        super().__init__(data, **kwargs)

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        if selection[0].start <= self.bad_row < selection[0].stop:
            raise ValueError(f"cannot read row {self.bad_row}")
        return super()._get_data(selection)

    def __reduce__(self) -> tuple:
        return functools.partial(type(self), bad_row=self.bad_row, **self._kwargs), (self.data,)


class DyingIterator(ArrayIterator):
    """Ends its worker process abruptly (as the kernel's OOM killer would) on the first read."""

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        os._exit(3)


class WorkerStateIterator(ArrayIterator):
    """Returns, in every row of a region, what the worker reading it is limited to: column 0 zarr's
    ``threading.max_workers`` (0 for none), column 1 the threads of the worker's chunk encoder pool,
    column 2 the most threads of a BLAS/OpenMP pool threadpoolctl finds (0 if it finds none)."""

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        import threadpoolctl
        import zarr

        from hdmf_zarr3.backend.write import parallel

        out = np.empty(tuple(s.stop - s.start for s in selection), dtype=self.data.dtype)
        out[:, 0] = zarr.config.get("threading.max_workers") or 0
        out[:, 1] = parallel._WORKER["pools"].encoder_threads
        out[:, 2] = max((pool["num_threads"] for pool in threadpoolctl.threadpool_info()), default=0)
        return out


class ZarrDatasetIterator(GenericDataChunkIterator):
    """Reads a dataset of a file written by hdmf_zarr3, opening the file in whichever process reads."""

    def __init__(self, path: str, name: str, shape: tuple[int, ...], dtype: str, **kwargs: Any):
        self.path, self.name, self.shape, self.dtype_name = str(path), name, tuple(shape), dtype
        self._kwargs = kwargs
        self._io = None
        super().__init__(**kwargs)

    def _get_data(self, selection: tuple[slice, ...]) -> np.ndarray:
        from hdmf_zarr3 import ZarrIO

        if self._io is None:
            self._io = ZarrIO(self.path, mode="r")
        return self._io.read_builder()[self.name].data[selection]

    def _get_maxshape(self) -> tuple[int, ...]:
        return self.shape

    def _get_dtype(self) -> np.dtype:
        return np.dtype(self.dtype_name)

    def __reduce__(self) -> tuple:
        return functools.partial(type(self), **self._kwargs), (self.path, self.name, self.shape, self.dtype_name)
