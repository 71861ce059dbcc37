"""Sentence pairs from files to batches: reading, subwords, noisy copies, languages. No model."""
