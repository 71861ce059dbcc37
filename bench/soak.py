"""Soak `s2a serve`: clients that never stop, and whether the server holds up under them.

Starts `s2a serve` on 127.0.0.1 and has `--clients` threads send a mix of real requests for
`--minutes`: text, a list of texts, HTML, /detect, a file translated and downloaded, bad
requests (bad JSON, no text, unknown route) and clients that hang up half-way. Every
`--every` seconds it samples the server's memory (RSS), open files (/proc/PID/fd), threads
and the latency of the interval's good requests (a row on stderr as it goes); at the end, the
table of samples on stdout and the slope of each figure per minute under load (the baseline,
taken before the clients start, left out): a leak shows as a slope that stays positive.

    .venv/bin/python bench/soak.py --minutes 10            # the embedded model
    .venv/bin/python bench/soak.py --model DIR --minutes 2 --every 10 --json soak.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
S2A = str(Path(sys.executable).parent / "s2a")
SENTENCES = ["je mange du pain .", "il voit un grand chat rouge .", "elle aime l'eau .",
             "nous avons un petit chien .", "tu es dans la maison ?"]  # fmt: skip
PAGE = "<p>je mange du <b>pain</b> .</p><p>il voit un <i>chat</i> .</p>"
FIGURES = ("rss_mb", "fds", "threads", "p50_ms", "p95_ms")
BOUNDARY = "s2asoak" + uuid.uuid4().hex  # of multipart forms


def start(model: Path, threads: int) -> tuple[subprocess.Popen, int]:
    """`s2a serve` on 127.0.0.1 and a free port; its process and port once it answers."""
    cmd = [S2A, "serve", "--model", str(model), "--host", "127.0.0.1", "--port", "0",
           "--threads", str(threads), "--req-limit", "0"]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = proc.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        proc.kill()
        raise RuntimeError(f"s2a serve did not start: {line}{proc.stderr.read()[-2000:]}")
    # its later lines (one per request, warnings) must not fill the pipe and block it
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    return proc, int(found[1])


def request(port: int, method: str, path: str, body: bytes = b"", kind: str = "json") -> int:
    """One HTTP request on a fresh connection; its status (the body is read and dropped)."""
    types = {"json": "application/json", "form": f"multipart/form-data; boundary={BOUNDARY}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body or None, headers={"Content-Type": types[kind]})
        reply = conn.getresponse()
        data = reply.read()
        if path == "/translate_file" and reply.status == 200:  # and fetch what it made
            url = json.loads(data)["translatedFileUrl"]
            return request(port, "GET", "/download_file/" + url.rsplit("/", 1)[1])
        return reply.status
    finally:
        conn.close()


def multipart(name: str, data: bytes) -> bytes:
    """A form with the file `name` holding `data`, and source and target."""
    parts = [f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in (("source", "fr"), ("target", "en"))]  # fmt: skip
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/plain\r\n\r\n").encode()  # fmt: skip
    return b"".join(parts) + head + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def hang_up(port: int, rng: random.Random) -> int:
    """A client that goes away: half a request, or a whole one whose answer it never reads."""
    body = json.dumps({"q": rng.choice(SENTENCES)}).encode()
    head = (f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + (body[: len(body) // 2] if rng.random() < 0.5 else body))
    return 0  # no status: it never waited for one


def mix(rng: random.Random) -> list[tuple[str, float, Callable[[int], int], set[int]]]:
    """(kind, weight, request on a port, statuses it may get) for each kind of client."""

    def post(body: bytes, path: str = "/translate") -> Callable[[int], int]:
        return lambda port: request(port, "POST", path, body)

    text = json.dumps({"q": rng.choice(SENTENCES), "source": "fr", "target": "en"}).encode()
    many = json.dumps({"q": rng.sample(SENTENCES, 3), "source": "auto", "target": "en"}).encode()
    html = json.dumps({"q": PAGE, "source": "fr", "target": "en", "format": "html"}).encode()
    detect = json.dumps({"q": rng.choice(SENTENCES)}).encode()
    file = multipart("notes.txt", "\n".join(rng.sample(SENTENCES, 2)).encode())
    return [
        ("text", 4, post(text), {200}), ("list", 2, post(many), {200}),
        ("html", 1, post(html), {200}), ("detect", 1, post(detect, "/detect"), {200}),
        ("file", 1, lambda port: request(port, "POST", "/translate_file", file, "form"), {200}),
        ("bad json", 0.5, post(b"{not json"), {400}), ("no text", 0.5, post(b"{}"), {400}),
        ("no route", 0.3, lambda port: request(port, "GET", "/nowhere"), {404}),
        ("hang up", 0.7, lambda port: hang_up(port, rng), {0}),
    ]  # fmt: skip


class Tally:
    """What the clients saw: latencies of good requests, and unexpected answers, by interval."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.counts: dict[str, int] = {}
        self.unexpected: list[str] = []

    def add(self, kind: str, seconds: float, status: int | str, expected: set[int]) -> None:
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if status not in expected:
                self.unexpected.append(f"{kind}: {status}")
            elif status == 200:
                self.latencies.append(seconds)

    def take(self) -> list[float]:
        """The latencies since the last call."""
        with self.lock:
            taken, self.latencies = self.latencies, []
        return taken


def client(port: int, seed: int, until: float, tally: Tally) -> None:
    """One client: requests from the mix, one after the other, until `until`."""
    rng = random.Random(seed)
    while time.monotonic() < until:
        kinds = mix(rng)
        kind, _, send, expected = rng.choices(kinds, weights=[k[1] for k in kinds])[0]
        start_s = time.perf_counter()
        try:
            status: int | str = send(port)
        except (OSError, http.client.HTTPException) as error:
            status = type(error).__name__
        tally.add(kind, time.perf_counter() - start_s, status, expected)


def sample(pid: int, latencies: list[float], minute: float) -> dict[str, float]:
    """The server's figures now, and those of the requests since the last sample."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines)  # "VmRSS:  123 kB"
    ordered = sorted(latencies) or [float("nan")]
    return {
        "minute": round(minute, 2), "requests": len(latencies),
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": int(status["Threads"]),
        "p50_ms": round(1000 * ordered[len(ordered) // 2], 1),
        "p95_ms": round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
    }  # fmt: skip


def slope(rows: list[dict[str, float]], figure: str) -> float:
    """Least-squares change of a figure per minute over the samples (0 with fewer than two)."""
    points = [(r["minute"], r[figure]) for r in rows if r[figure] == r[figure]]  # not NaN
    if len(points) < 2:
        return 0.0
    return statistics.linear_regression(*zip(*points, strict=True)).slope


def soak(model: Path, *, minutes: float, clients: int, every: float, threads: int) -> dict:
    """Run the soak; the samples, the slopes, the counts by kind and the unexpected answers."""
    proc, port = start(model, threads)
    tally = Tally()
    try:
        for kind, _, send, expected in mix(random.Random(0)):  # what loads lazily (the
            tally.add(kind, 0.0, send(port), expected)  # language detector) loads now
        began = time.monotonic()
        until = began + minutes * 60
        workers = [threading.Thread(target=client, args=(port, seed, until, tally), daemon=True)
                   for seed in range(clients)]  # fmt: skip
        tally.take()  # the warm-up's latencies are not the soak's
        rows = [sample(proc.pid, [], 0.0)]  # the baseline: warmed up, no client yet
        for worker in workers:
            worker.start()
        while time.monotonic() < until:
            time.sleep(min(every, max(0.0, until - time.monotonic())))
            rows.append(sample(proc.pid, tally.take(), (time.monotonic() - began) / 60))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
        for worker in workers:
            worker.join(timeout=90)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    slopes = {f: round(slope(rows[1:], f), 2) for f in FIGURES}  # under load: a leak's
    return {"samples": rows, "slopes_per_minute": slopes, "counts": tally.counts,
            "unexpected": tally.unexpected, "server_alive": alive}  # fmt: skip


def table(result: dict) -> str:
    """The samples as a table, then the slopes per minute."""
    columns = ("minute", "requests", *FIGURES)
    lines = [" ".join(f"{c:>9}" for c in columns)]
    lines += [" ".join(f"{row[c]:>9}" for c in columns) for row in result["samples"]]
    slopes = result["slopes_per_minute"]
    lines.append("slope/min " + " ".join(f"{f} {slopes[f]:+g}" for f in FIGURES))
    counts = ", ".join(f"{k} {n}" for k, n in sorted(result["counts"].items()))
    lines.append(f"requests: {counts}; unexpected answers: {len(result['unexpected'])}")
    return "\n".join(lines)


def main() -> None:
    """Parse the options, soak the server, print the table (and write JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    embedded = HERE.parent / "models" / "fr-en"
    parser.add_argument("--model", type=Path, default=embedded)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--threads", type=int, default=2, help="the server's CPU threads")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = soak(args.model, minutes=args.minutes, clients=args.clients, every=args.every,
                  threads=args.threads)  # fmt: skip
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if result["unexpected"] or not result["server_alive"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
