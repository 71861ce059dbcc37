"""`s2a inspect`: the model card, one sentence decoded step by step, or the probe's attention
through training; also saved as SVG or HTML."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..config import DECODE
from .common import (
    Beam,
    Debug,
    Device,
    ModelDir,
    Quantize,
    SearchThreads,
    check_output,
    fail,
    glossary_terms,
    handled,
    load_translator,
    model_dir,
    setup_torch,
    writing,
)
from .streams import StdoutConsole, err, use_color


def inspect(
    text: Annotated[
        str | None, typer.Argument(metavar="TEXT", help="A sentence; none: the model card.")
    ] = None,
    model: ModelDir = None,
    beam: Beam = DECODE.beam,
    quantize: Quantize = DECODE.quantize,
    target: Annotated[str | None, typer.Option(help="Force-decode this translation.")] = None,
    steps: Annotated[bool, typer.Option(help="Show every decoding step.")] = False,
    history: Annotated[bool, typer.Option(help="Replay the probe's attention per epoch.")] = False,
    pieces: Annotated[bool, typer.Option(help="Heatmap over subword pieces.")] = False,
    save: Annotated[
        Path | None, typer.Option(help="Also write the picture as .svg or .html.")
    ] = None,
    glossary: Annotated[
        Path | None, typer.Option(help="French term<TAB>English term a line, as translate's.")
    ] = None,
    device: Device = "auto",
    threads: SearchThreads = 0,
    debug: Debug = False,
) -> None:
    """Show the model card, or how the model translates one sentence, step by step."""
    if history and (text is not None or target or steps):
        fail(
            "--history replays the probe sentence of training: give it no TEXT, --target or --steps"
        )
    if target is not None and not target.strip():
        fail("--target is empty: give the translation to force-decode, or leave --target out")
    if text is None and (target or steps):
        fail("--target and --steps need a sentence: s2a inspect TEXT ...")
    if save and save.suffix.lower() not in (".svg", ".html"):
        fail(f"--save: {save} must end in .svg or .html")
    if save:
        check_output(save, "--save")
    if glossary is not None and text is None:
        fail("--glossary needs a sentence: s2a inspect TEXT --glossary FILE")
    terms = glossary_terms(glossary)
    with handled(debug):
        directory = model_dir(model)
        if history:
            from ..card import read_history
            from ..views.renderables import history_view

            view = partial(history_view, read_history(directory), pieces=pieces)
        elif text is None:
            view = _card(directory, device=device, quantize=quantize, threads=threads)
        else:
            options = dict(beam=beam, quantize=quantize, device=device, threads=threads)
            options["glossary"] = terms
            view = _sentence(directory, text, target=target, steps=steps, pieces=pieces, **options)
        console = StdoutConsole()
        console.print(view(color=use_color(console), width=console.width))
        if save:  # the saved picture is always in colour, whatever the terminal is
            from ..views.export import save as save_picture

            width = max(console.width, 100)
            title = f"s2a inspect: {text}" if text else "s2a inspect"
            with writing(save, "--save"):
                save_picture(view(color=True, width=width), save, width=width, title=title)
            err.print(escape(f"saved {save}"))


def _card(directory: Path, *, device: str, quantize: bool, threads: int) -> Callable[..., Any]:
    """The model card's view (of the float model on CPU: the card counts its parameters), with
    the precision `s2a translate` would decode in on the device asked for."""
    from ..card import model_card
    from ..decoding.translator import precision
    from ..views.card import card_view

    torch_device = setup_torch(device, threads)
    card = model_card(directory)
    card["decoding"] = {
        "device": str(torch_device),
        "precision": precision(torch_device, quantized=quantize),
    }
    return partial(card_view, card)


def _sentence(
    directory: Path,
    text: str,
    *,
    target: str | None,
    steps: bool,
    pieces: bool,
    beam: int,
    quantize: bool,
    device: str,
    threads: int,
    glossary: Any,
) -> Callable[..., Any]:
    """The view of one sentence, decoded as `s2a translate` decodes it with the same flags."""
    from ..decoding.explain.inspection import inspect_sentence
    from ..views.renderables import sentence_view

    translator = load_translator(directory, device=device, threads=threads, quantize=quantize)
    seen = inspect_sentence(translator, text, target=target, beam=beam, glossary=glossary)
    search = "greedy" if beam == 1 else f"beam {beam}"
    label = f"translation ({search}, {translator.precision})"
    if target:
        label = "forced decoding of the given target"
    return partial(sentence_view, seen, label=label, steps=steps, pieces=pieces)
