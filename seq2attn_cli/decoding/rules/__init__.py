"""The rules around the search: what a line is read as, and how a translation is written back."""
