"""The peer tests' venvs (tests/peer_venvs.py): one cut short is made again, and one made for other requirements
is replaced; what is in it is what was asked for."""

from __future__ import annotations

import subprocess

import peer_venvs
import pytest

#: A tiny package of the index, pure Python.
REQUIREMENT = "iniconfig==2.0.0"


def _version_in(venv) -> str:
    code = "import importlib.metadata as m; print(m.version('iniconfig'))"
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True).stdout.strip()


@pytest.mark.peer
def test_a_venv_cut_short_or_made_for_other_requirements_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setattr(peer_venvs, "CACHE", tmp_path)
    cut_short = tmp_path / "venv-x" / "bin"
    cut_short.mkdir(parents=True)
    (cut_short / "python").write_text("not a python")  # (a creation interrupted after the venv, before its installs)
    venv = peer_venvs.peer_venv("venv-x", [REQUIREMENT])
    assert _version_in(venv) == "2.0.0"
    assert (venv / peer_venvs.COMPLETE).read_text() == REQUIREMENT
    assert peer_venvs.peer_venv("venv-x", [REQUIREMENT]) == venv  # (made once)
    venv = peer_venvs.peer_venv("venv-x", ["iniconfig==2.1.0"])
    assert _version_in(venv) == "2.1.0"
