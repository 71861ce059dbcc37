"""Keyboard shortcuts (Ctrl+C, Ctrl + Maj + T, Alt+F4, ⌘+V): read as the word URL, as
urls.py reads a URL, and written back with their French key names in English (Maj: Shift,
Suppr: Del, Entrée: Enter, Échap: Esc), their `+` and spaces as given.

The model has pieces for few of a shortcut's parts and spelled them into words: "Appuyez sur
Ctrl+C puis Ctrl+V." came out "Press Ctrlol Catrlify.", "Utilisez Maj+F10 ou Alt+F4." "Use
MajumF is10 or Altify4.", "Tapez ⌘ + C puis ⌘ + V." "Tapez ⌘ CRRLINAIDS ⌘." (embedded
model, beam 5). A key named alone ("appuyez sur Entrée") is a word the model translates.
"""

from __future__ import annotations

import re

# the keys held down: a shortcut starts with one of them
MODIFIERS = (
    r"ctrl|ctl|control|contrôle|altgr|alt|maj|shift|cmd|command|commande|option|opt|fn"
    r"|windows|win|super|méta|meta|[⌘⌥⇧⌃]"
)
# the keys pressed with them that have a name (two words at most: the write-back keeps the
# number of words, which a document's tags and the alignments count)
NAMED = (
    r"f\d{1,2}|entrée|entrer|enter|échap|echap|esc|suppr|del|delete|tab|tabulation|espace"
    r"|space|fin|end|début|origine|home|inser|insert|haut|bas|gauche|droite|clic|click"
    r"|verr\.? maj|impr\.? (?:écran|ecr)|page (?:préc|suiv)\.?|[↑↓←→]"
)
KEY = rf"(?:{MODIFIERS}|{NAMED}|[a-z0-9]|[-=,.;/'`\[\]])"
SHORTCUT = re.compile(
    rf"(?<![\w+])(?:{MODIFIERS})(?: ?\+ ?(?:{MODIFIERS}))* ?\+ ?{KEY}(?![\w+])", re.IGNORECASE
)
# French key names in English, each as many words as it is (looked up without their dots:
# "Impr. écran", "Page préc.")
ENGLISH = {
    "maj": "shift", "contrôle": "control", "commande": "command", "méta": "meta",
    "entrée": "enter", "entrer": "enter", "échap": "esc", "echap": "esc", "suppr": "del",
    "espace": "space", "fin": "end", "début": "home", "origine": "home", "inser": "insert",
    "haut": "up", "bas": "down", "gauche": "left", "droite": "right", "clic": "click",
    "tabulation": "tab", "verr maj": "caps lock", "impr écran": "print screen",
    "impr ecr": "print screen", "page préc": "page up", "page suiv": "page down",
}  # fmt: skip


def shortcuts(text: str) -> list[tuple[int, int, str]]:
    """Each keyboard shortcut in `text`: (start, end, as written back in English)."""
    return [(m.start(), m.end(), in_english(m.group())) for m in SHORTCUT.finditer(text)]


def in_english(shortcut: str) -> str:
    """A shortcut with its French key names in English, in the case they were written in;
    its `+` and spaces as given."""

    def named(m: re.Match[str]) -> str:
        said = m.group()
        english = ENGLISH.get(said.lower().replace(".", ""))
        if english is None:
            return said
        if said.isupper():
            return english.upper()
        return english.title() if said[0].isupper() else english

    return re.sub(r"[^+ ]+(?: [^+ ]+)?", named, shortcut)
