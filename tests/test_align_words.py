"""Alignment without a model: the given words and their pieces, the link methods, AER."""

from __future__ import annotations

import pytest

from seq2attn_cli.align.aer import Gold, read_gold, read_pharaoh, score
from seq2attn_cli.align.methods import (
    METHODS,
    by_share,
    column_best,
    grow_diag,
    row_best,
    shared,
)
from seq2attn_cli.align.words import char_map, groups, words


@pytest.mark.parametrize(
    "text, pieces, expected",
    [
        # as given: the model reads the same letters
        ("je suis étudiant", ["▁je", "▁suis", "▁étud", "iant"], [[0], [1], [2, 3]]),
        # extra spaces count for nothing, as in fast_align
        ("  je   suis\u00a0 là  ", ["▁je", "▁suis", "▁là"], [[0], [1], [2]]),
        # cleaning glued "?" and "." to their words: they are still words of their own
        ("Il est là ?", ["▁Il", "▁est", "▁là", "?"], [[0], [1], [2], [3]]),
        ("confuse .", ["▁confuse", "."], [[0], [1]]),
        # a URL is read as written (rules/pipeline.GIVEN): its pieces spell it
        (
            "voir https://x.fr/a .",
            ["▁voir", "▁https", "://", "x", ".", "fr", "/", "a", "."],
            [[0], [1, 2, 3, 4, 5, 6, 7], [8]],
        ),
        # quotes spaced off (spaced_quotes): still one given word
        ('"bonjour" !', ['▁"', "▁bon", "jour", '"', "!"], [[0, 1, 2, 3], [4]]),
        # typographic quotes and apostrophes, letters read as their base letter
        ("l’été « Erdoğan »", ["▁l", "'", "été", '▁"', "Erdogan", '"'], [[0, 1, 2], [3], [4], [5]]),
        # a character no piece holds (<unk>) still spells its word
        ("le 😀 chat", ["▁le", "▁", "<unk>", "▁chat"], [[0], [2], [3]]),
        # a word past what the model read gets no pieces
        ("un deux trois", ["▁un", "▁deux"], [[0], [1], []]),
        ("", [], []),
    ],
)
def test_each_given_word_gets_the_pieces_that_spell_it(text, pieces, expected):
    assert groups(text, pieces) == expected
    assert len(groups(text, pieces)) == len(words(text))


def test_a_changed_stretch_maps_onto_what_it_replaced():
    found = char_map(list("vu:abcdef!"), list("vu:XY!"))  # XY in place of abcdef
    assert found[:3] == [0, 1, 2] and all(3 <= i < 9 for i in found[3:5]) and found[5] == 9


SCORES = [  # rows: target words, columns: source words
    [0.6, 0.3, 0.1],
    [0.5, 0.4, 0.1],
    [0.1, 0.2, 0.7],
]


def test_row_and_column_best():
    assert row_best(SCORES) == {(0, 0), (0, 1), (2, 2)}
    assert column_best(SCORES) == {(0, 0), (1, 1), (2, 2)}
    assert row_best([[0.0, 0.0]]) == set()  # a word without pieces: no link


def test_shared_reads_each_row_by_the_share_of_its_source_words_attention():
    share = by_share(SCORES)
    assert [round(sum(col), 6) for col in zip(*share, strict=True)] == [1.0, 1.0, 1.0]
    # target 1 attends most to source 0, but takes a bigger share of source 1's attention
    assert shared(SCORES, SCORES) == {(0, 0), (1, 1), (2, 2)}


def test_grow_diag_final_adds_neighbours_of_unaligned_words_then_the_rest():
    sure = {(0, 0), (2, 2)}
    assert grow_diag(sure, sure | {(1, 1), (3, 0)}, final=False) == {(0, 0), (1, 1), (2, 2)}
    assert grow_diag(sure, sure | {(1, 1), (3, 0)}) == {(0, 0), (1, 1), (2, 2), (3, 0)}


def test_every_method_gives_links_within_the_matrix():
    for method in METHODS.values():
        links = method(SCORES, SCORES)
        assert all(0 <= i < 3 and 0 <= j < 3 for i, j in links)
        assert method([], []) == set()


GOLD = """\
1 1 1 S
1 2 2 P
1 2 3 S
2 1 2
"""


def test_gold_links_are_read_as_source_target_from_zero():
    gold = read_gold(GOLD.splitlines())
    assert gold[1] == Gold(
        sure=frozenset({(0, 0), (2, 1)}), possible=frozenset({(0, 0), (1, 1), (2, 1)})
    )
    assert gold[2].sure == {(1, 0)}  # a link without a mark is sure


def test_aer_precision_and_recall_on_hand_made_links():
    gold = read_gold(GOLD.splitlines())
    found = [read_pharaoh("0-0 1-1 1-2"), read_pharaoh("")]
    result = score(found, gold)
    # |A| = 3, |S| = 3, |A & S| = 1, |A & P| = 2
    assert result.aer == pytest.approx(1 - (1 + 2) / (3 + 3))
    assert result.precision == pytest.approx(2 / 3) and result.recall == pytest.approx(1 / 3)
    perfect = score([{(0, 0), (2, 1)}, {(1, 0)}], gold)
    assert perfect.aer == 0.0 and perfect.recall == 1.0 and perfect.precision == 1.0


@pytest.mark.parametrize(
    "lines, message",
    [(["1 1"], "line 1: not a link"), (["1 0 1 S"], "positions from 1"), (["1 1 1 X"], "S|P")],
)
def test_a_bad_gold_line_is_named(lines, message):
    with pytest.raises(ValueError, match=message):
        read_gold(lines, name="dev.wa")


def test_a_bad_alignment_or_too_few_sentences_is_refused():
    with pytest.raises(ValueError, match="'0:1' is not a link"):
        read_pharaoh("0-0 0:1", place="out.txt: line 1")
    with pytest.raises(ValueError, match="go to sentence 2"):
        score([set()], read_gold(GOLD.splitlines()))
