"""Word alignment of given translations: forced decoding, words as given, links, AER."""

HEAD = "align.safetensors"  # a model directory's alignment head (head.py), if it has one
