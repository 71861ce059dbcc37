"""Where a run's corpora are: stored as absolute paths, found again by --resume. No torch."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ..config import CorpusSpec
from ..data.reading import check_file
from ..errors import CorpusError


def anchored(specs: list[CorpusSpec]) -> list[CorpusSpec]:
    """The specs with their files checked and their paths absolute, as config.json keeps them."""
    for spec in specs:
        check_file(Path(spec.path))  # named as the user typed it
    # absolute: --resume then finds the files from whatever directory it is run in
    return [dataclasses.replace(s, path=os.path.abspath(s.path)) for s in specs]


def located(
    specs: list[CorpusSpec], given: list[Path], *, out: Path
) -> tuple[list[CorpusSpec], list[str]]:
    """A stored run's specs with their files found and checked, and notes for the user.

    A stored file that is gone is taken from the file given at its place, if as many are
    given (the project moved); a relative path (an older s2a stored paths as typed) is taken
    from the current directory. A file not found is a CorpusError saying where it looked.
    """
    places: list[Path | None] = list(given) if len(given) == len(specs) else [None] * len(specs)
    found, notes = [], []
    for spec, place in zip(specs, places, strict=True):
        path = Path(spec.path)
        if place is not None and not os.path.lexists(path) and os.path.lexists(place):
            notes.append(f"{path} is gone; the run goes on with {place}")
            path = Path(os.path.abspath(place))  # stored so from now on
        elif not path.is_absolute():  # typed relative to where that run was started: unknown
            tried = os.path.abspath(path)
            if not os.path.lexists(tried):
                raise CorpusError(
                    f"{path}: no such file (looked for {tried}); the run in {out} stored this "
                    "path relative to the directory it was started in: resume from there"
                )
            path = Path(tried)  # stored absolute from now on
        elif not os.path.lexists(path):
            raise CorpusError(
                f"{path}: no such file, stored by the run in {out}; if it moved, give it again "
                "(s2a train CORPUS ... --valid FILE --resume)"
            )
        check_file(path)
        found.append(dataclasses.replace(spec, path=str(path)))
    return found, notes
