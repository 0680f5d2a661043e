"""Text from a file made safe to print on a terminal: what a terminal would obey or reorder is shown as an escape.

A name or attribute may hold any character. Printed raw, ESC starts a control sequence (``ESC[2K`` erases the
line, ``ESC]`` sets the window title), CR returns to the start of the line, BEL rings, and the bidirectional
formatting characters (U+202E reverses what follows) change what a line appears to say: a file could make
``validate`` print ``valid`` over its real verdict. :func:`printable` shows each such character as a Python-style
escape (``\\x1b``, ``\\r``, ``\\u202e``), as ``--json`` output already does; everything else, accents and
scripts included, is printed as it is.
"""

from __future__ import annotations

import re

#: C0 controls (tab and newline too: a file's text never starts a line of ours), DEL, C1 controls (CSI is
#: U+009B), the bidirectional marks, embeddings, overrides and isolates, the line and paragraph separators, the
#: byte order mark, and lone surrogates (which no terminal encoding can print).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")

#: The short escapes Python itself prints for these characters.
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(text: object) -> str:
    """``text`` (any object, as ``str``) with every character :data:`UNSAFE` for a terminal shown as an escape."""
    return UNSAFE.sub(_escape, str(text))


def _escape(found: re.Match[str]) -> str:
    character = found.group()
    code = ord(character)
    return _SHORT.get(character) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
