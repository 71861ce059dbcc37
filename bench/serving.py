"""The `s2a serve` figures of bench/run.py: requests/s and latency under a bounded load."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from common import S2A, WORK, table, thread_env


def measure_serving(args: argparse.Namespace, data: dict, model: Path, console: Any) -> dict:
    """`s2a serve` under a bounded load: requests/s and p50/p95 latency of one-sentence requests."""
    sentences = [s for s in data["source"].read_text(encoding="utf-8").splitlines() if s]
    log = WORK / "serve.err"
    cmd = [S2A, "serve", "--model", str(model), "--port", "0", "--threads", str(args.threads)]
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stderr=err, env=thread_env(args.threads))
    try:
        while not (found := re.search(r"http://[\d.]+:\d+/", log.read_text())):
            if proc.poll() is not None:
                raise RuntimeError(f"s2a serve exited {proc.returncode}: {log.read_text()}")
            time.sleep(0.2)
        url, rows, out = found[0], [], {}
        post_sentence(url, sentences[0])  # warm-up
        for clients in (4, 16):
            cpu = cpu_seconds(proc.pid)
            run = load_run(url, sentences, clients=clients, seconds=args.serve_seconds)
            # on a shared machine the wall-clock rate says more about the others than about s2a
            run["requests_per_cpu_s"] = round(run["requests"] / (cpu_seconds(proc.pid) - cpu), 2)
            out[f"clients_{clients}"] = run
            rows.append([clients, run["requests"], run["requests_per_s"], run["p50_ms"],
                         run["p95_ms"], run["requests_per_cpu_s"]])  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    title = f"s2a serve (int8, beam 5): one-sentence requests, {args.serve_seconds:g} s a run"
    header = ["clients", "requests", "requests/s", "p50 ms", "p95 ms", "per server CPU s"]
    console.print(table(title, header, rows))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post_sentence(url: str, sentence: str) -> float:
    """POST one sentence to /translate as a LibreTranslate client does; the latency in s."""
    import urllib.request

    body = json.dumps({"q": sentence, "source": "auto", "target": "en"}).encode()
    request = urllib.request.Request(
        url + "translate", data=body, headers={"Content-Type": "application/json"}
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as reply:
        json.load(reply)
    return time.perf_counter() - start


def load_run(url: str, sentences: list[str], *, clients: int, seconds: float) -> dict[str, Any]:
    """`clients` threads, each sending the next sentence as soon as its last one is answered."""
    from concurrent.futures import ThreadPoolExecutor

    start = time.perf_counter()
    deadline = start + seconds

    def client(first: int) -> list[float]:
        latencies, i = [], first
        while time.perf_counter() < deadline:
            latencies.append(post_sentence(url, sentences[i % len(sentences)]))
            i += clients
        return latencies

    with ThreadPoolExecutor(max_workers=clients) as pool:
        latencies = sorted(x for part in pool.map(client, range(clients)) for x in part)
    wall = time.perf_counter() - start
    cuts = statistics.quantiles(latencies, n=20)  # 5% steps: cuts[9] median, cuts[18] 95%
    return {"requests": len(latencies), "requests_per_s": round(len(latencies) / wall, 2),
            "p50_ms": round(cuts[9] * 1000, 1), "p95_ms": round(cuts[18] * 1000, 1)}  # fmt: skip
