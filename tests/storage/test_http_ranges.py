"""The test and benchmark servers' reading of ``Range`` headers (one function, ``tests/http_ranges.py``)."""

from __future__ import annotations

import pytest
from http_ranges import requested_span


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("", (0, 49, False)),  # no header: the whole file, 200
        ("bytes=0-9", (0, 9, True)),
        ("bytes=40-", (40, 49, True)),
        ("bytes=45-1000", (45, 49, True)),  # an end past the file: cut to it
        ("bytes=-3", (47, 49, True)),  # the last 3 bytes
        ("bytes=-100", (0, 49, True)),
        ("bytes=0-49", (0, 49, True)),  # the whole file asked as a range: still 206
        ("bytes=10-5", None),  # unsatisfiable: 416
        ("bytes=50-", None),
        ("bytes=-0", None),
        ("bytes=0-1,3-4", (0, 49, False)),  # several ranges: not served here, the whole file
        ("items=0-9", (0, 49, False)),
    ],
)
def test_a_range_header_asks_the_span_a_file_server_answers(header, expected):
    assert requested_span(header, 50) == expected
