"""Re-take the screenshots of the step-through page (/walk) shown in the README and the guides.

    .venv/bin/python docs/walk_shots.py [SMALL_GENERAL SMALL_NONE]

Serves the embedded model and takes steps 1, 4 and the last of "je suis étudiant ." (the 4th
step is the article's figure), then, given two small models, serves them side by side
(`s2a serve --model SMALL_GENERAL --compare SMALL_NONE`) and takes step 4 of both. The ones in
docs/ were trained like step 3 of the guide, but shorter: on 30,000 Tatoeba pairs of at most 6
French words, `--attention general` or `none`, `--vocab-size 2000 --embed 96 --hidden 192 --lr
0.003 --max-time 4.5 --threads 1` (validation BLEU 7.91 and 7.70 on the short pairs of
valid.tsv).
Needs playwright and Chromium (/usr/bin/chromium), as tests/test_web_page.py does.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import sync_playwright

DOCS = Path(__file__).resolve().parent
S2A = str(Path(sys.executable).parent / "s2a")
SENTENCE = "je suis étudiant ."
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def serve(*args: str) -> tuple[subprocess.Popen, str]:
    """`s2a serve ARGS` on a free port: its process and URL."""
    cmd = [S2A, "serve", "--port", "0", "--threads", "1", *args]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    found = re.search(r"http://[\d.]+:\d+/", line)
    if not found:
        sys.exit(line + proc.stderr.read())
    return proc, found[0]


def shoot(browser, url: str, steps: dict[int, str], width: int) -> None:
    """Open /walk for SENTENCE, go to each step (1-based, -1: the last), save a PNG of the page."""
    page = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
    page.emulate_media(reduced_motion="reduce")  # c_t complete, not caught mid-sum
    page.goto(f"{url}walk?q={quote(SENTENCE)}")
    page.wait_for_selector("#where:has-text('step 1 of')")
    for step, name in steps.items():
        page.keyboard.press("End" if step == -1 else "Home")
        for _ in range(max(step - 1, 0)):
            page.keyboard.press("ArrowRight")
        page.screenshot(path=str(DOCS / name), full_page=True)
        print(f"saved docs/{name}", file=sys.stderr)
    page.close()


def main() -> None:
    small = sys.argv[1:3]
    if len(small) == 1:
        sys.exit("usage: walk_shots.py [SMALL_MODEL_A SMALL_MODEL_B] (both, or none)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        proc, url = serve()
        try:
            shots = {1: "walk-step-1.png", 4: "walk-step-4.png", -1: "walk-step-last.png"}
            shoot(browser, url, shots, width=1000)
        finally:
            proc.terminate()
        if len(small) == 2:
            proc, url = serve("--model", small[0], "--compare", small[1])
            try:
                shoot(browser, url, {4: "walk-compare.png"}, width=1300)
            finally:
                proc.terminate()
        browser.close()


if __name__ == "__main__":
    main()
