"""AER, precision and recall of each way of reading word links off the attention, on a set of
hand-aligned sentence pairs (the shared trial set: ../shared/data/align-fra-eng, its ABOUT.txt).

    .venv/bin/python bench/alignment_methods.py DIR [--model DIR] [--no-quantize] [--gradients]

DIR holds dev.fr, dev.en and dev.wa. Every pair is force-decoded once, as `s2a align` does,
and each method of align/methods.py reads its links off the same weights (and the model's
alignment head, align/head.py, when it has one, off the same pass); a few more rows
show what was tried and left out: a threshold on the weights, the issue's own baseline (the
tokenized lines fed to SentencePiece uncleaned, s2a's words as Pharaoh indices), and with
`--gradients` the gradient of each target piece's log-probability with respect to the
source embeddings (its norm per source piece; one backward pass per target piece: slow).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import torch

from seq2attn_cli.align.aer import Gold, read_gold, score
from seq2attn_cli.align.aligner import align, word_weights
from seq2attn_cli.align.forced import forced, read
from seq2attn_cli.align.head import load_head
from seq2attn_cli.align.methods import METHODS, Links, Matrix, row_best, shared
from seq2attn_cli.align.words import groups
from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.config import BOS, EOS, UNK
from seq2attn_cli.decoding.explain.alignment import word_alignment
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.model.seq2seq import output_log_probs

THRESHOLDS = (0.3, 0.5)


def row(name: str, found: list[set[tuple[int, int]]], gold: dict[int, Gold]) -> str:
    """One line of the table."""
    s = score(found, gold)
    return f"| {name} | {100 * s.aer:.1f} | {100 * s.precision:.1f} | {100 * s.recall:.1f} |"


def uncleaned(translator: Translator, fr: list[str], en: list[str]) -> list[Links]:
    """The issue's baseline: lines fed to SentencePiece as given, translate --align's words."""
    sub = translator.subwords
    src, tgt = sub.encode(fr), sub.encode(en)
    weights = [pair.weights for pair in forced(translator, src, tgt, batch_size=32)]
    return [
        set(word_alignment(sub.pieces(s) + ["</s>"], sub.pieces(t) + ["</s>"], w.tolist()))
        for s, t, w in zip(src, tgt, weights, strict=True)
    ]


def thresholded(scores: Matrix, threshold: float) -> Links:
    """Every link whose weight reaches `threshold`."""
    return {(i, j) for j, r in enumerate(scores) for i, x in enumerate(r) if x >= threshold}


@torch.enable_grad()
def saliency(translator: Translator, fr: str, en: str) -> Matrix:
    """|d log p(piece) / d source embeddings| per target and source word, rows summing to 1."""
    model = translator.model
    src, tgt = (side for (side,) in (read(translator, [fr]), read(translator, [en])))
    ids, targets = src.ids + [EOS], [translator.output_index.get(i, UNK) for i in tgt.ids]
    embedded: list[torch.Tensor] = []
    hook = model.encoder.embedding.register_forward_hook(lambda m, i, o: embedded.append(o))
    encoded = model.encode(torch.tensor([ids]), torch.tensor([len(ids)]))
    hook.remove()
    decoder = model.decoder
    # step by step: the teacher-forced loop of training (recurrence.py) keeps no graph here
    fed = decoder.embedding(torch.tensor([[BOS] + targets]))
    _, attentional, _, _ = decoder._run_steps(fed, encoded.init, encoded.states, encoded.mask)
    log_probs = output_log_probs(decoder.out(attentional))[0]
    rows = []
    for t, piece in enumerate(targets):
        (grad,) = torch.autograd.grad(log_probs[t, piece], embedded[0], retain_graph=True)
        rows.append(grad[0].norm(dim=-1))
    pieces = torch.stack(rows)
    pieces = torch.cat([pieces, pieces[-1:]])  # a row for </s>, which word_weights drops
    pieces = pieces / pieces.sum(dim=1, keepdim=True)
    return word_weights(pieces.detach(), groups(fr, src.pieces), groups(en, tgt.pieces))[0]


def main() -> None:
    """Print the table for every method."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--no-quantize", dest="quantize", action="store_false")
    parser.add_argument("--gradients", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    fr = (args.dir / "dev.fr").read_text(encoding="utf-8").splitlines()
    en = (args.dir / "dev.en").read_text(encoding="utf-8").splitlines()
    gold = read_gold((args.dir / "dev.wa").read_text(encoding="utf-8").splitlines())
    translator = Translator.load(args.model, quantized=args.quantize)
    print("| method | AER | precision | recall |\n|---|---|---|---|")
    print(row("argmax, lines uncleaned (the issue's 37.3)", uncleaned(translator, fr, en), gold))
    pairs = list(zip(fr, en, strict=True))
    for name in METHODS:
        found = [set(a.links) for a in align(translator, pairs, method=name)]
        print(row(name, found, gold))
    head = load_head(args.model or EMBEDDED, translator.config.model)
    if head is not None:  # the model's alignment head (align.safetensors), `--method head`
        print(row("head", [set(a.links) for a in align(translator, pairs, head=head)], gold))
    weights = [a.weights for a in align(translator, pairs)]
    for threshold in THRESHOLDS:
        found = [thresholded(w, threshold) for w in weights]
        print(row(f"weights >= {threshold}", found, gold))
    if args.gradients:  # on the float weights: int8 layers have no gradient
        translator = Translator.load(args.model, quantized=False)
        start = time.monotonic()
        with_gradients: list[Callable[[Matrix], Links]] = [row_best, lambda m: shared(m, m)]
        matrices = [saliency(translator, f, e) for f, e in pairs]
        seconds = (time.monotonic() - start) / len(pairs)
        for name, method in zip(("argmax", "shared"), with_gradients, strict=True):
            found = [method(m) for m in matrices]
            print(row(f"gradient norm, {name} ({seconds:.1f} s a pair)", found, gold))


if __name__ == "__main__":
    main()
