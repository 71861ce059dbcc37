"""Shared fixtures: tiny corpora made here (never the shared corpus) and a tiny trained model."""

from __future__ import annotations

import random
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.decoding.search.hypothesis import Hypothesis
from seq2attn_cli.decoding.translator import Translator

# one thread: tiny models gain nothing from more, and CI machines have two cores
torch.set_num_threads(1)

WORDS = {
    "je": "I",
    "tu": "you",
    "il": "he",
    "elle": "she",
    "nous": "we",
    "chat": "cat",
    "chien": "dog",
    "maison": "house",
    "rouge": "red",
    "grand": "big",
    "petit": "small",
    "mange": "eats",
    "voit": "sees",
    "aime": "loves",
    "pain": "bread",
    "eau": "water",
}


def toy_pairs(n: int, *, seed: int = 0, max_words: int = 6) -> list[tuple[str, str]]:
    """Word-for-word 'translations' over a tiny vocabulary: easy to learn, with a diagonal."""
    rng = random.Random(seed)
    src_words = sorted(WORDS)
    pairs = []
    for _ in range(n):
        words = [rng.choice(src_words) for _ in range(rng.randint(1, max_words))]
        pairs.append((" ".join(words), " ".join(WORDS[w] for w in words)))
    return pairs


def write_tsv(path: Path, pairs: list[tuple[str, str]]) -> Path:
    """Write pairs as source<TAB>target lines."""
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return path


def quiet(event: str, info: dict) -> None:
    """A training report callback that ignores everything."""


def train_tiny(out: Path, corpus: Path, **overrides) -> Path:
    """Train a small model quickly (seconds) into `out` through the library."""
    from seq2attn_cli.config import CorpusSpec, TrainConfig
    from seq2attn_cli.training.loop import train

    options = dict(embed=32, hidden=64, layers=1, cell="gru", attention="general", dropout=0.0,
                   spaced_quotes=False)  # fmt: skip
    options.update({k: overrides.pop(k) for k in list(overrides) if k in options})
    resume = overrides.pop("resume", False)
    columns = {k: overrides.pop(k) for k in ("src_col", "tgt_col", "rate") if k in overrides}
    cfg = dict(vocab_size=60, valid_size=20, batch_tokens=300, epochs=12, lr=5e-3, amp=False)
    cfg.update(overrides)
    train(
        corpora=[CorpusSpec(path=str(corpus), **columns)],
        out=out,
        model_options=options,
        cfg=TrainConfig(**cfg),
        device=torch.device("cpu"),
        report=quiet,
        resume=resume,
    )
    return out


@pytest.fixture(scope="session")
def toy_corpus(tmp_path_factory) -> Path:
    """A 1,000-pair toy corpus on disk."""
    return write_tsv(tmp_path_factory.mktemp("data") / "toy.tsv", toy_pairs(1000))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, toy_corpus) -> Path:
    """A model trained on the toy corpus, shared by every test that only reads it."""
    torch.manual_seed(0)
    return train_tiny(tmp_path_factory.mktemp("models") / "tiny", toy_corpus)


@pytest.fixture(scope="session")
def shipped() -> Translator:
    """The embedded model, loaded once (skipped in a checkout without it)."""
    if not (EMBEDDED / "config.json").exists():
        pytest.skip("the embedded model is not in this checkout")
    return Translator.load(EMBEDDED)


def search_that_writes(translator: Translator, text: str) -> Callable[..., list[Hypothesis]]:
    """A stand-in for the beam search that always writes `text`, spread attention and all."""
    sub = translator.subwords
    indices = [translator.output_index[i] for i in sub.encode([text])[0]]

    def search(model, src_ids, **_) -> list[Hypothesis]:
        rows = [[[1 / (len(s) + 1)] * (len(s) + 1)] * (len(indices) + 1) for s in src_ids]
        return [Hypothesis(indices=indices, score=-0.5, weights=w) for w in rows]

    return search


@pytest.fixture
def model_writes(shipped, monkeypatch) -> Callable[[str], None]:
    """model_writes(text): the shipped model's search writes `text`, whatever the source."""

    def install(text: str) -> None:
        stand_in = search_that_writes(shipped, text)
        monkeypatch.setattr("seq2attn_cli.decoding.translator.translate_ids", stand_in)

    return install


@pytest.fixture(scope="session")
def tiny_none_model(tmp_path_factory, toy_corpus) -> Path:
    """A model without attention (`--attention none`) trained on the toy corpus."""
    torch.manual_seed(0)
    return train_tiny(tmp_path_factory.mktemp("models") / "none", toy_corpus, attention="none")


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def served() -> Iterator[Callable[..., str]]:
    """Starts `s2a serve` (model, extra options) and gives its URL; stopped after the test."""
    procs: list[subprocess.Popen] = []

    def start(model: Path, *extra: str) -> str:
        from test_server import start_server

        proc, url = start_server(model, *extra)
        procs.append(proc)
        return url

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def chromium() -> Iterator[Any]:
    """A headless Chromium for the test (playwright's Browser); closed after it."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield browser
    browser.close()
    playwright.stop()
