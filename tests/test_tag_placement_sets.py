"""bench/tag_placement.py: its two sets read as written, and each tag is judged as its
docstring says (no model needed)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent.parent / "bench" / "tag_placement.py"
_spec = importlib.util.spec_from_file_location("tag_placement", SCRIPT)
tp = sys.modules["tag_placement"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tp)


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).strip().lower()


def test_the_test_set_is_big_enough_in_every_category_and_apart_from_the_tuning_set() -> None:
    test, tuning = tp.read(tp.TEST), tp.read(tp.TUNING)
    assert len(test) >= 150 and len(tuning) == 84
    counts: dict[str, int] = {}
    for row in test:
        counts[row.category] = counts.get(row.category, 0) + 1
    assert {c for c, n in counts.items() if n < 12} == {"issue"}, counts
    assert len({_plain(r.source) for r in test}) == len(test)  # no sentence twice
    assert not {_plain(r.source) for r in test} & {_plain(r.source) for r in tuning}
    nested = [r for r in test if r.category == "nested"]
    assert all(len(r.tags) >= 2 for r in nested)


@pytest.mark.parametrize(
    ("translated", "opening", "expected", "verdict"),
    [
        ("I'm a <i>student</i>.", "<i>", "student", "exact"),
        ("I'm <i>a student</i>.", "<i>", "student", "wider"),
        ("I'm <i>a</i> student.", "<i>", "student", "wrong"),
        ("I'm a student.", "<i>", "student", "lost"),
        ("I'm <i></i>a student.", "<i>", "student", "lost"),
        ("<i>I'm</i> <i>a</i> student.", "<i>", "student", "lost"),
        ("I'm a <i>pupil</i>.", "<i>", "student", "unjudged"),
        ("We saw <b>the <i>big</i> house</b>.", "<b>", "the big house|the large house", "exact"),
        ("We saw <b>the <i>big</i> house</b>.", "<i>", "big|large", "exact"),
        ("We saw <b>the</b> big house.", "<b>", "the big house", "wrong"),
        ('Read <a href="/g">the guide</a>.', '<a href="/g">', "the guide", "exact"),
        ("<p>She is <b>a</b> doctor.</p>", "<b>", "doctor", "wrong"),
    ],
)
def test_each_tag_is_judged_by_the_words_it_wraps(translated, opening, expected, verdict) -> None:
    alternatives = [tp.words(alt) for alt in expected.split("|")]
    assert tp.judge(translated, opening, alternatives) == verdict


def test_a_line_with_fewer_expected_entries_than_tags_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "set.tsv"
    bad.write_text("two-tags\tLe <b>chat</b> et la <i>souris</i>.\tcat\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="2 tags"):
        tp.read(bad)
