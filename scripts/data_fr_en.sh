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
$PY "$HERE/split.py" "$S/tatoeba-fra-eng/fra.txt" tatoeba --src-col 2 --tgt-col 1  # 2017 splits
# Tatoeba 2019 without every pair that shares a side with the test or valid split; 1,000 lines of
# newstest2012 for validation (random.Random(12).shuffle)
SHARED=$S $PY - <<'PY'
import os, random
held = [l.rstrip("\n").split("\t") for f in ("tatoeba/test.tsv", "tatoeba/valid.tsv") for l in open(f)]
fr, en = {a for a, _ in held}, {b for _, b in held}
pairs = [l.rstrip("\n").split("\t")[:2] for l in open(f"{os.environ['SHARED']}/tatoeba-fra-eng/fra-2019.txt")]
with open("tatoeba2019-all.tsv", "w") as out:
    out.writelines(f"{f}\t{e}\n" for e, f in pairs if f not in fr and e not in en)
news = [l.rstrip("\n").split("\t") for l in open(f"{os.environ['SHARED']}/wmt-news-fra-eng/newstest2012.tsv")]
random.Random(12).shuffle(news)
with open("newstest2012-1k.tsv", "w") as out:
    out.writelines(f"{f}\t{e}\n" for e, f in news[:1000])
PY
awk -F'\t' 'split($1, w, " ") <= 4' tatoeba2019-all.tsv > tatoeba2019-short.tsv
$PY "$HERE/names.py" tatoeba2019-all.tsv > tatoeba2019-names.tsv
cp tatoeba/valid.tsv valid.tsv
swap "$S/multi30k-fra-eng/val.tsv" > multi30k-val.tsv
cp "$S/multi30k-fra-eng/train.tsv" train.tsv
for f in news-test2008 newssyscomb2009 newstest2009 newstest2010 newstest2011 newsdiscusstest2015; do
  cp "$N/$f.tsv" .
done
xz -dc "$S/canada-laws-fra-eng/laws.tsv.xz" > laws.tsv
xz -dc "$S/europarl-fra-eng/europarl-v7.tsv.xz" > europarl-v7.tsv
for f in python-docs django-docs bible-lsg-ult; do xz -dc "$M/$f.tsv.xz" > $f.tsv; done
for f in pawsx-wiki diabla-dialogue gnome-help tldr-pages multi30k-2017-2018; do cp "$M/$f.tsv" .; done
chmod u+w ./*.tsv
mkdir -p eval  # dev sets: never trained on nor used for validation
swap "$N/newstest2013.tsv" > eval/newstest2013.tsv
for f in ud-pud wmt24pp; do swap "$S/dev-fra-eng/$f.tsv" > eval/$f.tsv; done
for f in xnli mtnt-reddit wmt-chat; do swap "$M/dev-$f.tsv" > eval/$f.tsv; done
cp tatoeba/test.tsv eval/tatoeba-test.tsv
cp multi30k-val.tsv eval/multi30k-val.tsv
wc -l ./*.tsv eval/*.tsv
