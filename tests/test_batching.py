"""Batches and epochs: every example once in a reproducible plan, corpora mixed as
--weights says."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from seq2attn_cli.data.batching import batch_plan, epoch_examples


@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40)), min_size=1, max_size=300))
@settings(max_examples=50, deadline=None)
def test_batch_plan_uses_every_example_once_and_is_reproducible(lengths):
    examples = list(range(len(lengths)))
    src, tgt = [s for s, _ in lengths], [t for _, t in lengths]
    plan = batch_plan(src, tgt, examples, batch_tokens=100, seed=1, epoch=2)
    assert sorted(i for b in plan for i in b) == examples
    assert plan == batch_plan(src, tgt, examples, batch_tokens=100, seed=1, epoch=2)


def test_an_epoch_takes_each_corpus_as_often_as_its_weight_says():
    sizes, rates = [10, 20, 100], [2, 1, 0.25]
    counts = Counter(epoch_examples(sizes, rates, seed=1, epoch=0))
    assert all(counts[i] == 2 for i in range(10))
    assert all(counts[i] == 1 for i in range(10, 30))
    assert sum(counts[i] for i in range(30, 130)) == 25


def test_a_fractional_weight_walks_through_the_whole_corpus_over_epochs():
    seen = [set(epoch_examples([100], [0.25], seed=1, epoch=e)) for e in range(4)]
    assert set.union(*seen) == set(range(100))
    assert sum(map(len, seen)) == 100  # four different quarters
    assert epoch_examples([100], [0.25], seed=1, epoch=2) == epoch_examples(
        [100], [0.25], seed=1, epoch=2
    )
