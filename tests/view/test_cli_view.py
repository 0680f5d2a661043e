"""``hdmf-zarr3 view``: prints the URL with its token, serves the file, stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

from hdmf_zarr3.cli import build_parser


def test_view_is_a_sub_command_with_its_options():
    args = build_parser().parse_args(["view", "f.nwb.zarr", "--port", "8123", "--no-browser"])
    assert (args.path, args.port, args.no_browser, args.storage_options) == ("f.nwb.zarr", 8123, True, None)


def test_view_serves_until_ctrl_c_and_stops_cleanly(viewer_file):
    env = {**os.environ, "BROWSER": "false"}
    process = subprocess.Popen(
        [sys.executable, "-m", "hdmf_zarr3.cli", "view", viewer_file, "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert "serving" in process.stdout.readline()
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        api = url.replace("/?token=", "/api/tree?token=")
        with urllib.request.urlopen(api, timeout=60) as answer:
            assert json.load(answer)["root"]["path"] == "/"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and "stopped" in err and "Traceback" not in err


def test_a_port_in_use_is_our_typed_error(viewer_file, capsys):
    import socket

    from hdmf_zarr3.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["view", viewer_file, "--no-browser", "--port", str(port)]) == 1
    assert f"ViewRequestError: {viewer_file}: cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
