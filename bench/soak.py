"""Soak `s2a serve`: clients that never stop, and whether the server holds up under them.

Starts `s2a serve` on 127.0.0.1 and has `--clients` threads send a mix of real requests for
`--minutes`: text, a list of texts, HTML, /detect, a file translated and downloaded, bad
requests (bad JSON, no text, unknown route) and clients that hang up half-way. Each request
is sent once alone before the clients start; from then on every answer to it must be the
same (the translation, the language, the file, the refusal) or it counts as wrong. Every
`--every` seconds it samples the server's memory (RSS), open files (/proc/PID/fd), threads,
the latency of the interval's good requests and the machine's load (a row on stderr as it
goes); at the end, the table of samples on stdout, the slope of each figure per minute under
load, and the first `--window` minutes against the last: RSS growth, descriptors, p95.

    .venv/bin/python bench/soak.py                         # 30 minutes, 8 clients, fr-en
    .venv/bin/python bench/soak.py --model DIR --minutes 2 --every 10 --json soak.json
"""

from __future__ import annotations

import argparse
import http.client
import itertools
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
FIGURES = ("rss_mb", "fds", "threads", "p50_ms", "p95_ms", "load1")
MIX = {"text": 4, "list": 2, "html": 1, "detect": 1, "file": 1, "bad json": 0.5,
           "no text": 0.5, "no route": 0.3, "hang up": 0.7}  # fmt: skip
BOUNDARY = "s2asoak" + uuid.uuid4().hex  # of multipart forms
Answer = tuple[int, str]  # a status, and what must be the same each time the request is sent
Send = Callable[[int, random.Random], Answer]  # a request, sent to a port
Catalog = dict[str, list[tuple[Send, set[int]]]]  # by kind: each request, the statuses due


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


def request(port: int, method: str, path: str, body: bytes = b"", kind: str = "json") -> Answer:
    """One HTTP request on a fresh connection: its status, and the gist of its answer."""
    types = {"json": "application/json", "form": f"multipart/form-data; boundary={BOUNDARY}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body or None, headers={"Content-Type": types[kind]})
        reply = conn.getresponse()
        data = reply.read()
    finally:
        conn.close()
    if reply.status != 200:
        return reply.status, data.decode(errors="replace")  # the refusal, word for word
    if path == "/translate_file":  # and fetch what it made: the file is its answer
        url = json.loads(data)["translatedFileUrl"]
        return request(port, "GET", "/download_file/" + url.rsplit("/", 1)[1])
    if path == "/translate":  # the translation (a confidence may differ in its last digit)
        return 200, json.dumps(json.loads(data)["translatedText"], ensure_ascii=False)
    if path == "/detect":
        return 200, json.loads(data)[0]["language"]
    return 200, data.decode(errors="replace")  # a downloaded file


def multipart(name: str, data: bytes) -> bytes:
    """A form with the file `name` holding `data`, and source and target."""
    parts = [f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in (("source", "fr"), ("target", "en"))]  # fmt: skip
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/plain\r\n\r\n").encode()  # fmt: skip
    return b"".join(parts) + head + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def hang_up(port: int, rng: random.Random) -> Answer:
    """A client that goes away: half a request, or a whole one whose answer it never reads."""
    body = json.dumps({"q": rng.choice(SENTENCES)}).encode()
    head = (f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + (body[: len(body) // 2] if rng.random() < 0.5 else body))
    return 0, ""  # no status: it never waited for one


def catalog() -> Catalog:
    """Every request a client may send, by kind: (the request, the statuses it may get)."""

    def post(q: object, path: str = "/translate", **more: str) -> tuple[Send, set[int]]:
        body = json.dumps({"q": q, **more}).encode()
        return (lambda port, rng: request(port, "POST", path, body)), {200}

    def upload(lines: tuple[str, ...]) -> tuple[Send, set[int]]:
        form = multipart("notes.txt", "\n".join(lines).encode())
        return (lambda port, rng: request(port, "POST", "/translate_file", form, "form")), {200}

    fr_en = {"source": "fr", "target": "en"}
    return {
        "text": [post(s, **fr_en) for s in SENTENCES],
        "list": [post(list(three), source="auto", target="en")
                 for three in itertools.permutations(SENTENCES, 3)],
        "html": [post(PAGE, **fr_en, format="html")],
        "detect": [post(s, "/detect") for s in SENTENCES],
        "file": [upload(two) for two in itertools.permutations(SENTENCES, 2)],
        "bad json": [(lambda port, rng: request(port, "POST", "/translate", b"{not json"), {400})],
        "no text": [(lambda port, rng: request(port, "POST", "/translate", b"{}"), {400})],
        "no route": [(lambda port, rng: request(port, "GET", "/nowhere"), {404})],
        "hang up": [(hang_up, {0})],
    }  # fmt: skip


class Tally:
    """What the clients saw: latencies of good requests, and wrong answers, by interval."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.counts: dict[str, int] = {}
        self.wrong: list[str] = []
        self.first: dict[tuple[str, int], str] = {}  # (kind, index): the answer sent alone

    def add(self, kind: str, index: int, seconds: float, got: Answer | str, due: set[int]) -> None:
        """Count one answer: wrong if its status is not due or it differs from the first."""
        status, gist = got if isinstance(got, tuple) else (got, "")
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            key, ok = (kind, index), status in due
            if ok:  # the first answer due is the one every later answer must be
                self.first.setdefault(key, gist)
            first = self.first.get(key, "")
            if not ok or gist != first:
                self.wrong.append(
                    f"{kind} #{index}: {status} {gist[:120]!r} (first {first[:120]!r})"
                )
            elif status == 200:
                self.latencies.append(seconds)

    def take(self) -> list[float]:
        """The latencies since the last call."""
        with self.lock:
            taken, self.latencies = self.latencies, []
        return taken


def send(
    port: int, kinds: Catalog, kind: str, index: int, rng: random.Random, tally: Tally
) -> None:
    """Send the catalog's request `index` of `kind`; count its answer and its time."""
    how, due = kinds[kind][index]
    began = time.perf_counter()
    try:
        got: Answer | str = how(port, rng)
    except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
        got = type(error).__name__  # refused, cut, timed out, or not the JSON it should be
    tally.add(kind, index, time.perf_counter() - began, got, due)


def client(port: int, kinds: Catalog, seed: int, until: float, tally: Tally) -> None:
    """One client: requests from the mix, one after the other, until `until`."""
    rng = random.Random(seed)
    while time.monotonic() < until:
        kind = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        send(port, kinds, kind, rng.randrange(len(kinds[kind])), rng, tally)


def sample(pid: int, latencies: list[float], minute: float) -> dict[str, float]:
    """The server's figures now, those of the requests since the last sample, the load."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines)  # "VmRSS:  123 kB"
    return {
        "minute": round(minute, 2), "requests": len(latencies),
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": int(status["Threads"]),
        "p50_ms": round(1000 * percentile(latencies, 0.5), 1),
        "p95_ms": round(1000 * percentile(latencies, 0.95), 1),
        "load1": float(Path("/proc/loadavg").read_text().split()[0]),
    }  # fmt: skip


def percentile(values: list[float], share: float) -> float:
    """The value `share` of the way up the sorted values (NaN for none)."""
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def slope(rows: list[dict[str, float]], figure: str) -> float:
    """Least-squares change of a figure per minute over the samples (0 with fewer than two)."""
    points = [(r["minute"], r[figure]) for r in rows if r[figure] == r[figure]]  # not NaN
    if len(points) < 2:
        return 0.0
    return statistics.linear_regression(*zip(*points, strict=True)).slope


def soak(model: Path, *, minutes: float, clients: int, every: float, threads: int) -> dict:
    """Run the soak; the samples, each interval's latencies, the counts and the wrong answers."""
    proc, port = start(model, threads)
    kinds, tally, rows, latencies = catalog(), Tally(), [], []
    try:
        for kind, requests in kinds.items():  # each alone first: the answer due from now on
            for index in range(len(requests)):  # (what loads lazily, the detector, loads now)
                send(port, kinds, kind, index, random.Random(index), tally)
        tally.take()  # the warm-up's latencies are not the soak's
        began = time.monotonic()
        until = began + minutes * 60
        workers = [threading.Thread(target=client, args=(port, kinds, seed, until, tally),
                                    daemon=True) for seed in range(clients)]  # fmt: skip
        rows.append(sample(proc.pid, [], 0.0))  # the baseline: warmed up, no client yet
        for worker in workers:
            worker.start()
        while time.monotonic() < until:
            time.sleep(min(every, max(0.0, until - time.monotonic())))
            latencies.append(tally.take())
            rows.append(sample(proc.pid, latencies[-1], (time.monotonic() - began) / 60))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
        for worker in workers:
            worker.join(timeout=90)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"samples": rows, "latencies": latencies, "counts": tally.counts,
            "wrong": tally.wrong, "server_alive": alive}  # fmt: skip


def verdict(rows: list[dict[str, float]], latencies: list[list[float]], window: float) -> dict:
    """The first `window` minutes under load against the last: RSS, open files, p95, load."""
    loaded = rows[1:]  # latencies[i] are those of loaded[i]
    end = loaded[-1]["minute"]
    first = [i for i, r in enumerate(loaded) if r["minute"] <= window + 0.01] or [0]
    last = [i for i, r in enumerate(loaded) if r["minute"] >= end - window - 0.01]
    settled = loaded[first[-1]]  # warmed up: the end of the first window

    def p95(samples: list[int]) -> float:
        return round(1000 * percentile([s for i in samples for s in latencies[i]], 0.95), 1)

    def mean(figure: str, samples: list[int]) -> float:
        return round(statistics.fmean(loaded[i][figure] for i in samples), 2)

    pairs = [(r["p95_ms"], r["load1"]) for r in loaded if r["p95_ms"] == r["p95_ms"]]
    flat = len(pairs) < 3 or len({p for p, _ in pairs}) < 2 or len({x for _, x in pairs}) < 2
    return {
        "window_minutes": window, "rss_settled_mb": settled["rss_mb"],
        "rss_end_mb": loaded[-1]["rss_mb"],
        "rss_peak_after_mb": max(r["rss_mb"] for r in loaded[first[-1]:]),
        "rss_growth_pct": round(100 * (loaded[-1]["rss_mb"] / settled["rss_mb"] - 1), 2),
        "fds_baseline": rows[0]["fds"], "fds_first_max": max(loaded[i]["fds"] for i in first),
        "fds_last_max": max(loaded[i]["fds"] for i in last),
        "p95_first_ms": p95(first), "p95_last_ms": p95(last),
        "p95_change_pct": round(100 * (p95(last) / p95(first) - 1), 1),
        "load1_first": mean("load1", first), "load1_last": mean("load1", last),
        "p95_load_correlation": None if flat else round(statistics.correlation(
            *zip(*pairs, strict=True)), 2),
        "slopes_after_window": {f: round(slope(loaded[first[-1]:], f), 3) for f in FIGURES},
    }  # fmt: skip


def table(result: dict) -> str:
    """The samples as a table, the slopes per minute, the first window against the last."""
    columns = ("minute", "requests", *FIGURES)
    lines = [" ".join(f"{c:>9}" for c in columns)]
    lines += [" ".join(f"{row[c]:>9}" for c in columns) for row in result["samples"]]
    v = result["verdict"]
    for name, slopes in (
        ("under load", result["slopes_per_minute"]),
        (f"after minute {v['window_minutes']:g}", v["slopes_after_window"]),
    ):
        lines.append(f"slope/min {name}: " + ", ".join(f"{f} {slopes[f]:+g}" for f in FIGURES))
    w = f"{v['window_minutes']:g} min"
    met = {True: "met", False: "MISSED"}
    lines += [
        f"RSS after the first {w}: {v['rss_settled_mb']} -> {v['rss_end_mb']} MB at the end "
        f"({v['rss_growth_pct']:+g}%; peak {v['rss_peak_after_mb']}): target < 5%, "
        f"{met[v['rss_growth_pct'] < 5]}",
        f"open files: {v['fds_baseline']} before the clients, at most {v['fds_first_max']} in "
        f"the first {w}, {v['fds_last_max']} in the last: target no growth, "
        f"{met[v['fds_last_max'] <= v['fds_first_max']]}",
        f"p95 latency: {v['p95_first_ms']} ms in the first {w}, {v['p95_last_ms']} ms in the "
        f"last ({v['p95_change_pct']:+g}%): target at most 20% slower, "
        f"{met[v['p95_change_pct'] <= 20]}",
        f"machine load (1-min average): {v['load1_first']} in the first {w}, {v['load1_last']} "
        f"in the last; p95 against load, correlation {v['p95_load_correlation']}",
    ]  # fmt: skip
    counts = ", ".join(f"{k} {n}" for k, n in sorted(result["counts"].items()))
    lines.append(f"requests: {counts}; wrong answers: {len(result['wrong'])}")
    return "\n".join(lines + [f"  {wrong}" for wrong in result["wrong"][:20]])


def main() -> None:
    """Parse the options, soak the server, print the table (and write JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    embedded = HERE.parent / "models" / "fr-en"
    parser.add_argument("--model", type=Path, default=embedded)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--window", type=float, default=5.0, help="minutes compared, first/last")
    parser.add_argument("--threads", type=int, default=2, help="the server's CPU threads")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = soak(args.model, minutes=args.minutes, clients=args.clients, every=args.every,
                  threads=args.threads)  # fmt: skip
    rows = result["samples"]
    result["slopes_per_minute"] = {f: round(slope(rows[1:], f), 3) for f in FIGURES}
    result["verdict"] = verdict(rows, result.pop("latencies"), args.window)
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if result["wrong"] or not result["server_alive"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
