"""Every knob of a model and of a training run, with its default and why."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 1  # bump when a model directory stops being readable by older code
ATTENTIONS = ("general", "dot", "additive", "none")
CELLS = ("gru", "lstm")
MIN_VALID = 10  # fewer held-out pairs than this make validation figures meaningless
# the files of a model directory; config.json is written last, so a directory with it is whole
CONFIG, PARAMETERS, SPM, RESUME, HISTORY = (
    "config.json",
    "model.safetensors",
    "spm.model",
    "checkpoint.safetensors",
    "history.json",
)

# SentencePiece ids fixed at training time, so the model and tokenizer always agree.
PAD, UNK, BOS, EOS = 0, 1, 2, 3


@dataclass(frozen=True, kw_only=True)
class ModelConfig:
    """Architecture of one encoder-decoder; saved as the "model" part of config.json."""

    src_vocab: int  # SentencePiece pieces: the encoder reads every piece
    tgt_vocab: int  # pieces seen on the target side only: a smaller, faster output layer
    embed: int = 256  # embedding size, source and target
    hidden: int = 512  # decoder state; the encoder gives hidden // 2 per direction
    layers: int = 1  # stacked RNN layers, encoder and decoder alike
    cell: str = "gru"  # gru | lstm
    attention: str = "general"  # general | dot | additive | none (one context vector)
    dropout: float = 0.2  # on embeddings and on the attentional layer
    input_feed: bool = False  # the decoder RNN also reads the last step's attentional vector
    # text is read and written with opening quotes spaced off: '" bonjour"' (data/reading.py)
    spaced_quotes: bool = False

    @property
    def attends(self) -> bool:
        """False for `--attention none`: the decoder reads one context vector, the same at
        every step, and a translation's attention has one column."""
        return self.attention != "none"

    def __post_init__(self) -> None:
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTIONS)}")
        if self.cell not in CELLS:
            raise ValueError(f"cell must be one of {', '.join(CELLS)}")
        if self.hidden % 2:
            raise ValueError("hidden must be even: the encoder splits it over two directions")
        for name in ("src_vocab", "tgt_vocab", "embed", "hidden", "layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError("dropout must be in [0, 1)")


@dataclass(frozen=True, kw_only=True)
class CorpusSpec:
    """One parallel corpus: its file, its columns, and how often an epoch goes through it."""

    path: str
    src_col: int = 1  # 1-based column of the source sentence
    tgt_col: int = 2  # 1-based column of the target sentence
    # passes per epoch (--weights): 2 = every pair twice an epoch; 0.1 = a different tenth
    rate: float = 1.0

    def __post_init__(self) -> None:
        if self.src_col < 1 or self.tgt_col < 1 or self.src_col == self.tgt_col:
            raise ValueError(f"{self.path}: columns must be two different numbers from 1 up")
        if not 0 < self.rate < float("inf"):  # nan and inf too: an epoch of inf passes
            raise ValueError(f"{self.path}: weight must be a positive number, not {self.rate}")

    def stored(self) -> dict[str, Any]:
        """As config.json keeps it, the rate named "weight" after --weights."""
        data = dataclasses.asdict(self)
        data["weight"] = data.pop("rate")
        return data

    @classmethod
    def from_stored(cls, data: Any) -> CorpusSpec:
        """From config.json's form (`stored`); any fault is a ValueError."""
        if isinstance(data, dict):  # else from_dict's error
            data = {"rate" if k == "weight" else k: v for k, v in data.items()}
        try:
            return from_dict(cls, data)
        except ValueError as error:  # the field as config.json names it
            raise ValueError(str(error).replace(": rate must be", ": weight must be", 1)) from None


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """How one training run goes; saved as the "training" part of config.json."""

    valid_size: int = 1000  # pairs held out for validation when no --valid file is given
    vocab_size: int = 8000  # SentencePiece pieces, joint over source and target
    max_chars: int = 1000  # longer sides are skipped (and counted) when reading
    # longer pairs are skipped after tokenising, and counted. Europarl loses 7.4% of its pairs
    # at 100, 1.3% at 150, 0.2% at 200; a step on 150-piece batches took 2.0 s and 1.1 GB,
    # on 250-piece ones 3.2 s and 1.4 GB (1.3 s at 100). Translation cuts lines into parts of
    # 70 source pieces at most (decoding/rules/parts.py), whose targets 150 covers: longer pairs
    # teach lengths the translator never asks for.
    max_pieces: int = 150
    # target pieces per batch: faster than 64 sentences; 3,000 runs 1.3x faster on AMX but,
    # from scratch at equal tokens, trails (Tatoeba, validation loss 1.624 vs 1.523), while from
    # a trained model larger batches lead (3,000: 1.977 vs 2.050; 6,000: 1.863 vs 1.922: README)
    batch_tokens: int = 1500
    epochs: int = 30  # upper bound; early stopping usually ends sooner
    max_steps: int = 0  # 0 = no limit
    max_time: float = 0.0  # minutes, 0 = no limit
    lr: float = 1e-3  # Adam
    clip: float = 5.0  # gradient norm clipping, as OpenNMT-py and JoeyNMT
    label_smoothing: float = 0.1
    lr_decay: float = 0.5  # learning rate factor when validation BLEU stops improving
    lr_patience: int = 1  # epochs without improvement before the lr decays
    patience: int = 4  # epochs without improvement before training stops
    min_lr: float = 1e-5  # training also stops once the lr falls below this
    save_every: int = 500  # steps between resumable checkpoints inside an epoch
    seed: int = 1
    # the data order starts this many epochs in: a corpus weighted under 1 reads another slice
    # each epoch, and a run started again from its weights (--init) with the same corpora and
    # seed would otherwise read its first slices again (the #42 run did, twice)
    skip_epochs: int = 0
    amp: bool = True  # bf16 autocast where the device has native bf16 (2x on AVX-512 CPUs)
    probe: str = ""  # sentence whose attention is kept after every epoch (--history)
    check_columns: bool = True  # refuse a corpus whose columns look swapped against the rest
    noise_share: float = 0.3  # pairs also trained on as typed: "je suis etudiant", "jai faim"


def from_dict(cls: type, data: dict[str, Any], *, ignore_unknown: bool = False) -> Any:
    """Build a config from a dict, refusing missing fields, and unknown ones unless told to
    ignore them (those an older s2a wrote), with a clear message."""
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__}: expected an object")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown and not ignore_unknown:
        raise ValueError(f"{cls.__name__}: unknown fields {', '.join(unknown)}")
    data = {k: v for k, v in data.items() if k in names}
    for f in dataclasses.fields(cls):  # JSON from a stranger: 1.5 layers or "8" pieces is refused
        kinds = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}.get(f.type)
        value = data.get(f.name)
        if (
            kinds
            and f.name in data
            and (not isinstance(value, kinds) or (isinstance(value, bool) and f.type != "bool"))
        ):
            raise ValueError(
                f"{cls.__name__}: {f.name} must be of type {f.type}, not {value!r:.40}"
            )
    try:
        return cls(**data)
    except TypeError as err:  # missing required fields
        raise ValueError(f"{cls.__name__}: {err}") from None


@dataclass(frozen=True, kw_only=True)
class DecodeConfig:
    """How s2a decodes unless told otherwise: the defaults of the commands, serve and the API."""

    beam: int = 5  # beam size; 1 = greedy search
    # sentences decoded together: 32 rather than 64 peaks lower at the same speed (beam 5, int8,
    # 1 thread, AVX-512 BF16 beside training): 2,000 Tatoeba lines 356-365 MB against 405-417,
    # 400 newstest2013 lines 394-406 against 447-497; CPU 3.9 s and 6.2 s both ways
    # (fewer when sources are longer than 32 pieces: decoding/search/batched.py, batches)
    batch_size: int = 32
    quantize: bool = True  # int8 Linear and RNN layers on CPU: 2.6-4.6x faster
    # pairs force-decoded together by `s2a align` (no beam: 128 pairs are the rows of 26
    # sentences at beam 5): 2,000 news pairs, int8, 2 threads, AVX-512 BF16 host, quiet:
    # 32 200 pairs/s, 64 285, 128 331, 256 306 (the per-step Python time shrinks per pair)
    align_batch_size: int = 128


DECODE = DecodeConfig()  # the one instance every default reads


@dataclass(frozen=True, kw_only=True)
class ConfidenceConfig:
    """How a translation's signals make its confidence (decoding/explain/confidence.py);
    config.json's "confidence" part, written by scripts/fit_confidence.py (which names the
    coefficients "weights" there: checkpoint.py reads them).

    A model without that part uses these defaults: confidence = 1 / (1 + s), s the mean
    surprisal (-log-probability) per output piece, so it ranks lines as the search's score does.
    """

    bias: float = 0.0  # confidence = logistic(bias + sum of coefficient * signal)
    coefficients: dict[str, float] = field(default_factory=lambda: {"surprise": -1.0})
    threshold: float = 0.3  # a source word attended less than this over the output: dropped
    fitted_on: list[str] = field(default_factory=list)  # the sets of the fit, for the card


@dataclass(frozen=True, kw_only=True)
class StoredConfig:
    """A model directory's config.json as s2a reads it: typed where s2a uses it, else as written."""

    model: ModelConfig
    # the run's settings; what an older s2a did not write takes the defaults above, and what
    # it wrote that this one no longer knows (casual_share, src_col) is left out
    training: TrainConfig = field(default_factory=TrainConfig)
    languages: tuple[str | None, str | None] = (None, None)  # (source, target), as guessed
    spm_sha256: str | None = None  # the checksum of the tokenizer the model was trained with
    raw: dict[str, Any] = field(default_factory=dict)  # the whole file: the card's figures
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)
