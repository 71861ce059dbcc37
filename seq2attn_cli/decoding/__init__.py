"""From a trained model to text: search, the Translator, and the rules around the search."""
