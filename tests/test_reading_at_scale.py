"""Reading big corpora as a user sees it: a reading line while a corpus is read (live on a
terminal, every 30 s in a log), the losses of other --max-pieces recorded, and SentencePiece's
sample bounded however big the corpora."""

from __future__ import annotations

import io

from conftest import quiet, toy_pairs, write_tsv
from rich.console import Console

from seq2attn_cli.config import CorpusSpec, TrainConfig
from seq2attn_cli.data import corpus
from seq2attn_cli.data.corpus import prepare
from seq2attn_cli.views.progress import TrainProgress


def test_reading_a_big_corpus_reports_lines_as_it_goes(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "PROGRESS_EVERY", 200)  # as every 10,000 pairs, but quicker
    path = write_tsv(tmp_path / "big.tsv", toy_pairs(450, seed=1))
    events = []
    prepare(
        [CorpusSpec(path=str(path))], TrainConfig(vocab_size=40, valid_size=30), valid=[],
        subwords=None, output_ids=None, report=lambda event, info: events.append((event, info)),
    )  # fmt: skip
    reading = [info for event, info in events if event == "reading"]
    encoding = [info["lines"] for info in reading if info["why"] == "encoding"]
    assert encoding == [200, 400]
    assert {info["why"] for info in reading} == {
        "holding out validation", "sampling text for SentencePiece", "encoding",
    }  # fmt: skip
    assert all(info["path"] == str(path) and info["seconds"] >= 0 for info in reading)
    corpus_event = next(i for i, (event, _) in enumerate(events) if event == "corpus")
    assert all(event != "reading" for event, _ in events[corpus_event:])  # before its summary


def reading(seconds: float, lines: int) -> dict:
    return {"path": "europarl.tsv.xz", "why": "encoding", "lines": lines, "seconds": seconds}


def test_a_log_gets_a_reading_line_every_30_seconds():
    out = io.StringIO()
    progress = TrainProgress(Console(file=out, force_terminal=False, width=200))
    for seconds in (5, 20, 31, 45, 61, 62):
        progress.report("reading", reading(seconds, lines=1000 * seconds))
    lines = out.getvalue().splitlines()
    assert lines == [
        "reading europarl.tsv.xz (encoding): 31,000 lines, 1,000 lines/s",
        "reading europarl.tsv.xz (encoding): 61,000 lines, 1,000 lines/s",
    ]


def test_a_terminal_gets_a_live_reading_line_that_gives_way_to_the_summary():
    out = io.StringIO()
    progress = TrainProgress(Console(file=out, force_terminal=True, color_system=None, width=200))
    progress.report("reading", reading(2, lines=30_000))
    assert progress.progress is not None  # a live line, not a log line
    progress.report("corpus", {"stats": {
        "corpus": "europarl.tsv.xz", "lines": 3, "pairs_read": 3, "held_out": 0,
        "dropped_overlapping_valid": 0, "dropped_too_many_pieces": 0, "noisy_copies": 0,
        "train_examples": 3, "per_epoch": 3, "weight": 1.0, "skipped": {},
    }})  # fmt: skip
    assert progress.progress is None
    assert "30,000 lines, 15,000 lines/s" in out.getvalue()
    assert "europarl.tsv.xz: 3 lines" in out.getvalue()


def test_a_run_records_what_other_max_pieces_would_drop(tmp_path):
    pairs = toy_pairs(300, seed=2) + [(" ".join(["chat"] * 120), " ".join(["cat"] * 120))] * 7
    path = write_tsv(tmp_path / "c.tsv", pairs)
    cfg = TrainConfig(vocab_size=40, valid_size=30, max_pieces=100, noise_share=0.0)
    data = prepare([CorpusSpec(path=str(path))], cfg, valid=[], subwords=None, output_ids=None,
                   report=quiet)  # fmt: skip
    stats = data.stats["corpora"][0]
    lost = stats["dropped_at_max_pieces"]
    assert lost["100"] == stats["dropped_too_many_pieces"] > 0
    assert lost["100"] >= lost["150"] >= lost["200"] >= lost["250"] >= lost["300"]


def test_sentencepiece_learns_from_a_bounded_sample(tmp_path, monkeypatch):
    path = write_tsv(tmp_path / "c.tsv", toy_pairs(3000, seed=3))
    monkeypatch.setattr(corpus, "SPM_SENTENCES", 200)
    taught = []

    def trainer(texts, **options):
        taught.append(texts)
        return corpus.train_subwords(texts, **options)

    cfg = TrainConfig(vocab_size=40, valid_size=30)
    prepare([CorpusSpec(path=str(path))], cfg, valid=[], subwords=None, output_ids=None,
            report=quiet, subword_trainer=trainer)  # fmt: skip
    assert len(taught[0]) == 200  # 100 pairs, each side
    assert len(set(taught[0])) > 100  # drawn from the whole corpus, not its first lines
