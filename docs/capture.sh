#!/usr/bin/env bash
# Re-capture the outputs shown in docs/attention-hands-on.md by running its runnable commands
# against the real models (the docs test runs the same commands against tiny models). The
# Chinese guide, docs/attention-hands-on.zh.md, has the same runnable blocks: --write puts the
# same fresh outputs into both.
#
#   bash docs/capture.sh            print every runnable block with its fresh output
#   bash docs/capture.sh --write    ... and put the fresh outputs into both guides in place
#
# The commands run in order in a scratch directory laid out like a clone (fra.txt, scripts/,
# data/ made by the guide's own split command, docs/img -> this repository's docs/img, so the
# --save pictures are rewritten too), with OMP_NUM_THREADS=1 and COLUMNS=100 (output piped,
# as in the guide: no colour). Settings, with this machine's paths as defaults:
#   S2A_MODEL      the default French->English model   (this repository's models/fr-en)
#   SMALL          the small models' directory: general/, none/ and their logs general.log,
#                  none.log (made by the guide's two `s2a train` commands)  (/work/runs/small)
#   FRA_TXT        Tatoeba's fra.txt (English TAB French TAB attribution)
#                                             (/work/shared/data/tatoeba-fra-eng/fra.txt)
#   CAPTURE_TRAIN  1: really run every `s2a train` command of the guide (8 minutes each, the
#                  "try it yourself" ones of step 7 too; the models stay in the scratch
#                  directory, whose path is printed); otherwise their output is the start and
#                  the end of $SMALL/NAME.log (NAME from --out small-NAME; blocks whose log does
#                  not exist keep their text), and small-NAME is $SMALL/NAME. Without
#                  $SMALL/general and $SMALL/none, blocks that use a small model keep their text.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
export REPO
export S2A_MODEL="${S2A_MODEL:-$REPO/models/fr-en}"
export SMALL="${SMALL:-/work/runs/small}"
export FRA_TXT="${FRA_TXT:-/work/shared/data/tatoeba-fra-eng/fra.txt}"
export CAPTURE_TRAIN="${CAPTURE_TRAIN:-0}"
export OMP_NUM_THREADS=1 COLUMNS=100
export PATH="$REPO/.venv/bin:$PATH"
exec "$REPO/.venv/bin/python" - "$@" <<'PY'
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

repo, small = Path(os.environ["REPO"]), Path(os.environ["SMALL"])
guide = repo / "docs" / "attention-hands-on.md"
chinese = repo / "docs" / "attention-hands-on.zh.md"
write = "--write" in sys.argv[1:]
train = os.environ["CAPTURE_TRAIN"] == "1"
sys.path.insert(0, str(repo / "docs"))
from runnable import RUNNABLE as BLOCK, block_commands  # noqa: E402


def train_log(command: str) -> str | None:
    """The start and end of the log of the real run of an `s2a train` command."""
    name = re.search(r"--out small-(\w+)", command)
    log = small / f"{name.group(1)}.log" if name else None
    if log is None or not log.exists():
        return None
    # without the wall time that run.sh's /usr/bin/time appended to the log
    lines = [ln for ln in log.read_text(encoding="utf-8").splitlines()
             if not re.fullmatch(r"\w+ wall [\d.]+ s", ln)]
    last = max(i for i, line in enumerate(lines) if line.startswith("validation after"))
    head = [ln for ln in lines[:4] if not ln.startswith("step ")]
    text = "\n".join(head + ["[... every epoch: progress, a validation table, samples ...]"]
                     + lines[last:])
    # the real run read train30k.tsv / /tmp/tatoeba/valid.tsv and wrote to general/ or none/
    text = re.sub(r"^\S*train30k\.tsv:", "small.tsv:", text, flags=re.M)
    text = re.sub(r"^\S*/valid\.tsv:", "data/valid.tsv:", text, flags=re.M)
    return re.sub(r"model written to (\w+)$", r"model written to small-\1", text, flags=re.M)


work = Path(tempfile.mkdtemp(prefix="s2a-capture-"))
(work / "fra.txt").symlink_to(os.environ["FRA_TXT"])
(work / "scripts").symlink_to(repo / "scripts")
(work / "docs").mkdir()
(repo / "docs" / "img").mkdir(exist_ok=True)
(work / "docs" / "img").symlink_to(repo / "docs" / "img")
have_small = all((small / name).is_dir() for name in ("general", "none"))
if not train and have_small:
    for name in ("general", "none"):
        (work / f"small-{name}").symlink_to(small / name)

text = guide.read_text(encoding="utf-8")
if BLOCK.findall(chinese.read_text(encoding="utf-8")) != BLOCK.findall(text):
    sys.exit(f"{chinese.name}: its runnable blocks differ from {guide.name}'s; make them the same")
bodies, failed = [], []
for match in BLOCK.finditer(text):
    block = match.group(1)
    new = []
    for command in block_commands(block):
        typed = command.replace("\\\n", " ")
        if "small-" in typed and not train and not have_small:
            print(f"(kept as it is: no small models in {small}: {typed[:60]})", file=sys.stderr)
            new = None
            break
        if typed.startswith("s2a train ") and not train:
            output = train_log(typed)
            if output is None:
                print(f"(kept as it is: no log for: {typed[:60]})", file=sys.stderr)
                new = None
                break
        else:
            started = time.monotonic()
            result = subprocess.run(["bash", "-c", typed], cwd=work, text=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
            output = result.stdout
            if result.returncode:
                failed.append(typed)
            print(f"{time.monotonic() - started:6.1f} s  exit {result.returncode}  "
                  f"{typed.splitlines()[0][:70]}", file=sys.stderr)
        output = "\n".join(line.rstrip() for line in output.rstrip().splitlines())
        new.append("$ " + command + ("\n" + output if output else ""))
    body = block if new is None else "\n".join(new) + "\n"
    print("```console\n" + body + "```\n")
    bodies.append(body)
if train:
    print(f"the models trained are in {work}", file=sys.stderr)
else:
    shutil.rmtree(work)  # symlinks inside are removed, never followed
if failed:
    sys.exit("failed, the guide is left as it was:\n  " + "\n  ".join(failed))
if write:
    for path in (guide, chinese):
        old, pieces, end = path.read_text(encoding="utf-8"), [], 0
        for match, body in zip(BLOCK.finditer(old), bodies, strict=True):
            pieces.append(old[end:match.start(1)] + body)
            end = match.end(1)
        path.write_text("".join(pieces) + old[end:], encoding="utf-8")
        print(f"updated {path}", file=sys.stderr)
PY
