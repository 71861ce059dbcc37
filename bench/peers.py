"""Benchmark OpenNMT-py 3.5.1 and JoeyNMT 2.3.0 on s2a's work, side by side with s2a's figures."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from common import (
    BENCH,
    ONE_SENTENCE,
    WORK,
    bleu,
    default_model,
    host,
    machine,
    med,
    positive,
    ratio,
    results_path,
    run_process,
    same_host,
    show_goals,
    table,
    thread_env,
)

VENVS, PEERS, SHARED = BENCH / "venvs", WORK / "peers", Path("/work/shared/peers")
INSTALL = {  # pip steps per peer: OpenNMT-py declares torch<2.3, so it goes in without deps
    "opennmt-py": [["torch==2.13.0", "configargparse", "pyyaml", "sacrebleu", "pyonmttok",
                    "pyahocorasick", "rapidfuzz", "six"], ["--no-deps", "OpenNMT-py==3.5.1"]],
    "joeynmt": [["torch==2.13.0", "joeynmt==2.3.0", "importlib_metadata"]],
}  # fmt: skip
TEMPLATE = {"opennmt-py": "opennmt-rnn_fr_en.yaml", "joeynmt": "joeynmt-rnn_fr_en.yaml"}
DIR = {"opennmt-py": PEERS / "onmt", "joeynmt": PEERS / "joey"}  # as the shared configs name them
RATE = {"opennmt-py": r"[\d.]+/\s*([\d.]+) tok/s", "joeynmt": r"Tokens per Sec:\s*([\d.]+)"}
# the shared configs, with their scratch folder moved here and nested keys overridden
EDIT = """import json, sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]).read().replace("/tmp/peers", sys.argv[3]))
for path, value in json.loads(sys.argv[4]).items():
    *keys, last = path.split(".")
    node = cfg
    for key in keys:
        node = node[key]
    node[last] = value
yaml.safe_dump(cfg, open(sys.argv[2], "w"), sort_keys=False)
"""
KEYS = [("train_tok_per_s", "training target tok/s"), ("beam5_sent_per_s", "beam-5 sent/s"),
        ("greedy_sent_per_s", "greedy sent/s"), ("beam5_bleu", "beam-5 BLEU"),
        ("one_sentence_s", "one sentence, whole process s"), ("import_torch_s", "import torch s"),
        ("translate_peak_rss_mb", "translate peak RSS MB (beam 5)"),
        ("train_peak_rss_mb", "train peak RSS MB")]  # fmt: skip


def python(peer: str) -> Path:
    """The peer venv's interpreter."""
    return VENVS / peer / "bin" / "python"


def setup(peer: str) -> None:
    """Create the peer's venv under bench/venvs/ unless it is already complete."""
    venv, done = VENVS / peer, VENVS / peer / ".bench-installed"
    if done.exists():
        return
    print(f"setting up {venv} (pip log: {WORK / f'pip-{peer}.log'})", flush=True)
    subprocess.run([Path(sys.base_prefix) / "bin" / "python3", "-m", "venv", venv], check=True)
    with open(WORK / f"pip-{peer}.log", "w") as log:
        for step in INSTALL[peer]:
            cmd = [python(peer), "-m", "pip", "install", *step]
            subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    if peer == "opennmt-py":  # it imports spacy and fasttext for transforms not used here
        code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        site = Path(subprocess.check_output([python(peer), "-c", code], text=True).strip())
        (site / "spacy").mkdir(exist_ok=True)
        (site / "spacy" / "__init__.py").write_text('"""Stub: not used by the benchmark."""\n')
        (site / "fasttext.py").write_text('"""Stub: not used by the benchmark."""\n')
    done.touch()


def prepare_data(spm: Path, sentences: int, quick: bool) -> list[str]:
    """Write the pieces (space-separated, the model's spm) of train/valid/test; the refs."""
    import sentencepiece

    from seq2attn_cli.data.reading import read_pairs

    sp, data, out = sentencepiece.SentencePieceProcessor(model_file=str(spm)), WORK / "data", {}
    PEERS.joinpath("data").mkdir(parents=True, exist_ok=True)
    for part, limit in (("train", 3000 if quick else 0), ("valid", 100 if quick else 0),
                        ("test", sentences)):  # fmt: skip
        pairs = read_pairs(data / f"{part}.tsv", src_col=1, tgt_col=2)[0]
        out[part] = pairs[:limit] if limit else pairs
        for side, lang in ((0, "fr"), (1, "en")):
            pieces = sp.encode([p[side] for p in out[part]], out_type=str)
            text = "".join(" ".join(p) + "\n" for p in pieces)
            (PEERS / "data" / f"{part}.sp.{lang}").write_text(text)
    one = " ".join(sp.encode(ONE_SENTENCE, out_type=str)) + "\n"
    (PEERS / "data" / "one.sp.fr").write_text(one)
    return [t for _, t in out["test"]]


def config(peer: str, name: str, overrides: dict[str, Any]) -> Path:
    """Write the peer's shared config with its paths under bench/work/peers and overrides."""
    dest = DIR[peer] / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    args = [SHARED / TEMPLATE[peer], dest, PEERS, json.dumps(overrides)]
    subprocess.run([python(peer), "-c", EDIT, *map(str, args)], check=True)
    return dest


def train(peer: str, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Train the peer for --train-steps steps or --train-minutes; tok/s from its own log."""
    steps, report = args.train_steps, 5 if args.quick else 100
    if peer == "joeynmt":
        limits = {"training.updates": steps} if steps else {}
        cfg = config(peer, "train.yaml", {**limits, "training.logging_freq": report})
        cmd = [str(python(peer)), "-m", "joeynmt", "train", str(cfg), "--skip-test"]
    else:
        limits = {"train_steps": steps, "save_checkpoint_steps": steps} if steps else {}
        cfg = config(peer, "train.yaml", {**limits, "report_every": report})
        bin_dir = python(peer).parent
        shutil.rmtree(DIR[peer] / "model", ignore_errors=True)  # no stale checkpoints
        run_process([str(bin_dir / "onmt_build_vocab"), "-config", str(cfg), "-n_sample", "-1"],
                    env=env)  # fmt: skip
        cmd = [str(bin_dir / "onmt_train"), "-config", str(cfg)]
    how = f"{steps} steps" if steps else f"{args.train_minutes:g} minutes"
    print(f"{peer}: training for {how}", flush=True)
    proc = run_process(cmd, env=env, limit_s=0 if steps else args.train_minutes * 60)
    rates = [float(r) for r in re.findall(RATE[peer], proc["stderr"] + proc["stdout"])]
    if not rates:
        raise RuntimeError(f"{peer}: no training rate in its log:\n{proc['stderr'][-3000:]}")
    return {"tok_per_s": med(rates[1:] or rates), "reports": len(rates), "rss_mb": proc["rss_mb"],
            "wall": proc["wall"], "trained": how}  # fmt: skip


def translate(peer: str, beam: int, src: Path, env: dict[str, str]) -> dict[str, Any]:
    """Translate a file of pieces with the peer's own CLI; wall s, RSS MB and hypotheses."""
    if peer == "joeynmt":
        cfg = config(peer, f"beam{beam}.yaml", {"testing.beam_size": beam})
        proc = run_process([str(python(peer)), "-m", "joeynmt", "translate", str(cfg)],
                           stdin=src, env=env)  # fmt: skip
        return {**proc, "hyps": proc["stdout"].splitlines()}
    out = DIR[peer] / "hyps.txt"
    cmd = [str(python(peer).parent / "onmt_translate"), "-model", str(onmt_checkpoint()),
           "-src", str(src), "-output", str(out), "-beam_size", str(beam),
           "-batch_size", "64", "-batch_type", "sents", "-gpu", "-1"]  # fmt: skip
    proc = run_process(cmd, env=env)
    return {**proc, "hyps": out.read_text().splitlines()}


def onmt_checkpoint() -> Path:
    """OpenNMT-py's newest complete checkpoint (a time-out may cut the newest one short)."""
    found = DIR["opennmt-py"].glob("model/rnn_step_*.pt")
    ckpts = [p for p in found if zipfile.is_zipfile(p)]  # torch.save writes zip archives
    if not ckpts:
        raise RuntimeError("opennmt-py: no checkpoint; train longer (it saves every 250 steps)")
    return max(ckpts, key=lambda p: int(p.stem.split("_")[-1]))


def measure(peer: str, args: argparse.Namespace, refs: list[str], spm: Path) -> dict[str, Any]:
    """Every figure of one peer: training, greedy and beam 5, one sentence, import torch."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm))
    env = thread_env(args.threads, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    trained, n = train(peer, args, env), len(refs)
    one, imp = [], []
    for _ in range(args.repeats + 2):
        imp.append(run_process([str(python(peer)), "-c", "import torch"], env=env)["wall"])
        one.append(translate(peer, 5, PEERS / "data" / "one.sp.fr", env)["wall"])
    out: dict[str, Any] = {"train_tok_per_s": trained["tok_per_s"]}
    for beam, key in ((1, "greedy"), (5, "beam5")):
        print(f"{peer}: translating {n} sentences, beam {beam}", flush=True)
        test = PEERS / "data" / "test.sp.fr"
        rs = [translate(peer, beam, test, env) for _ in range(args.repeats)]
        if len(rs[0]["hyps"]) != n:
            raise RuntimeError(f"{peer}: {len(rs[0]['hyps'])} translations for {n} sentences")
        wall = statistics.median(r["wall"] for r in rs)
        net = wall - statistics.median(one)  # too few sentences to tell: None
        out[f"{key}_sent_per_s"] = round(n / net, 2) if net > 0.1 else None
        if beam == 5:
            out["beam5_bleu"] = bleu([sp.decode(h.split()) for h in rs[0]["hyps"]], refs)
            out["translate_peak_rss_mb"] = round(max(r["rss_mb"] for r in rs), 1)
    settings = {"trained": trained["trained"], "rate_reports": trained["reports"],
                "sentences": n, "repeats": args.repeats, "batch": "64 sentences"}  # fmt: skip
    return {**out, "one_sentence_s": med(one), "import_torch_s": med(imp),
            "train_peak_rss_mb": round(trained["rss_mb"], 1), "settings": settings}  # fmt: skip


def side_by_side(console: Any, results: dict[str, Any]) -> None:
    """Print every figure of every system, with the ratios s2a/peer."""
    names = [k for k in ("s2a", "opennmt-py", "joeynmt") if k in results]
    peers = [k for k in names if k != "s2a"]
    rows = []
    for key, label in KEYS:
        values = [results[k].get(key) for k in names]
        ratios = [ratio(results["s2a"].get(key), results[p].get(key)) for p in peers]
        ratios = [
            "other host" if not same_host(results, p) else "-" if r is None else f"{r:.2f}"
            for p, r in zip(peers, ratios, strict=True)
        ]
        rows.append([label, *values, *ratios])
    header = ["figure", *names, *(f"s2a/{p}" for p in peers)]
    s2a_batch = results["s2a"].get("batch", "?")
    title = f"s2a (batches: {s2a_batch}) vs peers (batches: 64 sentences)"
    console.print(table(title, header, rows))
    for k in names:
        info = results[k].get("machine", {})
        console.print(f"{k}: {host(info)}, {info.get('date', 'date not recorded')}")


def main() -> None:
    """Set up and run the peers, merge them into bench/results.json, print the comparison."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--train-minutes", type=float, help="peer training time [default: 20]")
    p.add_argument("--train-steps", type=int, default=0, help="train N steps instead of minutes")
    p.add_argument("--sentences", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=positive, default=2)
    p.add_argument("--model", type=Path, help="s2a model whose SentencePiece the peers use")
    p.add_argument("--only", choices=sorted(INSTALL), action="append", help="one peer only")
    p.add_argument("--skip-s2a", action="store_true", help="keep the s2a figures in results")
    p.add_argument("--setup-only", action="store_true", help="create the venvs and stop")
    p.add_argument("--quick", action="store_true", help="tiny smoke-test settings")
    args = p.parse_args()
    if args.quick:
        args.sentences, args.repeats = 50, 1
    if not args.train_steps and args.train_minutes is None:
        args.train_steps, args.train_minutes = (30, 0) if args.quick else (0, 20)
    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 130)
    peers, model = args.only or ["opennmt-py", "joeynmt"], (args.model or default_model()).resolve()
    if not (model / "spm.model").exists():
        sys.exit(f"{model}: not a model directory (no spm.model); pass --model DIR")
    WORK.mkdir(parents=True, exist_ok=True)
    for peer in peers:
        setup(peer)
    if args.setup_only:
        return
    if not args.skip_s2a:  # s2a measured in the same run, just before its peers
        flags = ["--quick"] if args.quick else []
        flags += ["--threads", str(args.threads), "--model", str(model)]
        flags += ["--sentences", str(args.sentences), "--repeats", str(args.repeats)]
        subprocess.run([sys.executable, str(BENCH / "run.py"), *flags], check=True)
    path = results_path(args.quick)
    results = json.loads(path.read_text()) if path.exists() else {}
    if "s2a" not in results:
        sys.exit(f"no s2a figures in {path}: run without --skip-s2a")
    refs = prepare_data(model / "spm.model", args.sentences, args.quick)
    info = machine(args.threads)
    if results["s2a"]["machine"]["threads"] != args.threads:
        print(f"warning: the s2a figures in {path} were measured with other --threads")
    for peer in peers:
        results[peer] = {**measure(peer, args, refs, model / "spm.model"), "machine": info}
        path.write_text(json.dumps(results, indent=1) + "\n")
    side_by_side(console, results)
    show_goals(console, results)
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
