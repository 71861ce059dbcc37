"""Word alignment of given translations: forced decoding, words as given, links, AER."""
