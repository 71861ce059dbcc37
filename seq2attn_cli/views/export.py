"""Save what a command drew as one self-contained SVG or HTML file (`s2a inspect --save`).

The picture is drawn on a console of its own, always in colour whatever the terminal is, and
written with plain templates: the system's monospace font, no web font or any other
address to fetch, no window drawn around it, and a title.
"""

from __future__ import annotations

import io
from html import escape
from pathlib import Path
from string import Template

from rich.console import Console, RenderableType
from rich.terminal_theme import SVG_EXPORT_THEME as THEME

SUFFIXES = (".svg", ".html")
MARGIN = 12  # pixels of background around the text

# Two fillings: first $names here, then rich's {placeholders} ({{ }} are literal braces).
SVG = Template("""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 $width $height">
<title>$title</title>
<style>
.{unique_id}-matrix {{
    font-family: Menlo, Consolas, "DejaVu Sans Mono", monospace;
    font-size: {char_height}px;
    line-height: {line_height}px;
}}
{styles}
</style>
<defs>
<clipPath id="{unique_id}-clip-terminal">
  <rect x="0" y="0" width="{terminal_width}" height="{terminal_height}"/>
</clipPath>
{lines}
</defs>
<rect width="100%" height="100%" fill="$background"/>
<g transform="translate($margin, $margin)" clip-path="url(#{unique_id}-clip-terminal)">
{backgrounds}
<g class="{unique_id}-matrix">
{matrix}
</g>
</g>
</svg>
""")

HTML = Template("""<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<title>$title</title>
<style>
{stylesheet}
body {{
    color: {foreground};
    background-color: {background};
    margin: ${margin}px;
}}
pre, code {{ font-family: Menlo, Consolas, "DejaVu Sans Mono", monospace; }}
</style>
</head>
<body>
<pre><code>{code}</code></pre>
</body>
</html>
""")


def _literal(text: str) -> str:
    """Text that comes out of str.format unchanged, HTML-escaped."""
    return escape(text).replace("{", "{{").replace("}", "}}")


def save(picture: RenderableType, path: Path, *, width: int, title: str) -> None:
    """Draw `picture` in colour, `width` columns wide, into `path`: SVG or HTML by its suffix."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: a picture must end in {' or '.join(SUFFIXES)}")
    recorded = Console(
        record=True, file=io.StringIO(), color_system="truecolor", force_terminal=True, width=width
    )
    recorded.print(picture)
    fields = {"title": _literal(title), "margin": MARGIN}
    if suffix == ".html":
        text = recorded.export_html(theme=THEME, code_format=HTML.substitute(fields))
    else:
        # the size of the text in pixels, as rich lays it out, to frame it with the margin
        size = recorded.export_svg(code_format="{terminal_width} {terminal_height}", clear=False)
        width_px, height_px = (float(value) + 2 * MARGIN for value in size.split())
        background = THEME.background_color.hex
        template = SVG.substitute(
            fields, width=f"{width_px:g}", height=f"{height_px:g}", background=background
        )
        text = recorded.export_svg(title=title, theme=THEME, code_format=template)
    path.write_text(text, encoding="utf-8")
