"""scripts/card.py: the sets a model card is measured on are read as `s2a evaluate` reads them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).parent.parent / "scripts" / "card.py"
SET = "Élève à l'école.\tA pupil at school.\na line without a tab\nBonjour !\tHello!\n"


def _card():
    """scripts/card.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("card", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_card_skips_a_malformed_line_as_evaluate_skip_bad_does(tmp_path: Path, tiny_model):
    test = tmp_path / "set.tsv"
    test.write_text(SET, encoding="utf-8")
    card = _card()
    pairs = [("Élève à l'école.", "A pupil at school."), ("Bonjour !", "Hello!")]
    assert card.samples(test) == pairs
    stripped, lower = card.noisy(test, tmp_path, tiny_model)
    assert stripped.read_text(encoding="utf-8") == (
        "Eleve a l'ecole.\tA pupil at school.\nBonjour !\tHello!\n"  # references untouched
    )
    assert lower.read_text(encoding="utf-8").startswith("élève à l'école.\tA pupil at school.\n")


def test_a_word_alone_counts_right_whatever_its_case_and_end_mark(monkeypatch):
    card = _card()
    said = {"new": ["Cat."] + ["Check out!"] * 19, "old": ["cat", "House!"] + ["x"] * 18}
    monkeypatch.setattr(card, "translated", lambda model, lines: said[str(model)])
    table = card.word_table(Path("new"), Path("old"))
    assert table[0].startswith("Twenty words alone: **1 right**, against 2 ")
    assert table[4] == "| chat | Cat. | cat |"


def test_the_card_reads_a_noisy_set_up_to_the_line_the_model_translates(tmp_path: Path, tiny_model):
    long = "mot " * 300  # 1,200 characters: past 1,000, within 10 x a model's 1,000
    test = tmp_path / "set.tsv"
    test.write_text(f"{long}\tword\nBonjour !\tHello!\n", encoding="utf-8")
    small = tmp_path / "small"
    small.mkdir()
    config = json.loads((tiny_model / "config.json").read_text(encoding="utf-8"))
    config["training"]["max_chars"] = 100  # translate takes 1,000 characters a line
    (small / "config.json").write_text(json.dumps(config), encoding="utf-8")
    card = _card()
    assert len(card.noisy(test, tmp_path, tiny_model)[1].read_text().splitlines()) == 2
    assert card.noisy(test, tmp_path, small)[1].read_text() == "bonjour !\tHello!\n"
