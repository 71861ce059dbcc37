#!/usr/bin/env bash
# `make demo`: the embedded French->English model at work, from a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
S2A=.venv/bin/s2a
sentences=(
  "Bonjour !"
  "Je m'appelle Pierre."
  "je suis étudiant ."
  "Il fait beau aujourd'hui."
  "Où est la gare ?"
  "Nous avons mangé une pomme rouge."
  "Je ne sais pas ce que tu veux dire."
  "Elle lit un livre intéressant dans le jardin."
)

echo "== s2a translate: French in, English out (beam 5, one line out per line in) =="
paste <(printf '%s\n' "${sentences[@]}") <(printf '%s\n' "${sentences[@]}" | $S2A translate) \
  | sed 's/\t/  ->  /'

echo
echo "== s2a translate --heatmap: where the decoder looked for each English word =="
$S2A translate --heatmap "La voiture rouge est devant la maison." 2>&1

echo
echo "== next =="
echo "  cat book.fr | .venv/bin/s2a translate > book.en   # translate a whole file"
echo "  .venv/bin/s2a translate --align < book.fr         # + Pharaoh word alignments"
echo "  .venv/bin/s2a inspect 'je suis étudiant'          # attention step by step"
echo "  .venv/bin/s2a inspect                             # the model card"
