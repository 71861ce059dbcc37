"""Translate the example documents here with the embedded model and picture the page.

    .venv/bin/python docs/documents/capture.py

Writes page.en.html, notes.en.md and film.en.srt beside their French sources (the outputs
the README shows) and docs/img/document-page.png: the French page and its translation side
by side in headless Chromium (Debian's, /usr/bin/chromium).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.documents import format_of

HERE = Path(__file__).resolve().parent
PICTURE = HERE.parent / "img" / "document-page.png"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SIDE_BY_SIDE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; display: flex; font-family: sans-serif; }}
div {{ flex: 1; border-right: 2px solid #888; }} h3 {{ margin: 4px 8px; color: #555; }}
iframe {{ width: 100%; height: 760px; border: 0; }}
</style></head><body>
<div><h3>page.fr.html</h3><iframe src="{fr}"></iframe></div>
<div><h3>page.en.html (s2a translate -i page.fr.html)</h3><iframe src="{en}"></iframe></div>
</body></html>"""


def main() -> None:
    translator = Translator.load()
    for source in ("page.fr.html", "notes.fr.md", "film.fr.srt"):
        text = (HERE / source).read_text(encoding="utf-8")
        out = translator.translate_document(text, format=format_of(source))
        (HERE / source.replace(".fr.", ".en.")).write_text(out, encoding="utf-8")
        print(f"{source} -> {source.replace('.fr.', '.en.')}", file=sys.stderr)
    from playwright.sync_api import sync_playwright

    frame = HERE / "side-by-side.html"
    fr, en = (HERE / "page.fr.html").as_uri(), (HERE / "page.en.html").as_uri()
    frame.write_text(SIDE_BY_SIDE.format(fr=fr, en=en), encoding="utf-8")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1300, "height": 800})
            page.goto(frame.as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(PICTURE))
            browser.close()
    finally:
        frame.unlink()
    print(f"picture: {PICTURE}", file=sys.stderr)


if __name__ == "__main__":
    main()
