"""Fit how a model's signals make its confidence, and its dropped-word threshold, on dev sets.

Usage: python scripts/fit_confidence.py MODEL_DIR --dev FILE [--dev FILE ...] [--lines 1000]

Each FILE is a TSV of source and reference (`--src-col 1 --tgt-col 2`, for every file). The
first `--lines` pairs of each are translated as `s2a translate` does (beam 5, int8), once; then
1. the confidence: a logistic regression of each line's sentence chrF (0-1, sacrebleu) on the
   signals of decoding/explain/confidence.py, every set weighing the same, a little L2 on the
   standardised coefficients; confidence = logistic(bias + sum of coefficient * signal);
2. the dropped-word threshold: among the source words also in the reference as written
   (names, numbers, cognates: words whose absence from the output a script can see), the
   highest coverage (0.05, 0.10, ..., 1.0) under which at least 90% of the flagged words are
   missing from the output, so that a word named as dropped usually was.
Both go into MODEL_DIR/config.json as its "confidence" part, which the Translator reads. Fit on
validation sets and judge on others: `s2a evaluate TEST --model MODEL_DIR` reports how well
the confidence ranks a test set's lines.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import torch

from seq2attn_cli.checkpoint import CONFIG, read_json, write_json
from seq2attn_cli.data.reading import read_pairs
from seq2attn_cli.decoding.explain.confidence import SIGNALS, Unflagged, candidates, signals
from seq2attn_cli.decoding.translation import Translation
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.errors import CorpusError, ModelError
from seq2attn_cli.evaluation import sentence_chrf, spearman

THRESHOLDS = [k / 20 for k in range(1, 21)]
PRECISION = 0.9  # of the words flagged as dropped, at least this share must be missing
L2 = 1e-3


def fit(features: list[list[float]], targets: list[float], sample: list[float]) -> list[float]:
    """Logistic regression with soft targets in [0, 1] (Newton's method): bias, coefficients."""
    x = torch.tensor(features, dtype=torch.float64)  # (n, signals)
    mean, std = x.mean(0), x.std(0).clamp(min=1e-9)  # (signals,)
    z = torch.cat([torch.ones(len(x), 1, dtype=torch.float64), (x - mean) / std], 1)  # (n, 1+s)
    y = torch.tensor(targets, dtype=torch.float64)
    s = torch.tensor(sample, dtype=torch.float64)  # each line's weight: sets weigh the same
    beta = torch.zeros(z.size(1), dtype=torch.float64)
    penalty = torch.full_like(beta, L2)
    penalty[0] = 0.0  # the bias is not pulled to 0
    for _ in range(50):
        p = torch.sigmoid(z @ beta)
        grad = z.T @ (s * (p - y)) + penalty * beta
        hessian = (z * (s * p * (1 - p))[:, None]).T @ z + torch.diag(penalty)  # (1+s, 1+s)
        step = torch.linalg.solve(hessian, grad)
        beta -= step
        if step.abs().max() < 1e-10:
            break
    coefficients = beta[1:] / std  # back to the signals' own units
    bias = beta[0] - (coefficients * mean).sum()
    return [float(bias), *map(float, coefficients)]


def threshold(lines: list[tuple[Translation, str]], rules: Unflagged) -> tuple[float, str]:
    """The highest coverage under which source words seen in the reference are mostly missing."""

    def words(text: str) -> set[str]:
        return set(re.findall(r"\w+", text.lower()))

    points = []  # (coverage, missing from the output) of source words also in the reference
    for t, reference in lines:
        in_reference, in_output = words(reference), words(t.text)
        for word, covered in candidates(t.src_tokens, t.weights, rules):
            w = word.lower()
            if w in in_reference:
                points.append((covered, w not in in_output))
    missing = sum(m for _, m in points)
    best, note = THRESHOLDS[0], f"no threshold flags words {PRECISION:.0%} of them missing"
    for t in THRESHOLDS:  # the highest threshold whose flagged words are still mostly missing
        flagged = [m for c, m in points if c < t]
        share = f"{sum(flagged) / len(flagged):.0%}" if flagged else "-"
        print(f"  coverage < {t:.2f}: {len(flagged)} flagged, {share} missing", file=sys.stderr)
        if flagged and sum(flagged) >= PRECISION * len(flagged):
            best = t
            note = (
                f"{len(points)} source words in their reference, {missing} missing from the "
                f"output; under {t:.2f}: {len(flagged)} flagged, {sum(flagged)} of them missing"
            )
    return best, note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, metavar="MODEL_DIR")
    parser.add_argument("--dev", type=Path, action="append", required=True, metavar="FILE")
    parser.add_argument("--src-col", type=int, default=1)
    parser.add_argument("--tgt-col", type=int, default=2)
    parser.add_argument("--lines", type=int, default=1000, help="first pairs of each file")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads; 0 = torch's")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        translator = Translator.load(args.model)
        config = read_json(args.model / CONFIG)
        sets = [read_pairs(f, src_col=args.src_col, tgt_col=args.tgt_col)[0] for f in args.dev]
    except (ModelError, CorpusError) as error:
        sys.exit(f"fit_confidence: {error}")
    features, targets, sample, lines, chrfs, names = [], [], [], [], [], []
    for path, pairs in zip(args.dev, sets, strict=True):
        pairs = pairs[: args.lines]
        print(f"translating {len(pairs):,} lines of {path}", file=sys.stderr)
        found = translator.translate([s for s, _ in pairs], beam=args.beam)
        chrf = sentence_chrf([t.text for t in found], [r for _, r in pairs])
        for t, c in zip(found, chrf, strict=True):
            values = signals(t.src_tokens, t.tgt_tokens, t.weights, t.score, attends=t.attends)
            features.append([values[k] for k in SIGNALS])
            targets.append(c / 100)
            sample.append(1 / len(pairs))
        lines += [(t, r) for t, (_, r) in zip(found, pairs, strict=True)]
        chrfs.append((len(found), chrf))
        names.append(f"{path.name} ({len(pairs):,} lines)")
    bias, *coefficients = fit(features, targets, sample)
    if not all(map(math.isfinite, [bias, *coefficients])):
        sys.exit("fit_confidence: the fit did not converge; config.json is unchanged")
    cut, note = threshold(lines, Unflagged.of(translator.config.languages[0] or ""))
    config["confidence"] = {
        "bias": round(bias, 6),
        # config.json's name for the coefficients (ConfidenceConfig.coefficients)
        "weights": {k: round(c, 6) for k, c in zip(SIGNALS, coefficients, strict=True)},
        "threshold": cut,
        "fitted_on": names,
    }
    write_json(args.model / CONFIG, config)
    print(f"wrote the confidence part of {args.model / CONFIG}:")
    named = zip(SIGNALS, coefficients, strict=True)
    print(f"  bias {bias:+.4f}; " + ", ".join(f"{k} {c:+.4f}" for k, c in named))
    print(f"  dropped-word threshold {cut:.2f}: {note}")
    start = 0
    for name, (n, chrf) in zip(names, chrfs, strict=True):  # in-sample: a check, not a result
        rows = features[start : start + n]
        z = [bias + sum(c * v for c, v in zip(coefficients, row, strict=True)) for row in rows]
        log_prob = [t.score for t, _ in lines[start : start + n]]
        print(
            f"  {name}: Spearman with sentence chrF, log-prob {spearman(log_prob, chrf):.3f}, "
            f"confidence {spearman(z, chrf):.3f} (in sample)"
        )
        start += n


if __name__ == "__main__":
    main()
