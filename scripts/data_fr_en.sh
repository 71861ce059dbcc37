#!/bin/bash
# The fr-en model's training, validation and dev files, made from the shared corpora.
# Usage: bash scripts/data_fr_en.sh SHARED_DATA OUT   (e.g. ../shared/data /work/data; ~2 min)
# What the card's "How it was made" describes, plus more-fra-eng's training files (issue #42).
# Training and validation files are French first for Tatoeba and validation, English first
# for the rest (as the card's commands give them --src-col/--tgt-col); OUT/eval/ holds the dev
# sets, French first, as `s2a evaluate FILE` reads them. Nothing here is for the repository.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")"); PY=${PYTHON:-$HERE/../.venv/bin/python}
[[ $PY = /* || $PY != */* ]] || PY=$PWD/$PY  # a venv's python: its link, not its target
S=$(realpath "$1"); mkdir -p "$2"; cd "$2"
N=$S/wmt-news-fra-eng; M=$S/more-fra-eng
swap() { awk -F'\t' '{print $2"\t"$1}' "$@"; }
"$PY" "$HERE/split.py" "$S/tatoeba-fra-eng/fra.txt" tatoeba --src-col 2 --tgt-col 1  # 2017 splits
# Tatoeba 2019 without every pair that shares a side with the test or valid split, sides
# compared as s2a reads them (normalize: "Lâchez-moi\u202f!" is "Lâchez-moi !", which split.py
# wrote); 1,000 lines of newstest2012 for validation (random.Random(12).shuffle). OUT/eval/
# tatoeba-test-unseen.tsv: the test lines no training file of the card before issue #42's
# shares a side with (they were compared raw then: 54 pairs matched a test or valid side)
SHARED=$S "$PY" - <<'PY'
import os, random
from seq2attn_cli.data.reading import normalize
shared = os.environ["SHARED"]
os.makedirs("eval", exist_ok=True)
def pairs_of(path):
    return [line.rstrip("\n").split("\t")[:2] for line in open(path, encoding="utf-8")]
test, valid = pairs_of("tatoeba/test.tsv"), pairs_of("tatoeba/valid.tsv")
fr = {normalize(a) for a, _ in test + valid}
en = {normalize(b) for _, b in test + valid}
tatoeba = pairs_of(f"{shared}/tatoeba-fra-eng/fra-2019.txt")
kept = [(f, e) for e, f in tatoeba if normalize(f) not in fr and normalize(e) not in en]
with open("tatoeba2019-all.tsv", "w", encoding="utf-8") as out:
    out.writelines(f"{f}\t{e}\n" for f, e in kept)
raw_fr, raw_en = {a for a, _ in test + valid}, {b for _, b in test + valid}
before = [(f, e) for e, f in tatoeba if f not in raw_fr and e not in raw_en]  # the raw filter
seen_fr, seen_en = {normalize(f) for f, _ in before}, {normalize(e) for _, e in before}
with open("eval/tatoeba-test-unseen.tsv", "w", encoding="utf-8") as out:
    out.writelines(
        f"{a}\t{b}\n" for a, b in test if normalize(a) not in seen_fr and normalize(b) not in seen_en
    )
news = pairs_of(f"{shared}/wmt-news-fra-eng/newstest2012.tsv")
random.Random(12).shuffle(news)
with open("newstest2012-1k.tsv", "w", encoding="utf-8") as out:
    out.writelines(f"{f}\t{e}\n" for e, f in news[:1000])
PY
awk -F'\t' 'split($1, w, " ") <= 4' tatoeba2019-all.tsv > tatoeba2019-short.tsv
"$PY" "$HERE/names.py" tatoeba2019-all.tsv > tatoeba2019-names.tsv
cp tatoeba/valid.tsv valid.tsv
swap "$S/multi30k-fra-eng/val.tsv" > multi30k-val.tsv
cp -f "$S/multi30k-fra-eng/train.tsv" train.tsv
for f in news-test2008 newssyscomb2009 newstest2009 newstest2010 newstest2011 newsdiscusstest2015; do
  cp -f "$N/$f.tsv" .
done
xz -dc "$S/canada-laws-fra-eng/laws.tsv.xz" > laws.tsv
xz -dc "$S/europarl-fra-eng/europarl-v7.tsv.xz" > europarl-v7.tsv
for f in python-docs django-docs bible-lsg-ult; do xz -dc "$M/$f.tsv.xz" > $f.tsv; done
for f in pawsx-wiki diabla-dialogue gnome-help tldr-pages multi30k-2017-2018; do cp -f "$M/$f.tsv" .; done
chmod u+w ./*.tsv
mkdir -p eval  # dev sets: never trained on nor used for validation
swap "$N/newstest2013.tsv" > eval/newstest2013.tsv
for f in ud-pud wmt24pp; do swap "$S/dev-fra-eng/$f.tsv" > eval/$f.tsv; done
for f in xnli mtnt-reddit wmt-chat; do swap "$M/dev-$f.tsv" > eval/$f.tsv; done
cp tatoeba/test.tsv eval/tatoeba-test.tsv
cp multi30k-val.tsv eval/multi30k-val.tsv
wc -l ./*.tsv eval/*.tsv
