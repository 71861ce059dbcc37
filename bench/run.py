"""Benchmark s2a on this machine: training speed, translation speed, BLEU, startup and memory."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT, WORK, RESULTS = BENCH.parent, BENCH / "work", BENCH / "results.json"
CORPUS = Path("/work/shared/data/tatoeba-fra-eng/fra.txt")
ONE_SENTENCE = "Je ne sais pas ce que tu veux dire."
ARCH = {"embed": 256, "hidden": 512, "layers": 1, "cell": "gru", "attention": "general"}
S2A = str(Path(sys.executable).parent / "s2a")
GOAL_TRAIN, GOAL_BEAM, GOAL_MATMUL, GOAL_START, GOAL_RSS = 3.0, 3.0, 0.40, 1.5, 400.0


def run_process(
    cmd: list[str], *, stdin: Path | None = None, env: dict[str, str] | None = None,
    limit_s: float = 0.0, name: str = "proc",
) -> dict[str, Any]:
    """Run a command to its end (SIGINT after limit_s); wall s, peak RSS MB, stdout, stderr."""
    WORK.mkdir(parents=True, exist_ok=True)
    out, err = WORK / f"{name}.out", WORK / f"{name}.err"
    with open(stdin or os.devnull, "rb") as fin, open(out, "wb") as fo, open(err, "wb") as fe:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=fin, stdout=fo, stderr=fe, env=env)
        while limit_s and time.perf_counter() - start < limit_s:
            if os.wait4(proc.pid, os.WNOHANG)[0]:  # ended by itself: reaped below from status
                raise RuntimeError(f"{cmd[0]} ended before its time limit; see {err}")
            time.sleep(0.5)
        if limit_s:
            proc.send_signal(signal.SIGINT)
        _, status, usage = os.wait4(proc.pid, 0)  # rusage covers the child's own children too
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode and not limit_s:
        tail = err.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd[:4])} ... exited {proc.returncode}:\n{tail}")
    return {"wall": wall, "rss_mb": usage.ru_maxrss / 1024, "stdout": out.read_text(),
            "stderr": err.read_text(errors="replace")}


def thread_env(threads: int, **extra: str) -> dict[str, str]:
    """The environment for child processes: the thread count pinned everywhere."""
    n = str(threads)
    return {**os.environ, "OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, **extra}


def machine(threads: int) -> dict[str, Any]:
    """CPU model, cores, torch version and threads: the line every result is tied to."""
    import torch

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    return {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "threads": threads,
            "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                    time.gmtime())}


def matmul_flops(dtype: str, threads: int, n: int) -> float:
    """Measured FLOP/s of an n x n torch.mm in fp32 or bf16 (median of 7 after a warm-up)."""
    import torch

    torch.set_num_threads(threads)
    a, b = (torch.randn(n, n).to(getattr(torch, dtype)) for _ in range(2))
    torch.mm(a, b)
    times = []
    for _ in range(7):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times)


def train_flops_per_token(model: dict[str, Any], src_mean: float, tgt_mean: float) -> float:
    """Matmul FLOPs of one training step per target token: 3 x forward (backward ~ 2 x forward).

    Forward, 2 FLOPs per multiply-add, embeddings excluded; E=embed, H=hidden, h=H/2,
    V=tgt_vocab, L=layers, G=3 gates (GRU; 4 LSTM); s=src_mean+1 and t=tgt_mean+1 pieces
    (with EOS) of a mean pair, so r=s/t source pieces per target piece and S=s keys per query:
      encoder per source piece: sum_l 2 dirs * G * 2 * (in_l*h + h*h), in_1=E, in_l=2h
      decoder RNN per target piece: sum_l G * 2 * (in_l*H + H*H), in_1=E, in_l=H
      attention: 2*S*H scores + 2*S*H context (+ 2*H*H "general", + 2*H*H*(1+r) + S*2*H
      "additive"); combine [h_t; c_t] -> H: 2*2H*H; output layer: 2*H*V; bridge: L*2*H*H/t
    per target piece = r * encoder + decoder + attention + combine + output + bridge.
    """
    e, big, layers, vocab = model["embed"], model["hidden"], model["layers"], model["tgt_vocab"]
    small, gates = big // 2, 4 if model["cell"] == "lstm" else 3
    s, t = src_mean + 1, tgt_mean + 1
    enc = sum(2 * gates * 2 * ((e if i == 0 else 2 * small) * small + small * small)
              for i in range(layers))
    dec = sum(gates * 2 * ((e if i == 0 else big) * big + big * big) for i in range(layers))
    attn = {"general": 2 * big * big, "dot": 0.0,
            "additive": 2 * big * big * (1 + s / t) + s * 2 * big}.get(model["attention"], 0.0)
    attn += 0.0 if model["attention"] == "none" else 4 * s * big
    fwd = s / t * enc + dec + attn + 2 * 2 * big * big + 2 * big * vocab + layers * 2 * big**2 / t
    return 3 * fwd


def batch_tokens_for(corpus: Path, spm: Path, sentences: int) -> tuple[int, float]:
    """The --batch-tokens whose length-bucketed batches hold `sentences` pairs on average."""
    from seq2attn_cli.data import batch_plan, read_pairs
    from seq2attn_cli.subwords import Subwords

    pairs, _ = read_pairs(corpus, src_col=1, tgt_col=2)
    sub = Subwords.load(spm)
    src, tgt = sub.encode([p[0] for p in pairs]), sub.encode([p[1] for p in pairs])
    lengths = [(len(s) + 1, len(t)) for s, t in zip(src, tgt, strict=True)]

    def mean(tokens: int) -> float:
        return len(lengths) / len(batch_plan(lengths, batch_tokens=tokens, seed=1, epoch=0))

    lo, hi = 8, 100_000
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if mean(mid) < sentences else (lo, mid)
    return lo, mean(lo)


def worker_train(spec: dict[str, Any]) -> dict[str, Any]:
    """In-process `train()` for warmup + steps; target tok/s over the steps after warm-up."""
    import torch

    from seq2attn_cli import training
    from seq2attn_cli.config import TrainConfig
    from seq2attn_cli.subwords import Subwords

    torch.set_num_threads(spec["threads"])
    spm, corpus, out = Path(spec["spm"]), Path(spec["corpus"]), Path(spec["out"])
    # the model's own pieces: same as the peers get, and no SentencePiece training per run
    training.train_subwords = lambda texts, **_: Subwords.load(spm)
    batch_tokens, per_batch = spec["batch_tokens"], None
    if spec["batch_sentences"]:
        batch_tokens, per_batch = batch_tokens_for(corpus, spm, spec["batch_sentences"])
    log: list[tuple[int, float, float, float]] = []  # step, time, epoch tokens so far, epoch start
    epoch_start = [0.0]

    def report(event: str, info: dict[str, Any]) -> None:
        now = time.monotonic()
        if event == "epoch":
            epoch_start[0] = now
        elif event == "step":  # tok_per_s runs over the epoch: invert it into a token count
            log.append((info["step"], now, info["tok_per_s"] * (now - epoch_start[0]),
                        epoch_start[0]))

    shutil.rmtree(out, ignore_errors=True)
    cfg = TrainConfig(src_col=1, tgt_col=2, max_steps=spec["warmup"] + spec["steps"],
                      batch_tokens=batch_tokens, amp=spec["amp"])
    training.train(corpus=corpus, out=out, model_options={**ARCH, "dropout": 0.2}, cfg=cfg,
                   valid=Path(spec["valid"]), device=torch.device("cpu"), report=report)
    tokens = seconds = 0.0
    for i, (step, now, done, start) in enumerate(log):
        same = i > 0 and log[i - 1][3] == start  # epoch ends (validation) are left out
        if step > spec["warmup"]:
            tokens += done - log[i - 1][2] if same else done
            seconds += now - log[i - 1][1] if same else now - start
    config = json.loads((out / "config.json").read_text())
    return {"tok_per_s": tokens / seconds, "tokens": round(tokens), "seconds": seconds,
            "batch_tokens": batch_tokens, "sentences_per_batch": per_batch,
            "model": config["model"], "src_mean": config["corpus"]["src_pieces_mean"],
            "tgt_mean": config["corpus"]["tgt_pieces_mean"]}


def worker_translate(spec: dict[str, Any]) -> dict[str, Any]:
    """In-process Translator: sentences/s over the test sources (model loading excluded)."""
    import torch

    from seq2attn_cli.translator import Translator

    torch.set_num_threads(spec["threads"])
    texts = Path(spec["source"]).read_text(encoding="utf-8").splitlines()
    tr = Translator.load(spec["model"], device=torch.device("cpu"),
                         quantized=spec["precision"] == "int8")
    bf16 = spec["precision"] == "bf16"
    with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext():
        tr.translate(texts[:16], beam=spec["beam"], batch_size=64)  # warm-up
        start = time.perf_counter()
        out = tr.translate(texts, beam=spec["beam"], batch_size=64)
        seconds = time.perf_counter() - start
    return {"sent_per_s": len(texts) / seconds, "hyps": [t.text for t in out]}


def worker(kind: str, spec: dict[str, Any], threads: int, name: str) -> dict[str, Any]:
    """Run one worker in its own process; its JSON answer plus the process's peak RSS."""
    cmd = [sys.executable, __file__, "--worker", kind, "--spec", json.dumps(spec)]
    proc = run_process(cmd, env=thread_env(threads), name=name)
    return {**json.loads(proc["stdout"].splitlines()[-1]), "rss_mb": proc["rss_mb"]}


def bleu(hyps: list[str], refs: list[str]) -> float:
    """Corpus BLEU of detokenised hypotheses (sacrebleu defaults)."""
    import sacrebleu

    return sacrebleu.corpus_bleu(hyps, [refs]).score


def median(values: list[float]) -> float:
    """Median, rounded for the JSON."""
    return round(statistics.median(values), 4)


def prepare_data(args: argparse.Namespace) -> dict[str, Any]:
    """Split the corpus once into bench/work/data; slice the train, valid and test files."""
    data = WORK / "data"
    if not (data / "test.tsv").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "split.py"), str(CORPUS),
                        str(data), "--src-col", "2", "--tgt-col", "1"], check=True)
    train = data / "train.tsv"
    if args.quick:
        train = WORK / "train-quick.tsv"
        train.write_text("".join(open(data / "train.tsv").readlines()[:3000]))
    pairs = [line.split("\t") for line in (data / "test.tsv").read_text().splitlines()]
    pairs = pairs[: args.sentences]
    (WORK / "test.fr").write_text("".join(p[0] + "\n" for p in pairs))
    valid = WORK / "valid-20.tsv"  # validation at the end of a timed run: keep it short
    valid.write_text("".join(open(data / "valid.tsv").readlines()[:20]))
    return {"train": train, "valid": valid, "source": WORK / "test.fr",
            "refs": [p[1] for p in pairs]}


def default_model() -> Path:
    """The embedded default model when the package ships it, else the reference run."""
    embedded = ROOT / "seq2attn_cli" / "models" / "fr-en"
    return embedded if (embedded / "config.json").exists() else Path("/work/runs/fr-en")


def goals(results: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    """The issue's goals as (goal, met or None when not measured, the figures)."""
    s, o = results["s2a"], results.get("opennmt-py")
    rows: list[tuple[str, bool | None, str]] = []
    if o:
        r = s["train_tok_per_s"] / o["train_tok_per_s"]
        rows.append((f"training tok/s >= {GOAL_TRAIN:g}x OpenNMT-py", r >= GOAL_TRAIN, f"{r:.2f}x"))
        r = s["beam5_sent_per_s"] / o["beam5_sent_per_s"]
        ok = r >= GOAL_BEAM and s["beam5_bleu"] >= o["beam5_bleu"]
        rows.append((f"beam-5 sent/s >= {GOAL_BEAM:g}x OpenNMT-py, BLEU no lower", ok,
                     f"{r:.2f}x, BLEU {s['beam5_bleu']:.1f} vs {o['beam5_bleu']:.1f}"))
    else:
        rows.append(("training and beam-5 vs OpenNMT-py", None, "run `make bench-peers`"))
    f = s["train_matmul_fraction"]
    rows.append((f"training >= {GOAL_MATMUL:.0%} of matmul FLOP/s", f >= GOAL_MATMUL, f"{f:.1%}"))
    r = s["one_sentence_s"] / s["import_torch_s"]
    rows.append((f"one sentence <= {GOAL_START:g}x import torch", r <= GOAL_START,
                 f"{s['one_sentence_s']:.2f} s / {s['import_torch_s']:.2f} s = {r:.2f}x"))
    m = s["translate_peak_rss_mb"]
    rows.append((f"translate peak RSS <= {GOAL_RSS:g} MB", m <= GOAL_RSS, f"{m:.0f} MB"))
    return rows


def show_goals(console: Any, results: dict[str, Any]) -> None:
    """Print the goals with PASS/MISS."""
    from rich.table import Table

    table = Table(title="Goals")
    for col in ("goal", "result", "measured"):
        table.add_column(col)
    for goal, met, detail in goals(results):
        verdict = "-" if met is None else "[green]PASS[/]" if met else "[red]MISS[/]"
        table.add_row(goal, verdict, detail)
    console.print(table)


def table(title: str, header: list[str], rows: list[list[Any]]) -> Any:
    """A rich table from plain rows."""
    from rich.table import Table

    t = Table(title=title)
    for i, col in enumerate(header):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(f"{v:,.1f}" if isinstance(v, float) else str(v) for v in row))
    return t


def main() -> None:
    """Measure, print the tables and merge the "s2a" object into bench/results.json."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=300, help="timed training steps per run")
    p.add_argument("--warmup", type=int, default=20, help="untimed training steps first")
    p.add_argument("--sentences", type=int, default=2000, help="test sentences to translate")
    p.add_argument("--repeats", type=int, default=3, help="runs per figure (medians)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--model", type=Path, default=None, help="model for the translation figures")
    p.add_argument("--quick", action="store_true", help="tiny smoke-test settings")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        fn = {"train": worker_train, "translate": worker_translate}[args.worker]
        print(json.dumps(fn(json.loads(args.spec))))
        return
    if args.quick:
        args.steps, args.warmup, args.sentences, args.repeats = 10, 3, 50, 1
    from rich.console import Console

    console = Console()
    model = (args.model or default_model()).resolve()
    data, n, t = prepare_data(args), args.sentences, args.threads
    info = machine(t)
    console.print(f"[bold]{info['cpu']}[/], {info['cores']} cores, torch {info['torch']}, "
                  f"{t} threads; model {model}")
    base = {"spm": str(model / "spm.model"), "corpus": str(data["train"]), "threads": t,
            "valid": str(data["valid"]), "warmup": args.warmup, "steps": args.steps}
    variants = [("bf16 autocast, 1500 tok (default)", True, 1500, 0, args.repeats),
                ("fp32 (--no-amp), 1500 tok", False, 1500, 0, 1),
                ("bf16 autocast, 64 sentences", True, 0, 64, 1)]
    runs: dict[str, list[dict[str, Any]]] = {v[0]: [] for v in variants}
    flops: dict[str, list[float]] = {"float32": [], "bfloat16": []}
    for rep in range(args.repeats):
        for label, amp, tokens, sentences, times in variants:
            if rep < times:
                for dtype in flops:
                    flops[dtype].append(matmul_flops(dtype, t, 1024 if args.quick else 2048))
                console.print(f"training: {label}, run {rep + 1}")
                spec = {**base, "amp": amp, "batch_tokens": tokens, "batch_sentences": sentences,
                        "out": str(WORK / "train-run")}
                runs[label].append(worker("train", spec, t, "train"))
    peak = {k: statistics.median(v) for k, v in flops.items()}
    train_rows, train_detail = [], {}
    for label, amp, *_ in variants:
        r = runs[label]
        rate = median([x["tok_per_s"] for x in r])
        fpt = train_flops_per_token(r[0]["model"], r[0]["src_mean"], r[0]["tgt_mean"])
        achieved = rate * fpt
        frac = achieved / peak["bfloat16" if amp else "float32"]
        spb = r[0]["sentences_per_batch"]
        train_detail[label] = {"tok_per_s": rate, "runs": [x["tok_per_s"] for x in r],
                               "flops_per_tok": fpt, "achieved_gflops": achieved / 1e9,
                               "matmul_fraction": frac, "batch_tokens": r[0]["batch_tokens"],
                               "sentences_per_batch": spb, "peak_rss_mb": max(x["rss_mb"] for x in r)}
        train_rows.append([label + (f" ({spb:.0f}/batch)" if spb else ""), rate, len(r),
                           achieved / 1e9, f"{achieved / peak['float32']:.0%}",
                           f"{achieved / peak['bfloat16']:.0%}", max(x["rss_mb"] for x in r)])
    main_label = variants[0][0]
    console.print(table(
        f"Training ({args.steps} steps after {args.warmup} warm-up; matmul fp32 "
        f"{peak['float32'] / 1e9:.0f}, bf16 {peak['bfloat16'] / 1e9:.0f} GFLOP/s)",
        ["variant", "target tok/s", "runs", "GFLOP/s", "of fp32 mm", "of bf16 mm", "RSS MB"],
        train_rows))
    lib: dict[str, Any] = {}
    for precision in ("int8", "float", "bf16"):
        for beam in (1, 5):
            spec = {"model": str(model), "source": str(data["source"]), "threads": t,
                    "precision": precision, "beam": beam}
            rs = [worker("translate", spec, t, "translate") for _ in range(args.repeats)]
            lib[f"{precision} beam{beam}"] = {
                "sent_per_s": median([r["sent_per_s"] for r in rs]),
                "bleu": round(bleu(rs[0]["hyps"], data["refs"]), 2),
                "peak_rss_mb": max(r["rss_mb"] for r in rs)}
    console.print(table(f"Translation in-process ({n} sentences, batch 64)",
                        ["precision, search", "sent/s", "BLEU", "RSS MB"],
                        [[k, v["sent_per_s"], v["bleu"], v["peak_rss_mb"]]
                         for k, v in lib.items()]))
    env, cli = thread_env(t), [S2A, "translate", "--model", str(model), "--threads", str(t)]
    one, imp = [], []
    for _ in range(args.repeats + 2):
        imp.append(run_process([sys.executable, "-c", "import torch"], env=env)["wall"])
        one.append(run_process(cli + [ONE_SENTENCE], env=env, name="one")["wall"])
    whole: dict[int, dict[str, Any]] = {}
    for beam in (1, 5):
        rs = [run_process(cli + ["--beam", str(beam)], stdin=data["source"], env=env)
              for _ in range(args.repeats)]
        wall = statistics.median(r["wall"] for r in rs)
        whole[beam] = {"wall": wall, "rss_mb": max(r["rss_mb"] for r in rs),
                       "sent_per_s": n / max(wall - statistics.median(one), 1e-3),
                       "bleu": bleu(rs[0]["stdout"].splitlines(), data["refs"])}
    console.print(table(
        f"Whole process: s2a translate, int8 ({n} sentences; sent/s = {n} / (wall - one-"
        "sentence wall))", ["search", "wall s", "sent/s", "BLEU", "peak RSS MB"],
        [[f"beam {b}", w["wall"], w["sent_per_s"], w["bleu"], w["rss_mb"]]
         for b, w in whole.items()]))
    s2a = {
        "train_tok_per_s": train_detail[main_label]["tok_per_s"],
        "beam5_sent_per_s": round(whole[5]["sent_per_s"], 2),
        "greedy_sent_per_s": round(whole[1]["sent_per_s"], 2),
        "beam5_bleu": round(whole[5]["bleu"], 2),
        "one_sentence_s": median(one), "import_torch_s": median(imp),
        "translate_peak_rss_mb": round(whole[5]["rss_mb"], 1),
        "train_peak_rss_mb": round(train_detail[main_label]["peak_rss_mb"], 1),
        "train_matmul_fraction": round(train_detail[main_label]["matmul_fraction"], 4),
        "machine": info, "model": str(model),
        "settings": {"steps": args.steps, "warmup": args.warmup, "sentences": n,
                     "repeats": args.repeats, "quick": args.quick, "batch": "1500 target tokens"},
        "matmul_gflops": {k: round(v / 1e9, 1) for k, v in peak.items()},
        "training": train_detail, "translation_in_process": lib,
    }
    console.print(f"one sentence {s2a['one_sentence_s']:.2f} s; python -c 'import torch' "
                  f"{s2a['import_torch_s']:.2f} s")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["s2a"] = s2a
    show_goals(console, results)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    console.print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
