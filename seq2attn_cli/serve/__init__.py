"""`s2a serve`: LibreTranslate's HTTP API over a Translator, and the page at `/` (web/)."""
