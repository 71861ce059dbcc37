"""s2a: an RNN encoder-decoder with attention you can see, from the command line or Python.

    import seq2attn_cli as s2a
    tr = s2a.load()                                # the embedded fr-en model
    tr.translate("je suis étudiant").text          # one str in, one Translation out
    [t.text for t in tr.translate(["a", "b"])]     # a list in, a list out

Importing the package does not import torch; load() does.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .decoding.translation import Translation
    from .decoding.translator import Translator

try:
    __version__ = version("seq2attn-cli")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["Translation", "Translator", "__version__", "load"]


def load(
    model: str | Path | None = None,
    *,
    device: str = "cpu",
    quantized: bool = True,
    threads: int = 0,
) -> Translator:
    """Load a model directory (default: the embedded fr-en model), ready to translate."""
    if not isinstance(threads, int) or isinstance(threads, bool):
        raise TypeError(f"threads must be a whole number, not {type(threads).__name__} {threads!r}")
    if threads < 0:
        raise ValueError(f"threads must be 0 (as many as torch takes) or more, not {threads}")
    import torch

    from .decoding.search.batched import side_by_side
    from .decoding.translator import Translator
    from .model.device import pick_device

    if threads > 0:
        torch.set_num_threads(threads)
    where = pick_device(device)  # "cuda" without one: a ValueError that says so
    on_cpu = where.type == "cpu"
    return Translator.load(
        model,
        device=where,
        quantized=quantized,
        threads=side_by_side(threads) if on_cpu else 1,
    )


def __getattr__(name: str):
    """Translator and Translation on first use, so that the import stays free of torch."""
    if name == "Translator":
        from .decoding.translator import Translator

        return Translator
    if name == "Translation":  # torch-free: a result type of plain lists
        from .decoding.translation import Translation

        return Translation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
