"""bench/soak.py, shortened: `s2a serve` under 8 clients that never stop, its resources bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).parent.parent / "bench" / "soak.py"


def test_serve_holds_up_under_eight_mixed_clients_without_growing(tiny_model, tmp_path):
    out = tmp_path / "soak.json"
    run = [sys.executable, str(SOAK), "--model", str(tiny_model), "--minutes", "0.6",
           "--every", "6", "--window", "0.2", "--clients", "8", "--threads", "1",
           "--json", str(out)]  # fmt: skip
    result = subprocess.run(run, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    soak = json.loads(out.read_text())
    # every answer the one the request got alone: 2xx, 4xx as due, no 5xx, the same words
    assert soak["server_alive"] and soak["wrong"] == [], soak["wrong"][:5]
    kinds = {"text", "list", "html", "detect", "file", "bad json", "no text", "no route", "hang up"}
    assert set(soak["counts"]) == kinds, soak["counts"]  # every kind of client came
    rows = soak["samples"]
    first, rest = rows[0], rows[1:]
    # a leak grows with the requests, hundreds of them: one fd or thread each would show
    assert sum(r["requests"] for r in rest) >= 100, rows
    assert max(r["fds"] for r in rest) <= first["fds"] + 8 + 8, rows  # a socket a client
    assert max(r["threads"] for r in rest) <= first["threads"] + 8 + 8, rows  # and a worker
    assert rest[-1]["rss_mb"] <= 1.15 * rest[0]["rss_mb"] + 20, rows  # flat once warmed up
    assert "RSS after the first 0.2 min" in result.stdout  # the report, first against last
