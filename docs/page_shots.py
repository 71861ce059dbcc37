"""Re-take the screenshots of the page at / shown in the README, with the embedded model.

    .venv/bin/python docs/page_shots.py

docs/serve-page.png: two lines, "car" hovered in the first; docs/confidence-page.png: three
lines, two of them under 0.5 confidence, marked red, with their dropped words underlined.
Serves the model as docs/walk_shots.py does; needs playwright and Chromium (/usr/bin/chromium).
"""

from __future__ import annotations

import re
import sys

from playwright.sync_api import Browser, sync_playwright
from walk_shots import ARGS, DOCS, serve

HOVERED = ["La voiture rouge est devant la maison.", "Je ne sais pas ce que tu veux dire."]
UNSURE = [
    "Je suis étudiant.",
    "Le gros chien noir et blanc aboie sans cesse.",
    "Tiens, voilà Jean-Baptiste qui arrive !",
]
OFFLINE = [*ARGS, "--disable-background-networking"]


def shoot(browser: Browser, url: str, lines: list[str], width: int, name: str, hover: str) -> None:
    """Translate `lines` on the page, hover the first line's word `hover` (if any), save a PNG."""
    page = browser.new_page(viewport={"width": width, "height": 800}, device_scale_factor=1)
    page.goto(url)
    page.fill("#text", "\n".join(lines))
    page.click("#go")
    page.wait_for_selector(f"#lines .line:nth-child({len(lines)})")
    if hover:
        word = page.locator("#lines .line").first.locator(
            ".words.tgt .w", has_text=re.compile(f"^{re.escape(hover)}$")
        )
        word.first.hover()
    page.screenshot(path=str(DOCS / name), full_page=True)
    print(f"saved docs/{name}", file=sys.stderr)
    page.close()


def main() -> None:
    """Serve the embedded model and take both pictures."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=OFFLINE)
        proc, url = serve()
        try:
            shoot(browser, url, HOVERED, 760, "serve-page.png", hover="car")
            shoot(browser, url, UNSURE, 900, "confidence-page.png", hover="")
        finally:
            proc.terminate()
        browser.close()


if __name__ == "__main__":
    main()
