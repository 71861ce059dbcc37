"""Benchmark s2a on this machine: training speed, translation speed, BLEU, startup and memory."""

from __future__ import annotations

import argparse
import itertools
import json
import lzma
import random
import shutil
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from common import (
    ONE_SENTENCE,
    ROOT,
    S2A,
    WORK,
    bleu,
    default_model,
    host,
    machine,
    med,
    positive,
    results_path,
    run_process,
    show_goals,
    table,
    thread_env,
)
from flops import cpu_features, matmul_flops, train_flops_per_token
from serving import measure_serving

SHARED = Path("/work/shared/data")
CORPUS = SHARED / "tatoeba-fra-eng" / "fra.txt"
ARCH = {"embed": 256, "hidden": 512, "layers": 1, "cell": "gru", "attention": "general"}
# the real mix's lengths: Europarl's long debate sentences beside everyday ones and news
MIX = {"europarl-fra-eng/europarl-v7.tsv.xz": 6000, "tatoeba-fra-eng/fra.txt": 3000,
       "wmt-news-fra-eng/newstest2011.tsv": 1000}  # fmt: skip


def batch_tokens_for(corpus: Path, spm: Path, sentences: int) -> tuple[int, float]:
    """The batch_tokens whose length-bucketed batches hold `sentences` pairs on average."""
    from seq2attn_cli.data.batching import batch_plan
    from seq2attn_cli.data.reading import read_pairs
    from seq2attn_cli.data.subwords import Subwords

    pairs, _ = read_pairs(corpus, src_col=1, tgt_col=2)
    sub = Subwords.load(spm)
    src, tgt = sub.encode([p[0] for p in pairs]), sub.encode([p[1] for p in pairs])
    src_lengths, tgt_lengths = [len(s) + 1 for s in src], [len(t) for t in tgt]
    examples = list(range(len(pairs)))

    def mean(tokens: int) -> float:
        plan = batch_plan(src_lengths, tgt_lengths, examples, batch_tokens=tokens, seed=1, epoch=0)
        return len(examples) / len(plan)

    lo, hi = 8, 100_000
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if mean(mid) < sentences else (lo, mid)
    return lo, mean(lo)


def worker_train(spec: dict[str, Any]) -> dict[str, Any]:
    """In-process train() for warmup + steps; target tok/s over the steps after the warm-up."""
    import torch

    from seq2attn_cli.config import CorpusSpec, TrainConfig
    from seq2attn_cli.data.subwords import Subwords
    from seq2attn_cli.training import loop as training

    torch.set_num_threads(spec["threads"])
    spm, corpus, out = Path(spec["spm"]), Path(spec["corpus"]), Path(spec["out"])
    # the translation model's own pieces, as the peers get: no SentencePiece training per run
    given_pieces = lambda texts, **_: Subwords.load(spm)  # noqa: E731
    batch_tokens, per_batch = spec["batch_tokens"], None
    if spec["batch_sentences"]:
        batch_tokens, per_batch = batch_tokens_for(corpus, spm, spec["batch_sentences"])
    log: list[tuple[int, float, float, float]] = []  # step, time, epoch's tokens, epoch start
    epoch = [0.0]

    def report(event: str, info: dict[str, Any]) -> None:
        now = time.monotonic()
        if event == "epoch":
            epoch[0] = now
        elif event == "step":  # tok_per_s runs over the epoch: turn it back into tokens
            log.append((info["step"], now, info["tok_per_s"] * (now - epoch[0]), epoch[0]))

    shutil.rmtree(out, ignore_errors=True)
    steps = spec["warmup"] + spec["steps"]
    cfg = TrainConfig(max_steps=steps, batch_tokens=batch_tokens, amp=spec["amp"])
    options = {**ARCH, "dropout": 0.2, "input_feed": spec["input_feed"]}
    valid, cpu = Path(spec["valid"]), torch.device("cpu")
    training.train(corpora=[CorpusSpec(path=str(corpus))], out=out, model_options=options,
                   cfg=cfg, valid=[CorpusSpec(path=str(valid))], device=cpu, report=report,
                   subword_trainer=given_pieces)  # fmt: skip
    tokens = seconds = 0.0
    for i, (step, now, done, start) in enumerate(log):
        same = i > 0 and log[i - 1][3] == start  # validation at an epoch's end is left out
        if step > spec["warmup"]:
            tokens += done - log[i - 1][2] if same else done
            seconds += now - log[i - 1][1] if same else now - start
    config = json.loads((out / "config.json").read_text())
    stats = pieces_per_sentence(corpus, spm)
    config["model"]["input_feed"] = spec["input_feed"]
    return {"tok_per_s": tokens / seconds, "batch_tokens": batch_tokens, "per_batch": per_batch,
            "model": config["model"], "src_mean": stats[0], "tgt_mean": stats[1]}  # fmt: skip


def pieces_per_sentence(corpus: Path, spm: Path) -> tuple[float, float]:
    """Mean source and target pieces per pair of a corpus."""
    from seq2attn_cli.data.reading import read_pairs
    from seq2attn_cli.data.subwords import Subwords

    pairs, _ = read_pairs(corpus)
    sub = Subwords.load(spm)
    src, tgt = sub.encode([p[0] for p in pairs]), sub.encode([p[1] for p in pairs])
    return sum(map(len, src)) / len(src), sum(map(len, tgt)) / len(tgt)


def worker_translate(spec: dict[str, Any]) -> dict[str, Any]:
    """In-process Translator: sentences/s over the test sources (model loading left out).

    As seq2attn_cli.load gives it (search.batched.side_by_side); with "other_threads", the
    arrangement it did not choose: batches side by side, one thread each, or one batch at a
    time over torch's `threads` threads (the A/B behind the choice)."""
    import torch

    import seq2attn_cli
    from seq2attn_cli.decoding.search.batched import side_by_side
    from seq2attn_cli.decoding.translator import Translator

    texts = Path(spec["source"]).read_text(encoding="utf-8").splitlines()
    int8, beam = spec["precision"] == "int8", spec["beam"]
    if spec.get("other_threads"):
        chosen = side_by_side(spec["threads"])
        other = spec["threads"] if chosen == 1 else 1
        torch.set_num_threads(spec["threads"] // other)
        cpu = torch.device("cpu")
        tr = Translator.load(spec["model"], device=cpu, quantized=int8, threads=other)
        arrangement = "batches side by side" if other > 1 else "threads inside each op"
    else:
        tr = seq2attn_cli.load(spec["model"], quantized=int8, threads=spec["threads"])
        arrangement = None  # s2a's own choice: its rows are named by precision alone
    bf16 = spec["precision"] == "bf16"
    with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext():
        tr.translate(texts[:16], beam=beam)  # warm-up, at the default batch size
        start = time.perf_counter()
        out = tr.translate(texts, beam=beam)
        seconds = time.perf_counter() - start
    hyps = [t.text for t in out]
    return {"sent_per_s": len(texts) / seconds, "hyps": hyps, "arrangement": arrangement}


def worker(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Run one worker in a process of its own: its JSON answer plus the peak RSS."""
    cmd = [sys.executable, __file__, "--worker", kind, "--spec", json.dumps(spec)]
    proc = run_process(cmd, env=thread_env(spec["threads"]))
    return {**json.loads(proc["stdout"].splitlines()[-1]), "rss_mb": proc["rss_mb"]}


def prepare_data(sentences: int, quick: bool) -> dict[str, Any]:
    """Split the corpus once into bench/work/data; cut the slices a run uses."""
    data = WORK / "data"
    if not (data / "test.tsv").exists():
        split = [sys.executable, str(ROOT / "scripts" / "split.py"), str(CORPUS), str(data)]
        subprocess.run(split + ["--src-col", "2", "--tgt-col", "1"], check=True)
    train = data / "train.tsv"
    if quick:
        train = WORK / "train-quick.tsv"
        train.write_text("".join((data / "train.tsv").open().readlines()[:3000]))
    pairs = [line.split("\t") for line in (data / "test.tsv").read_text().splitlines()]
    (WORK / "test.fr").write_text("".join(p[0] + "\n" for p in pairs[:sentences]))
    valid = WORK / "valid-20.tsv"  # validation at the end of a timed run: keep it short
    valid.write_text("".join((data / "valid.tsv").open().readlines()[:20]))
    refs = [p[1] for p in pairs[:sentences]]
    mix = prepare_mix(3000 if quick else 0)
    return {"train": train, "valid": valid, "source": WORK / "test.fr", "refs": refs, "mix": mix}


def prepare_mix(limit: int) -> Path:
    """bench/work/mix.tsv, French first: a fixed sample of each corpus in MIX (limit: fewer)."""
    mix = WORK / ("mix-quick.tsv" if limit else "mix.tsv")
    if mix.exists():
        return mix
    lines: list[str] = []
    for name, count in MIX.items():
        path = SHARED / name
        with (lzma.open if path.suffix == ".xz" else open)(path, "rt", encoding="utf-8") as f:
            head = list(itertools.islice(f, 50 * count))  # English<TAB>French
        for line in random.Random(7).sample(head, count):
            en, fr = line.rstrip("\n").split("\t")[:2]
            lines.append(f"{fr}\t{en}\n")
    random.Random(8).shuffle(lines)
    mix.write_text("".join(lines[: limit or None]), encoding="utf-8")
    return mix


def measure_training(args: argparse.Namespace, data: dict, model: Path, console: Any) -> dict:
    """Training tok/s per variant (medians), achieved FLOP/s and its fraction of matmul's."""
    # the default every repeat; the others once: (label, amp, batch tokens, batch sentences)
    bf16 = cpu_features()["bf16_native"]  # amp is fp32 where bf16 is emulated (run.bf16_helps)
    auto = "bf16 amp" if bf16 else "amp (fp32 here: no native bf16)"
    # (label, amp, batch tokens, batch sentences, input feeding, corpus)
    tatoeba, mix = data["train"], data["mix"]
    variants = [(f"{auto}, 1500 tok (default)", True, 1500, 0, False, tatoeba),
                ("fp32 (--no-amp), 1500 tok", False, 1500, 0, False, tatoeba),
                (f"{auto}, 64 sentences", True, 0, 64, False, tatoeba),
                (f"shipped: input feeding, real mix, {auto}", True, 1500, 0, True, mix),
                ("shipped: input feeding, real mix, fp32", False, 1500, 0, True, mix)]  # fmt: skip
    base = {"spm": str(model / "spm.model"), "out": str(WORK / "t"),
            "valid": str(data["valid"]), "threads": args.threads, "warmup": args.warmup,
            "steps": args.steps}  # fmt: skip
    runs: dict[str, list[dict[str, Any]]] = {v[0]: [] for v in variants}
    flops: dict[str, list[float]] = {"float32": [], "bfloat16": []} if bf16 else {"float32": []}
    for rep in range(args.repeats):
        for label, amp, tokens, sentences, feed, corpus in variants[: 1 if rep else None]:
            for dtype in flops:
                flops[dtype].append(matmul_flops(dtype, args.threads, 1024 if args.quick else 2048))
            console.print(f"training: {label}, run {rep + 1}")
            spec = {**base, "amp": amp, "batch_tokens": tokens, "batch_sentences": sentences,
                    "input_feed": feed, "corpus": str(corpus)}  # fmt: skip
            runs[label].append(worker("train", spec))
    peak = {k: statistics.median(v) for k, v in flops.items()}
    detail, rows = {}, []
    for label, amp, *_ in variants:
        r = runs[label]
        rate, rss = med([x["tok_per_s"] for x in r]), max(x["rss_mb"] for x in r)
        achieved = rate * train_flops_per_token(r[0]["model"], r[0]["src_mean"], r[0]["tgt_mean"])
        fp32, of_bf16 = achieved / peak["float32"], achieved / peak["bfloat16"] if bf16 else None
        detail[label] = {"tok_per_s": rate, "runs": [x["tok_per_s"] for x in r],
                         "achieved_gflops": round(achieved / 1e9, 2), "of_fp32_matmul": fp32,
                         "of_bf16_matmul": of_bf16,
                         "matmul_fraction": of_bf16 if amp and of_bf16 else fp32,
                         "batch_tokens": r[0]["batch_tokens"], "sentences_per_batch":
                         r[0]["per_batch"], "peak_rss_mb": round(rss, 1)}  # fmt: skip
        spb = f" ({r[0]['per_batch']:.1f}/batch)" if r[0]["per_batch"] else ""
        rows.append([label + spb, rate, len(r), achieved / 1e9, f"{fp32:.0%}",
                     f"{of_bf16:.0%}" if of_bf16 else "-", rss])  # fmt: skip
    mm = {k: round(v / 1e9, 1) for k, v in peak.items()}
    title = f"Training: {args.steps} steps after {args.warmup} warm-up; matmul GFLOP/s {mm}"
    header = ["variant", "target tok/s", "runs", "GFLOP/s", "of fp32 mm", "of bf16 mm", "RSS MB"]
    console.print(table(title, header, rows))
    return {"variants": detail, "main": detail[variants[0][0]], "matmul_gflops": mm}


def decoding_precision() -> str:
    """The precision `s2a translate` picks on this CPU (decoding/translator.py's rule)."""
    import torch

    from seq2attn_cli.decoding.translator import precision

    return {"float32": "float"}.get(p := precision(torch.device("cpu"), quantized=True), p)


def other_threads(spec: dict[str, Any], repeats: int, data: dict) -> dict[str, dict]:
    """Beam search in the thread arrangement s2a did not choose here: the A/B behind it."""
    rs = [worker("translate", {**spec, "other_threads": True}) for _ in range(repeats)]
    rate, rss = med([r["sent_per_s"] for r in rs]), max(r["rss_mb"] for r in rs)
    score = bleu(rs[0]["hyps"], data["refs"])
    return {
        f"int8 beam5, {rs[0]['arrangement']}": {"sent_per_s": rate, "bleu": score, "rss_mb": rss}
    }


def measure_translation(args: argparse.Namespace, data: dict, model: Path, console: Any) -> dict:
    """In-process sent/s per precision and search; the CLI's whole-process figures."""
    lib, n, t = {}, args.sentences, args.threads
    precisions = ("int8", "float", "bf16") if cpu_features()["bf16_native"] else ("int8", "float")
    if len(precisions) == 2:
        print("translation: bf16 autocast skipped: this CPU has no native bf16", file=sys.stderr)
    for precision in precisions:
        for beam in (1, 5):
            spec = {"model": str(model), "source": str(data["source"]), "threads": t,
                    "precision": precision, "beam": beam}  # fmt: skip
            reps = 1 if precision == "bf16" else args.repeats  # slow here, and not the default
            rs = [worker("translate", spec) for _ in range(reps)]
            rate, rss = med([r["sent_per_s"] for r in rs]), max(r["rss_mb"] for r in rs)
            score = bleu(rs[0]["hyps"], data["refs"])
            lib[f"{precision} beam{beam}"] = {"sent_per_s": rate, "bleu": score, "rss_mb": rss}
    if t > 1:  # one thread has one arrangement
        lib.update(other_threads({**spec, "precision": "int8", "beam": 5}, args.repeats, data))
    rows = [[k, v["sent_per_s"], v["bleu"], v["rss_mb"]] for k, v in lib.items()]
    header = ["", "sent/s", "BLEU", "peak RSS MB"]
    console.print(table(f"Translation in-process (library), {n} sentences", header, rows))
    chosen = decoding_precision()
    fastest = max(precisions, key=lambda p: lib[f"{p} beam5"]["sent_per_s"])
    console.print(f"precision s2a decodes in on this CPU: {chosen}; fastest beam 5 here: {fastest}")
    env, cli = thread_env(t), [S2A, "translate", "--model", str(model), "--threads", str(t)]
    one, imp = [], []
    for _ in range(args.repeats + 2):
        imp.append(run_process([sys.executable, "-c", "import torch"], env=env)["wall"])
        one.append(run_process(cli + [ONE_SENTENCE], env=env)["wall"])
    out: dict[str, Any] = {"one_sentence_s": med(one), "import_torch_s": med(imp), "library": lib,
                           "precision": {"chosen": chosen, "fastest_beam5": fastest}}  # fmt: skip
    rows = []
    for beam, key in ((1, "greedy"), (5, "beam5")):
        cmd = cli + ["--beam", str(beam)]
        rs = [run_process(cmd, stdin=data["source"], env=env) for _ in range(args.repeats)]
        wall, rss = statistics.median(r["wall"] for r in rs), max(r["rss_mb"] for r in rs)
        net = wall - statistics.median(one)  # too few sentences to tell: None
        out[f"{key}_sent_per_s"] = round(n / net, 2) if net > 0.1 else None
        out[f"{key}_bleu"] = bleu(rs[0]["stdout"].splitlines(), data["refs"])
        out[f"{key}_rss_mb"] = rss
        rows.append([key, wall, out[f"{key}_sent_per_s"], out[f"{key}_bleu"], rss])
    rows.append(["one sentence", out["one_sentence_s"], "", "", ""])
    rows.append(["python -c 'import torch'", out["import_torch_s"], "", "", ""])
    title = f"Whole process: s2a translate (int8), {n} sentences"
    console.print(table(title, ["", "wall s", "sent/s", "BLEU", "peak RSS MB"], rows))
    console.print("sent/s = sentences / (wall - one-sentence wall): start-up left out")
    return out


def main() -> None:
    """Measure, print the tables, merge the "s2a" object into bench/results.json."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=300, help="timed training steps per run")
    p.add_argument("--warmup", type=int, default=20, help="untimed training steps before")
    p.add_argument("--sentences", type=int, default=2000, help="test sentences to translate")
    p.add_argument("--repeats", type=int, default=3, help="runs per figure (medians)")
    p.add_argument("--threads", type=positive, default=2)
    p.add_argument("--model", type=Path, help="model directory for the translation figures")
    p.add_argument("--quick", action="store_true", help="tiny smoke-test settings")
    p.add_argument("--serve-seconds", type=float, default=20, help="load run per client count")
    p.add_argument("--serve-only", action="store_true", help="only the s2a serve load run")
    p.add_argument(
        "--training-only",
        type=Path,
        metavar="JSON",
        help="only the training figures, written to JSON (results.json untouched)",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        fn = {"train": worker_train, "translate": worker_translate}[args.worker]
        print(json.dumps(fn(json.loads(args.spec))))
        return
    if args.quick:
        args.steps, args.warmup, args.sentences, args.repeats = 10, 3, 50, 1
        args.serve_seconds = 3
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 130)
    model = (args.model or default_model()).resolve()
    if not (model / "spm.model").exists():
        sys.exit(f"{model}: not a model directory (no spm.model); pass --model DIR")
    data, info = prepare_data(args.sentences, args.quick), machine(args.threads)
    console.print(f"[bold]{host(info)}[/], {info['cores']} cores, torch {info['torch']}, "
                  f"{args.threads} threads; model {model}")  # fmt: skip
    path = results_path(args.quick)
    if args.serve_only:  # merge the load run into the s2a figures already measured
        results = json.loads(path.read_text()) if path.exists() else {}
        serving = {**measure_serving(args, data, model, console), "machine": info}
        results.setdefault("s2a", {})["serving"] = serving
        path.write_text(json.dumps(results, indent=1) + "\n")
        return
    train = measure_training(args, data, model, console)
    if args.training_only:
        figures = {**train, "machine": info, "cpu": cpu_features()}
        args.training_only.write_text(json.dumps(figures, indent=1) + "\n")
        return
    tr = measure_translation(args, data, model, console)
    settings = {k: getattr(args, k) for k in ("steps", "warmup", "sentences", "repeats", "quick")}
    s2a = {"train_tok_per_s": train["main"]["tok_per_s"],
           "beam5_sent_per_s": tr["beam5_sent_per_s"], "greedy_sent_per_s": tr["greedy_sent_per_s"],
           "beam5_bleu": tr["beam5_bleu"],
           "one_sentence_s": tr["one_sentence_s"], "import_torch_s": tr["import_torch_s"],
           "translate_peak_rss_mb": round(tr["beam5_rss_mb"], 1),
           "train_peak_rss_mb": train["main"]["peak_rss_mb"],
           "train_matmul_fraction": round(train["main"]["matmul_fraction"], 4),
           "machine": info, "cpu": cpu_features(), "model": str(model),
           "batch": "1500 target tokens (s2a default)",
           "settings": settings,
           "matmul_gflops": train["matmul_gflops"], "training": train["variants"],
           "translation_in_process": tr["library"],
           "serving": measure_serving(args, data, model, console)}  # fmt: skip
    results = json.loads(path.read_text()) if path.exists() else {}
    results["s2a"] = s2a
    show_goals(console, results)
    path.write_text(json.dumps(results, indent=1) + "\n")
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
