"""Explanations of a translation: its alignment, its confidence, each step of its search."""
