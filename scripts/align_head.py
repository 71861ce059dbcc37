"""An alignment head on the frozen model (issue #43): measure whether it beats attention's AER.

Usage:
    python scripts/align_head.py extract --pairs N --out FEATS.pt  # features of training pairs
    python scripts/align_head.py extract --trial --out TRIAL.pt    # the shared trial set
    python scripts/align_head.py train TRIAL.pt FEATS.pt... [--minutes M] [--dim D]

The translation model is never trained: features come out of forced decoding under
inference_mode (align/forced.py's batching), so translations stay byte-identical. For each
target piece t the head scores every source piece s (</s> included: the null link) from
q = [h_t; h_{t+1}; emb(y_t)] (the decoder's RNN states of the step that writes y_t and of the
step fed it, and y_t's embedding) and k = [enc_s; emb(x_s)], plus the log attention weights of
both steps, each with a learned scale. Training targets: eflomal's word links (branch guide's
/work/runs/guide/align-ft/*.align) mapped to pieces as data/guides.py's piece_links does.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import torch
from torch import nn

from seq2attn_cli.align.aer import Score, read_gold, read_pharaoh, score
from seq2attn_cli.align.aligner import word_weights
from seq2attn_cli.align.forced import forced_batches, read
from seq2attn_cli.align.methods import METHODS, column_best, grow_diag, row_best
from seq2attn_cli.align.words import groups
from seq2attn_cli.config import BOS, EOS, PAD
from seq2attn_cli.data.reading import ReadReport, iter_pairs
from seq2attn_cli.decoding.search.batched import padded, width

Q, D, A = Path("/work/data/q"), Path("/work/runs/guide/data"), Path("/work/runs/guide/align-ft")
AL = Path("/work/shared/data/align-fra-eng")
# (corpus, French column, English column, share of the training pairs drawn from it)
CORPORA = [
    (Q / "tatoeba2019-all.tsv", 1, 2, 0.25),
    (Q / "tatoeba2019-short.tsv", 1, 2, 0.05),
    (Q / "tatoeba2019-names.tsv", 1, 2, 0.05),
    (Q / "train.tsv", 2, 1, 0.2),
    (D / "news-6.tsv", 2, 1, 0.15),
    (D / "europarl-40k.tsv", 2, 1, 0.3),
]


def say(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def training_pairs(total: int, seed: int) -> list[tuple[str, str, set[tuple[int, int]]]]:
    """`total` pairs with eflomal links drawn from the corpora by their shares."""
    rng = random.Random(seed)
    out = []
    for path, src_col, tgt_col, share in CORPORA:
        guide = (A / path.name.replace(".tsv", ".align")).read_text(encoding="utf-8").split("\n")
        report, found, bad = ReadReport(path=str(path)), [], 0
        for src, tgt in iter_pairs(path, report, src_col=src_col, tgt_col=tgt_col):
            links = read_pharaoh(guide[report.lines - 1])
            ns, nt = len(src.split()), len(tgt.split())
            if any(i >= ns or j >= nt for i, j in links):
                bad += 1
                continue
            if links:
                found.append((src, tgt, links))
        take = rng.sample(found, min(len(found), round(total * share)))
        say(
            f"{path.name}: {len(found)} pairs with links, {bad} past their words, {len(take)} taken"
        )
        out += take
    rng.shuffle(out)
    return out


@torch.inference_mode()
def extract(translator, pairs: list[tuple[str, str, set]], batch_size: int = 32) -> list[dict]:
    """Frozen features of each pair (fp16), with its piece links (if any) and word groups."""
    model = translator.model  # on the CPU: the features are kept there
    to_index = {p: i for i, p in enumerate(translator.tgt_pieces)}
    src = read(translator, [s for s, _, _ in pairs])
    tgt = read(translator, [t for _, t, _ in pairs])
    keep = [n for n in range(len(pairs)) if src[n].ids and tgt[n].ids]
    sizes = [(len(src[n].ids) + 1, len(tgt[n].ids) + 1) for n in keep]
    out: list[dict | None] = [None] * len(keep)
    started, done = time.monotonic(), 0
    for index in forced_batches(sizes, batch_size):
        lengths = torch.tensor([sizes[i][0] for i in index])
        src_batch = torch.full((len(index), int(lengths.max())), PAD)
        tgt_in = torch.full((len(index), max(sizes[i][1] for i in index)), PAD)
        feds = []
        for r, i in enumerate(index):
            n = keep[i]
            src_batch[r, : sizes[i][0]] = torch.tensor(src[n].ids + [EOS])
            # SentencePiece ids -> output indices, as align/forced.py feeds them
            fed = [BOS] + [to_index.get(i_, 1) for i_ in tgt[n].ids]
            feds.append(fed)
            tgt_in[r, : len(fed)] = torch.tensor(fed)
        encoded = padded(model.encode(src_batch, lengths), width(int(lengths.max())))
        h, _, weights, _ = model.decoder.run(tgt_in, encoded.init, encoded.states, encoded.mask)
        for r, i in enumerate(index):
            n = keep[i]
            s_len, t_len = sizes[i]
            s_text, t_text, links = pairs[n]
            sg, tg = groups(s_text, src[n].pieces), groups(t_text, tgt[n].pieces)
            piece_links = sorted(
                {(t, s) for i_, j in links if i_ < len(sg) and j < len(tg)
                 for t in tg[j] for s in sg[i_]}
            )  # fmt: skip
            out[i] = {
                "enc": encoded.states[r, :s_len].half().clone(),  # (src pieces + 1, hidden)
                "h": h[r, :t_len].half().clone(),  # (tgt pieces + 1, hidden)
                "w": weights[r, :t_len, :s_len].half().clone(),  # (tgt + 1, src + 1)
                "src_ids": torch.tensor(src[n].ids + [EOS]),
                "tgt_fed": torch.tensor(feds[r][1:]),  # y_t as the decoder reads it
                "links": piece_links,
                "sg": sg,
                "tg": tg,
                "n": n,
            }
        done += len(index)
        if done // 2000 != (done - len(index)) // 2000:
            say(f"extract: {done}/{len(keep)} pairs, {done / (time.monotonic() - started):.0f}/s")
    return out  # type: ignore[return-value]


class Head(nn.Module):
    """Scores source pieces for each target piece: a bilinear match plus scaled log attention."""

    def __init__(self, *, hidden: int, embed: int, dim: int, src_embed: torch.Tensor,
                 tgt_embed: torch.Tensor) -> None:  # fmt: skip
        super().__init__()
        self.src_embed = nn.Embedding.from_pretrained(src_embed.float(), freeze=True)
        self.tgt_embed = nn.Embedding.from_pretrained(tgt_embed.float(), freeze=True)
        self.q = nn.Sequential(nn.Linear(2 * hidden + embed, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.k = nn.Sequential(nn.Linear(hidden + embed, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.scale = nn.Parameter(torch.tensor([1.0, 1.0]))  # on log attention: writing, reading
        self.dim = dim

    def forward(self, b: dict) -> torch.Tensor:
        """Scores (batch, tgt, src + 1), -inf past each source."""
        q_in = torch.cat([b["h"][:, :-1], b["h"][:, 1:], self.tgt_embed(b["tgt_fed"])], -1)
        k_in = torch.cat([b["enc"], self.src_embed(b["src_ids"])], -1)  # (batch, src+1, H+E)
        scores = self.q(q_in) @ self.k(k_in).transpose(1, 2) / math.sqrt(self.dim)
        logw = b["w"].clamp(min=1e-6).log()  # (batch, tgt + 1, src + 1)
        scores = scores + self.scale[0] * logw[:, :-1] + self.scale[1] * logw[:, 1:]
        return scores.masked_fill(~b["src_mask"][:, None, :], float("-inf"))


def collate(items: list[dict]) -> dict:
    """Pad pairs into a batch of float tensors; 'target': (batch, tgt, src+1) 1 on links."""
    S = max(len(x["src_ids"]) for x in items)
    T = max(len(x["tgt_fed"]) for x in items)
    B, H = len(items), items[0]["h"].size(1)
    b = {
        "enc": torch.zeros(B, S, H), "h": torch.zeros(B, T + 1, H), "w": torch.zeros(B, T + 1, S),
        "src_ids": torch.zeros(B, S, dtype=torch.long),
        "tgt_fed": torch.zeros(B, T, dtype=torch.long),
        "src_mask": torch.zeros(B, S, dtype=torch.bool),
        "tgt_mask": torch.zeros(B, T, dtype=torch.bool),
        "target": torch.zeros(B, T, S, dtype=torch.bool),
    }  # fmt: skip
    for r, x in enumerate(items):
        s, t = len(x["src_ids"]), len(x["tgt_fed"])
        b["enc"][r, :s], b["h"][r, : t + 1], b["w"][r, : t + 1, :s] = x["enc"], x["h"], x["w"]
        b["src_ids"][r, :s], b["tgt_fed"][r, :t] = x["src_ids"], x["tgt_fed"]
        b["src_mask"][r, :s], b["tgt_mask"][r, :t] = True, True
        for ti, si in x["links"]:
            b["target"][r, ti, si] = True
    return b


def loss_of(scores: torch.Tensor, b: dict, null: bool) -> tuple[torch.Tensor, int]:
    """-log of the mass on linked source pieces, per target piece; unlinked rows aim at </s>
    (`null`) or are skipped."""
    logp = scores.log_softmax(-1)  # (batch, tgt, src + 1)
    target = b["target"].clone()
    linked = target.any(-1) & b["tgt_mask"]  # (batch, tgt)
    rows = linked
    if null:
        last = b["src_mask"].sum(-1) - 1  # </s> column per pair
        unlinked = ~linked & b["tgt_mask"]
        r, t = unlinked.nonzero(as_tuple=True)
        target[r, t, last[r]] = True
        rows = b["tgt_mask"]
    mass = logp.masked_fill(~target, float("-inf")).logsumexp(-1)  # (batch, tgt)
    return -(mass[rows]).sum(), int(rows.sum())


def column_loss(scores: torch.Tensor, b: dict) -> tuple[torch.Tensor, int]:
    """The other direction off the same scores: for each linked source piece, -log of the
    mass over target pieces (softmax down the column) on the ones linked to it."""
    cols = scores.masked_fill(~b["tgt_mask"][:, :, None], float("-inf"))
    cols = cols.masked_fill(~b["src_mask"][:, None, :], 0.0)  # padding columns: finite, unused
    logp = cols.log_softmax(1)  # (batch, tgt, src + 1)
    linked = b["target"].any(1)  # (batch, src + 1)
    mass = logp.masked_fill(~b["target"], float("-inf")).logsumexp(1)  # (batch, src + 1)
    return -(mass[linked]).sum(), int(linked.sum())


def word_probs(p: torch.Tensor, sg: list[list[int]], tg: list[list[int]]) -> tuple[list, list]:
    """Piece probabilities (tgt, src + 1) over words: rows target words, sum over source
    pieces, mean over target pieces; and each target word's null (</s>) mass."""
    S = p.size(1) - 1
    sums = torch.zeros(S + 1, len(sg))  # (src pieces + 1, src words)
    for w, g in enumerate(sg):
        sums[g, w] = 1.0
    means = torch.zeros(len(tg), p.size(0))  # (tgt words, tgt pieces)
    for w, g in enumerate(tg):
        means[w, g] = 1.0 / max(1, len(g))
    return (means @ p @ sums).tolist(), (means @ p[:, S]).tolist()


def above(m: list[list[float]], tau: float) -> set[tuple[int, int]]:
    """Every (source word, target word) whose probability passes `tau`."""
    return {(i, j) for j, row in enumerate(m) for i, v in enumerate(row) if v > tau}


def column_probs(scores: torch.Tensor, sg: list[list[int]], tg: list[list[int]]) -> list:
    """Each source word's distribution over target words (softmax down the columns, </s>
    left out): summed over target pieces, averaged over the source word's pieces."""
    pc = scores[:, :-1].softmax(0)  # (tgt, src)
    padded_pc = torch.cat([pc, torch.zeros(pc.size(0), 1)], 1)  # (tgt, src + 1)
    mc = word_probs(padded_pc, sg, tg)[0]  # mean over target pieces, sum over source pieces
    sizes = [max(1, len(g)) for g in sg]
    return [[v * len(tg[j]) / sizes[i] for i, v in enumerate(r)] for j, r in enumerate(mc)]


def variants_of(x: dict, scores: torch.Tensor) -> dict[str, set[tuple[int, int]]]:
    """The links of one trial pair, per way of reading them off the head's scores."""
    m, null = word_probs(scores.softmax(-1), x["sg"], x["tg"])  # rows: target words
    mc = column_probs(scores, x["sg"], x["tg"])
    rows, cols, cols2 = row_best(m), column_best(m), column_best(mc)
    writing, reading = word_weights(x["w"].float(), x["sg"], x["tg"])
    attention = METHODS["shared"](writing, reading)
    mean = [
        [(a + c) / 2 for a, c in zip(ra, rc, strict=True)] for ra, rc in zip(m, mc, strict=True)
    ]
    found = {
        "argmax": rows,
        "argmax-null": {(i, j) for i, j in rows if m[j][i] > null[j]},
        "intersect": rows & cols,
        "gdf": grow_diag(rows & cols, rows | cols),
        "col2": cols2,
        "int2": rows & cols2,
        "gdf2": grow_diag(rows & cols2, rows | cols2),
        "intersect|shared": (rows & cols) | attention,
        "gd(intersect,shared)": grow_diag(rows & cols, attention | rows, final=False),
    }
    found |= {f"mean>{tau}": above(mean, tau) for tau in (0.3, 0.4, 0.5)}
    found |= {f"p>{tau}": above(m, tau) for tau in (0.2, 0.3, 0.4, 0.5)}
    return found


def evaluate(head: Head, trial: list[dict], gold: dict) -> dict[str, Score]:
    """AER, precision, recall per way of reading links off the head."""
    variants: dict[str, list] = {}
    head.eval()
    with torch.no_grad():
        for x in trial:
            for k, v in variants_of(x, head(collate([x]))[0]).items():
                variants.setdefault(k, []).append(v)
    head.train()
    return {k: score(v, gold) for k, v in variants.items()}


def batches(items: list[dict], size: int, rng: random.Random) -> list[list[dict]]:
    """Batches of like target lengths, in random order."""
    order = sorted(range(len(items)), key=lambda i: (len(items[i]["tgt_fed"]), rng.random()))
    out = [[items[i] for i in order[k : k + size]] for k in range(0, len(order), size)]
    rng.shuffle(out)
    return out


def train(args: argparse.Namespace) -> None:
    """Train a head on saved features, scoring the trial set as it goes."""
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    items, seen_pairs = [], set()
    for path in args.features:  # feature files drawn with different seeds may share pairs
        saved = torch.load(path, weights_only=False)
        for x in saved.pop("items"):
            key = (tuple(x["src_ids"].tolist()), tuple(x["tgt_fed"].tolist()))
            if x["links"] and key not in seen_pairs:
                seen_pairs.add(key)
                items.append(x)
    items = items[: args.pairs or None]
    trial = torch.load(args.trial, weights_only=False)["items"]
    gold = read_gold((AL / "dev.wa").read_text(encoding="utf-8").splitlines())
    head = Head(hidden=items[0]["h"].size(1), embed=saved["src_embed"].size(1), dim=args.dim,
                src_embed=saved["src_embed"], tgt_embed=saved["tgt_embed"])  # fmt: skip
    if args.load:
        head.load_state_dict(torch.load(args.load))
    params = [p for p in head.parameters() if p.requires_grad]
    say(f"head: {sum(p.numel() for p in params):,} parameters; {len(items)} training pairs")
    opt = torch.optim.Adam(params, lr=args.lr)
    started, seen, next_eval = time.monotonic(), 0, 0.0
    for epoch in range(args.epochs):
        for batch in batches(items, args.batch, rng):
            minutes = (time.monotonic() - started) / 60
            if minutes >= next_eval:
                report(head, trial, gold, f"epoch {epoch} pairs {seen} min {minutes:.1f}")
                next_eval += args.eval_every
            if minutes > args.minutes:
                break
            b = collate(batch)
            scores = head(b)
            total, rows = loss_of(scores, b, args.null)
            loss = total / rows
            if args.both:
                total, cols = column_loss(scores, b)
                loss = loss + total / cols
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(batch)
        if (time.monotonic() - started) / 60 > args.minutes:
            break
    report(head, trial, gold, f"final pairs {seen} min {(time.monotonic() - started) / 60:.1f}")
    if args.save:
        torch.save(head.state_dict(), args.save)


def report(head: Head, trial: list[dict], gold: dict, when: str) -> None:
    scores = evaluate(head, trial, gold)
    line = "  ".join(f"{k} {s.aer * 100:.1f}({s.precision * 100:.0f}/{s.recall * 100:.0f})"
                     for k, s in scores.items())  # fmt: skip
    print(f"{when}: AER(P/R) {line}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--pairs", type=int, default=0)
    ex.add_argument("--trial", action="store_true")
    ex.add_argument("--seed", type=int, default=43)
    ex.add_argument("--out", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("trial")
    tr.add_argument("features", nargs="+")
    tr.add_argument("--pairs", type=int, default=0)
    tr.add_argument("--dim", type=int, default=128)
    tr.add_argument("--lr", type=float, default=1e-3)
    tr.add_argument("--batch", type=int, default=32)
    tr.add_argument("--epochs", type=int, default=100)
    tr.add_argument("--minutes", type=float, default=10)
    tr.add_argument("--eval-every", type=float, default=1.0)
    tr.add_argument("--null", action="store_true", help="unlinked target pieces aim at </s>")
    tr.add_argument("--both", action="store_true", help="also train source->target columns")
    tr.add_argument("--seed", type=int, default=43)
    tr.add_argument("--save")
    tr.add_argument("--load", help="start from a saved head (with --minutes 0: just score it)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.cmd == "train":
        return train(args)
    import seq2attn_cli

    translator = seq2attn_cli.load("models/fr-en", threads=1)
    if args.trial:
        fr = (AL / "dev.fr").read_text(encoding="utf-8").splitlines()
        en = (AL / "dev.en").read_text(encoding="utf-8").splitlines()
        pairs = [(s, t, set()) for s, t in zip(fr, en, strict=True)]
    else:
        pairs = training_pairs(args.pairs, args.seed)
    started = time.monotonic()
    items = extract(translator, pairs)
    say(f"extracted {len(items)} pairs in {time.monotonic() - started:.0f} s")
    model = translator.model
    torch.save({"items": items, "src_embed": model.encoder.embedding.weight.detach().half(),
                "tgt_embed": model.decoder.embedding.weight.detach().half()}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
