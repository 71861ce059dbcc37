"""Helpers shared by bench/run.py and bench/peers.py: processes, results, goals, tables."""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from flops import cpu_flags

BENCH = Path(__file__).resolve().parent
ROOT, WORK = BENCH.parent, BENCH / "work"
S2A = str(Path(sys.executable).parent / "s2a")  # the s2a of this venv
ONE_SENTENCE = "Je ne sais pas ce que tu veux dire."  # the one-sentence startup figure
Row = tuple[str, bool | None, str]
# torch's kernels held to an older instruction set (another host kind, emulated: bench/README.md)
KERNEL_LIMITS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS",
                 "FBGEMM_ENABLE_INSTRUCTIONS")  # fmt: skip


def run_process(
    cmd: list[str], *, stdin: Path | None = None, env: dict | None = None, limit_s: float = 0
) -> dict[str, Any]:
    """Run a command to its end (SIGINT after limit_s); wall s, peak RSS MB, stdout, stderr."""
    WORK.mkdir(parents=True, exist_ok=True)
    out, err = WORK / "proc.out", WORK / "proc.err"
    with open(stdin or os.devnull, "rb") as fin, open(out, "wb") as fo, open(err, "wb") as fe:
        start = time.perf_counter()
        # a shell's background job ignores SIGINT, and so would the child: the time limit
        # below could then not stop a peer's training (it ran 21 minutes instead of 5)
        proc = subprocess.Popen(cmd, stdin=fin, stdout=fo, stderr=fe, env=env,
                                preexec_fn=_default_sigint)  # fmt: skip
        pid = 0
        while limit_s and not pid and time.perf_counter() - start < limit_s:
            time.sleep(0.5)
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if not pid:
            if limit_s:
                proc.send_signal(signal.SIGINT)
            _, status, usage = os.wait4(proc.pid, 0)  # rusage includes the child's children
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = err.read_text(errors="replace")
    if proc.returncode and not limit_s:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... exited {proc.returncode}:\n{stderr[-3000:]}")
    rss = usage.ru_maxrss / 1024
    return {"wall": wall, "rss_mb": rss, "stdout": out.read_text(), "stderr": stderr}


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default, so Python turns it into Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (--threads)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give 1 or more")
    return value


def thread_env(threads: int, **extra: str) -> dict[str, str]:
    """The environment for child processes, with the thread count pinned."""
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), **extra}


def machine(threads: int) -> dict[str, Any]:
    """CPU model and flags, cores, torch version and threads: the line every figure belongs to."""
    import torch

    cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    limits = {name: os.environ[name] for name in KERNEL_LIMITS if os.environ.get(name)}
    return {"cpu": cpu[1] if cpu else "?", "flags": cpu_flags(), "limits": limits,
            "cores": os.cpu_count(), "torch": torch.__version__, "threads": threads,
            "date": when}  # fmt: skip


def bleu(hyps: list[str], refs: list[str]) -> float:
    """Corpus BLEU of detokenised hypotheses (sacrebleu defaults)."""
    import sacrebleu

    return round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)


def med(values: list[float]) -> float:
    """Median, rounded for the JSON."""
    return round(statistics.median(values), 4)


def results_path(quick: bool) -> Path:
    """bench/results.json; smoke tests (--quick) write theirs to bench/work/ instead."""
    return WORK / "results-quick.json" if quick else BENCH / "results.json"


def default_model() -> Path:
    """The embedded default model when the package ships it, else the reference run."""
    embedded = ROOT / "models" / "fr-en"
    return embedded if (embedded / "config.json").exists() else Path("/work/runs/fr-en")


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either was not measured."""
    return a / b if a and b else None


def same_host(results: dict[str, Any], peer: str) -> bool:
    """Whether a peer was measured on s2a's kind of host: CPU name, flags, kernel limits."""
    # The name alone is not enough: Intel's AVX-512 and AMX hosts both say "Intel(R) Xeon(R)
    # Processor". Figures from before flags were recorded count as another host.
    mine, theirs = results["s2a"]["machine"], results[peer].get("machine", {})
    if theirs.get("flags") is None:
        return False
    return all(theirs.get(k, {}) == mine.get(k, {}) for k in ("cpu", "flags", "limits"))


def host(info: dict[str, Any]) -> str:
    """A machine line as words: CPU name, flags and kernel limits."""
    flags = " ".join(info["flags"]) if "flags" in info else "flags not recorded"
    limits = " ".join(f"{k}={v}" for k, v in info.get("limits", {}).items())
    held = f", kernels held by {limits}: emulated" if limits else ""
    return f"{info.get('cpu', 'an unrecorded CPU')} ({flags}{held})"


def goals(results: dict[str, Any]) -> list[Row]:
    """The issue's goals as (goal, met, figures); met is None when not measured."""
    s, o = results["s2a"], results.get("opennmt-py")
    rows: list[Row] = [("vs OpenNMT-py", None, "run `make bench-peers`")]
    if o and not same_host(results, "opennmt-py"):
        there = host(o.get("machine", {}))
        rows = [("vs OpenNMT-py", None, f"measured on {there}, not here: `make bench-peers`")]
    elif o:
        when = f"OpenNMT-py of {o.get('machine', {}).get('date', '?')}"
        r = ratio(s["train_tok_per_s"], o["train_tok_per_s"])
        met = None if r is None else r >= 3
        detail = (f"{r:.2f}x" if r else "-") + f" ({when})"
        rows = [("training tok/s >= 3x OpenNMT-py", met, detail)]
        r = ratio(s["beam5_sent_per_s"], o["beam5_sent_per_s"])
        b = s["beam5_bleu"], o["beam5_bleu"]
        met = None if r is None else r >= 3 and b[0] >= b[1]
        detail = (f"{r:.2f}x" if r else "-") + f", BLEU {b[0]:.1f} vs {b[1]:.1f}"
        rows.append(("beam-5 sent/s >= 3x OpenNMT-py, BLEU no lower", met, detail))
    f = s["train_matmul_fraction"]
    precision = "bf16" if s.get("cpu", {}).get("bf16_native", True) else "fp32: no native bf16"
    rows.append((f"training >= 40% of matmul FLOP/s ({precision})", f >= 0.4, f"{f:.1%}"))
    one, imp = s["one_sentence_s"], s["import_torch_s"]
    detail = f"{one:.2f} s / {imp:.2f} s = {one / imp:.2f}x"
    rows.append(("one-sentence translate <= 1.5x import torch", one <= 1.5 * imp, detail))
    m = s["translate_peak_rss_mb"]
    rows.append(("translate peak RSS <= 400 MB", m <= 400, f"{m:.0f} MB"))
    return rows


def table(title: str, header: list[str], rows: list[list[Any]]) -> Any:
    """A rich table from plain rows (floats with one decimal)."""
    from rich.table import Table

    out = Table(title=title, title_justify="left")
    for i, col in enumerate(header):
        out.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        out.add_row(*(f"{v:,.1f}" if isinstance(v, float) else str(v or "-") for v in row))
    return out


def show_goals(console: Any, results: dict[str, Any]) -> None:
    """Print the goals with PASS/MISS."""
    mark = {None: "-", True: "[green]PASS[/]", False: "[red]MISS[/]"}
    rows = [[goal, mark[met], detail] for goal, met, detail in goals(results)]
    console.print(table("Goals", ["goal", "", "measured"], rows))
