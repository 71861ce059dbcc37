"""The model card `s2a inspect` prints without a sentence: architecture, parameters, data,
corpora, training curves and files. Plain dicts in (seq2attn_cli/card.py), a renderable out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..data import languages
from .charts import counted, line_chart


def _kv(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    return table


def _mb(size: int) -> str:
    return f"{size / 1e6:.2f} MB" if size >= 1e5 else f"{size / 1e3:.1f} kB"


def card_view(card: dict[str, Any], *, color: bool, width: int) -> RenderableType:
    """The model card: architecture, parameters, vocabulary, corpus, training curve, files."""
    trained = card["epochs"][-1]["epoch"] if card["epochs"] else 0  # at its last validation
    blocks: list[RenderableType] = [
        _architecture(card["model"], card.get("decoding")),
        Text(),
        _parameters(card["parameters"]),
        Text(),
        _kv("data", _data_rows(card)),
        Text(),
        _kv("corpora", _corpora(card["corpus"], trained)),
    ]
    if card["epochs"]:
        blocks += [Text(), *_training(card, color=color, width=width)]
    blocks += [Text(), _kv("files", [(k, _mb(v)) for k, v in card["files"].items()])]
    return Group(*blocks)


def _architecture(m: dict[str, Any], decoding: dict[str, str] | None) -> Table:
    """Encoder, decoder, attention, embeddings, dropout and decoding precision of a model card."""
    rows = [] if decoding is None else [("decoding", _decoding(decoding))]
    return _kv(
        "architecture",
        [
            (
                "encoder",
                f"bidirectional {m['cell'].upper()}, {counted(m['layers'], 'layer')}, "
                f"{m['hidden'] // 2} per direction -> states of {m['hidden']}",
            ),
            (
                "decoder",
                f"{m['cell'].upper()}, {counted(m['layers'], 'layer')}, state {m['hidden']}"
                + (", input feeding" if m.get("input_feed") else ""),
            ),
            (
                "attention",
                m["attention"]
                + ("  (single context vector: no attention)" if m["attention"] == "none" else ""),
            ),
            (
                "embeddings",
                f"{m['embed']} (source {m['src_vocab']:,} pieces, "
                f"target {m['tgt_vocab']:,} pieces)"
                + (', opening quotes spaced off (" bonjour")' if m.get("spaced_quotes") else ""),
            ),
            ("dropout", f"{m['dropout']}"),
            *rows,
        ],
    )


def _decoding(decoding: dict[str, str]) -> str:
    """How s2a translate decodes on the device: int8 on a CPU, else float32."""
    if decoding["precision"] == "int8":
        return (
            f"int8 weights on {decoding['device']} (the fastest measured; --no-quantize: float32)"
        )
    return f"{decoding['precision']} weights on {decoding['device']}"


def _parameters(params: dict[str, int]) -> Table:
    """Parameters per part of the model, with their share and the total."""
    total = sum(params.values())
    table = Table(title="parameters", title_justify="left", box=None, padding=(0, 2))
    table.add_column("part")
    table.add_column("count", justify="right")
    table.add_column("share", justify="right")
    for part, n in params.items():
        table.add_row(part, f"{n:,}", f"{100 * n / max(total, 1):.1f}%")
    table.add_row("total", f"{total:,}", "100%", style="bold")
    return table


def _data_rows(card: dict[str, Any]) -> list[tuple[str, str]]:
    """Vocabulary, languages and validation sets of a model card, as (key, value) rows."""
    vocab, corpus = card["vocabulary"], card["corpus"]
    guessed = corpus.get("languages") or {}
    lineage = [  # a polished model's card is its last stage's: say so
        ("started from", f"another model's weights (--init {init}, a path where it was "
         "trained): steps, time and passes below are this run's alone")
    ] if (init := card.get("init")) else []  # fmt: skip
    return lineage + [
        (
            "pieces",
            f"{vocab['pieces']:,} (joint unigram); the output layer covers "
            f"{vocab['target_pieces']:,} seen on the target side",
        ),
        ("sample", " ".join(vocab["sample"])),
        (
            "languages",
            f"{languages.name(guessed.get('source'))} -> {languages.name(guessed.get('target'))} "
            + (
                "(guessed from the corpora)"
                if guessed.get("guessed", True)
                else "(those of the model it started from: the corpora too unsure to tell)"
            ),
        ),
        ("validation", ", ".join(_valid_set(v) for v in corpus.get("valid", []))),
        ("examples", f"{corpus.get('train_examples', 0):,} (pairs and their noisy copies)"),
    ]


def _valid_set(valid: dict[str, Any]) -> str:
    """A validation set on the card: its name, its pairs and the lines its file skipped."""
    skipped = sum(valid.get("skipped", {}).values())  # none recorded by an older s2a
    lines = f", {counted(skipped, 'line')} skipped" if skipped else ""
    return f"{valid['name']} ({valid['pairs']:,}{lines})"


def _corpora(corpus: dict[str, Any], epochs: float) -> list[tuple[str, str]]:
    """Per training corpus: pairs read, skipped, held out, dropped, noisy copies and used, and
    how many times over its examples were seen in the `epochs` trained (its passes)."""
    rows = []
    for c in corpus.get("corpora", []):
        skipped = c.get("skipped", {})
        passes = c["per_epoch"] * epochs / max(1, c["train_examples"])
        trained = f"{round(epochs, 2):g} epoch{'s' * (epochs != 1)}"  # 13.33, not 13.3333
        seen = f": {passes:.2f} passes in {trained}" if epochs else ""
        rows.append((
            "/".join(Path(c["corpus"]).parts[-2:]),
            f"weight {c['weight']:g}: {c['pairs_read']:,} pairs read, "
            f"{counted(sum(skipped.values()), 'line')} skipped, {c['held_out']:,} held out, "
            f"{c['dropped_overlapping_valid']:,} sharing a sentence with validation, "
            f"{c['dropped_too_many_pieces']:,} too long, {c['noisy_copies']:,} noisy copies "
            f"-> {c['train_examples']:,} examples, {c['per_epoch']:,} per epoch{seen}",
        ))  # fmt: skip
    return rows


def _training(card: dict[str, Any], *, color: bool, width: int) -> list[RenderableType]:
    """Steps, best and last scores of training, and its validation curves."""
    epochs = card["epochs"]
    best = card.get("best_valid_bleu")
    minutes = (card.get("train_seconds") or 0) / 60
    last = epochs[-1]
    blocks: list[RenderableType] = [
        _kv(
            "training",
            [
                ("steps", f"{card.get('steps', 0):,} in {minutes:.1f} min"),
                ("best", f"validation BLEU {best:.2f}" if best is not None else "n/a"),
                (
                    "last",
                    f"loss {last['valid_loss']:.3f}, ppl {last['valid_ppl']:.2f}, "
                    f"chrF {last['valid_chrf']:.2f}",
                ),
            ],
        )
    ]
    half = max(width // 2 - 2, 20)
    for key, name in (("valid_bleu", "BLEU"), ("valid_loss", "loss")):
        values = [e[key] for e in epochs]
        title = f"validation {name} per validation"
        blocks.append(line_chart(values, width=min(half, 60), color=color, title=title))
    return blocks
