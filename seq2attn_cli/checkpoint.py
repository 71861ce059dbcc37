"""Model directories on disk: config.json + model.safetensors + spm.model (+ resume state).

Nothing here unpickles: parameters and optimizer state live in safetensors files and
everything else in JSON, so a model directory from a stranger cannot run code. Every
write goes to a temporary file that is renamed into place: a kill at any moment leaves
the previous good file intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, NamedTuple

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save

from .config import (
    CONFIG,
    FORMAT_VERSION,
    PARAMETERS,
    SPM,
    ConfidenceConfig,
    ModelConfig,
    StoredConfig,
    TrainConfig,
    from_dict,
)
from .data.subwords import Subwords
from .decoding.explain.confidence import check
from .errors import ModelError
from .model.seq2seq import Seq2Seq, state_size, unset

HERE = Path(__file__).parent
# the model s2a ships with: in the package once installed, in the checkout's models/ before
EMBEDDED = next(
    (d for d in (HERE / "models" / "fr-en", HERE.parent / "models" / "fr-en") if d.is_dir()),
    HERE / "models" / "fr-en",
)


# model files keep the names they were first written with: what the model calls output_ids
# (output index -> SentencePiece id) is tgt_pieces in every model.safetensors and resume file
OUTPUT_IDS = "tgt_pieces"
STORED_NAMES = {"output_ids": OUTPUT_IDS}

TEMPORARY = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")  # write_atomic's: .NAME.HEX.tmp


def write_atomic(path: Path, data: bytes) -> None:
    """Write bytes to `path` through a temporary file, fsync and a rename."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    # created as any new file is (0666 less the umask), and never one that already exists
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    """fsync a directory: the rename into it then survives a power cut, not only a kill."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # file systems that cannot sync a directory: the rename stands as it is
        pass
    finally:
        os.close(fd)


def remove_temporary(directory: Path) -> list[str]:
    """Remove the temporary files a killed write_atomic left in `directory`; their names."""
    found = [p for p in directory.iterdir() if TEMPORARY.fullmatch(p.name) and p.is_file()]
    for path in found:
        path.unlink(missing_ok=True)
    return sorted(p.name for p in found)


def sha256_hex(data: bytes) -> str:
    """Checksum that ties spm.model to its config.json (a swapped tokenizer is refused)."""
    return hashlib.sha256(data).hexdigest()


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a JSON file atomically."""
    write_atomic(path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode())


def regular(path: Path) -> Path:
    """`path`, unless it names something other than a file (a FIFO or /dev/zero would hang)."""
    if path.exists() and not path.is_file():
        raise ModelError(f"{path}: not a regular file")
    return path


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object, turning any fault into a one-line ModelError."""
    regular(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelError(f"{path}: unreadable ({err})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected a JSON object")
    return data


def save_parameters(path: Path, model: Seq2Seq, *, dtype: torch.dtype = torch.float16) -> None:
    """Save the model's parameters (half precision by default: half the size, same
    translations)."""
    tensors = {
        name: (t.to(dtype) if t.is_floating_point() else t).contiguous().cpu()
        for name, t in stored(model.state_dict()).items()
    }
    write_atomic(path, save(tensors, metadata={"format_version": str(FORMAT_VERSION)}))


def stored(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A model's state_dict under the names model files give its tensors (STORED_NAMES)."""
    return {STORED_NAMES.get(name, name): t for name, t in state.items()}


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file, turning truncation or tampering into a ModelError."""
    regular(path)
    try:
        return load_file(path)  # read through mmap: no second copy of the file in memory
    except FileNotFoundError:
        raise ModelError(f"{path}: missing") from None
    except (SafetensorError, OSError, ValueError, RuntimeError) as err:
        raise ModelError(f"{path}: not a valid safetensors file ({err})") from None


def load_state(model: Seq2Seq, tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Copy tensors (named as in model files) into the model, insisting on exactly the
    expected names and shapes."""
    expected = stored(model.state_dict())
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        names = ", ".join((missing + unexpected)[:3])
        raise ModelError(f"{path}: weights do not match config.json ({names} ...)")
    for name, tensor in tensors.items():
        if tensor.shape != expected[name].shape:
            raise ModelError(
                f"{path}: {name} has shape {tuple(tensor.shape)}, "
                f"config.json implies {tuple(expected[name].shape)}"
            )
        if not torch.isfinite(tensor).all():  # on the stored dtype: no fp32 copy
            raise ModelError(f"{path}: {name} holds NaN or infinite values")
    with torch.no_grad():  # one tensor at a time: no full fp32 copy of the parameters at once
        for name, value in stored(model.state_dict(keep_vars=True)).items():
            value.copy_(tensors[name])


class Loaded(NamedTuple):
    """A model directory loaded for inference."""

    model: Seq2Seq  # in eval mode, on the CPU
    subwords: Subwords
    config: StoredConfig


def load_model(directory: str | Path) -> Loaded:
    """Load a model directory for inference: (model in eval mode on CPU, subwords, config)."""
    directory = Path(directory)
    if directory == EMBEDDED and not (directory / CONFIG).exists():
        raise ModelError(
            f"{directory}: the embedded model is missing from this installation; "
            "train one with `s2a train CORPUS --out DIR` and load that directory"
        )
    if not directory.exists():  # the words `s2a --model` uses (cli/common.py: model_dir)
        raise ModelError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise ModelError(f"{directory}: not a directory")
    if not (directory / CONFIG).exists():
        raise ModelError(f"{directory}: not a model directory (no {CONFIG})")
    config = read_config(directory / CONFIG)
    subwords = read_subwords(directory / SPM, config)
    path = directory / PARAMETERS
    tensors = read_tensors(path)
    # check sizes before building: a stranger's config must not make us allocate gigabytes
    if not _sizes_fit(config.model, tensors):
        raise ModelError(f"{path}: weights do not match config.json's model sizes")
    model = unset(config.model)
    load_state(model, tensors, path)
    ids = model.output_ids
    if ids.min() < 0 or ids.max() >= config.model.src_vocab:
        raise ModelError(f"{path}: {OUTPUT_IDS} index outside the vocabulary")
    model.eval()
    return Loaded(model, subwords, config)


def _sizes_fit(config: ModelConfig, tensors: dict[str, torch.Tensor]) -> bool:
    """Whether the tensors hold as many numbers as the model `config` describes (counted on
    the meta device); sizes no tensor can take (a hidden size of 10**9) do not fit."""
    try:
        return state_size(config) == sum(t.numel() for t in tensors.values())
    except RuntimeError:  # "Storage size calculation overflowed"
        return False


def read_config(path: Path) -> StoredConfig:
    """A model's config.json, checked and typed; any fault is a one-line ModelError."""
    config = read_json(path)
    version = config.get("format_version")
    if not isinstance(version, int):
        raise ModelError(f"{path}: no format_version")
    if version > FORMAT_VERSION:
        raise ModelError(
            f"{path}: format version {version} is newer than this s2a "
            f"understands ({FORMAT_VERSION}); upgrade s2a"
        )
    checksum = config.get("spm_sha256")
    if not isinstance(checksum, str | None):
        raise ModelError(f"{path}: spm_sha256 must be a string")
    try:
        model_config = from_dict(ModelConfig, config.get("model"))
        training = _training(config.get("training", {}), path)
        confidence = _confidence(config.get("confidence", {}))
    except ValueError as err:
        raise ModelError(f"{path}: {err}") from None
    return StoredConfig(
        model=model_config,
        training=training,
        languages=_languages(config.get("corpus")),
        spm_sha256=checksum,
        raw=config,
        confidence=confidence,
    )


def _confidence(part: Any) -> ConfidenceConfig:
    """config.json's "confidence" part, which names the coefficients "weights", checked."""
    if isinstance(part, dict):  # else from_dict's error
        part = {"coefficients" if k == "weights" else k: v for k, v in part.items()}
    confidence = from_dict(ConfidenceConfig, part, ignore_unknown=True)
    check(confidence)
    return confidence


def _training(training: Any, path: Path) -> TrainConfig:
    """The run's settings; its limits on a sentence must be positive integers."""
    limits = (
        [training.get(k, 1) for k in ("max_chars", "max_pieces")]
        if isinstance(training, dict)
        else [0]
    )
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in limits):
        raise ModelError(f"{path}: training.max_chars and max_pieces must be positive integers")
    return from_dict(TrainConfig, training, ignore_unknown=True)  # fields of older versions


def _languages(corpus: Any) -> tuple[str | None, str | None]:
    """(source, target) as training guessed them from the corpora; None where not recorded."""
    recorded = corpus.get("languages") if isinstance(corpus, dict) else None
    if not isinstance(recorded, dict):
        return None, None
    source, target = (recorded.get(k) for k in ("source", "target"))
    return (
        source if isinstance(source, str) and source else None,
        target if isinstance(target, str) and target else None,
    )


def read_subwords(path: Path, config: StoredConfig) -> Subwords:
    """The model's SentencePiece tokenizer, refused when it is not the one config.json names."""
    regular(path)
    try:
        subwords = Subwords.load(path)
    except FileNotFoundError:
        raise ModelError(f"{path}: missing") from None
    except (OSError, RuntimeError, ValueError) as err:
        raise ModelError(f"{path}: not a SentencePiece model ({err})") from None
    if len(subwords) != config.model.src_vocab:
        raise ModelError(
            f"{path}: {len(subwords)} pieces, but the model expects "
            f"{config.model.src_vocab}: tokenizer and weights come from different models"
        )
    if config.spm_sha256 not in (None, sha256_hex(subwords.proto)):
        raise ModelError(
            f"{path}: not the tokenizer this model was trained with "
            "(its checksum differs from spm_sha256 in config.json)"
        )
    return subwords


def save_resume(
    path: Path, model: Seq2Seq, optimizer: torch.optim.Optimizer, counters: dict[str, Any]
) -> None:
    """Save everything --resume needs in one safetensors file (so in one atomic rename)."""
    tensors = {
        f"model.{k}": v.detach().cpu().contiguous() for k, v in stored(model.state_dict()).items()
    }
    state = optimizer.state_dict()
    for index, param_state in state["state"].items():
        for key, value in param_state.items():
            tensors[f"optim.{index}.{key}"] = torch.as_tensor(value).cpu().contiguous()
    tensors["rng.torch"] = torch.get_rng_state()
    meta = {"counters": counters, "param_groups": state["param_groups"]}
    write_atomic(path, save(tensors, metadata={"state": json.dumps(meta)}))


def resume_meta(path: Path) -> dict[str, Any]:
    """save_resume's metadata (the counters and the optimizer's groups), without its tensors."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            return json.loads((f.metadata() or {})["state"])
    except (KeyError, json.JSONDecodeError, SafetensorError, OSError) as err:
        raise ModelError(f"{path}: no resume state ({err})") from None


def load_resume(path: Path, model: Seq2Seq, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore model, optimizer and RNG from save_resume's file; return the counters."""
    tensors = read_tensors(path)
    meta = resume_meta(path)
    load_state(model, {k[6:]: v for k, v in tensors.items() if k.startswith("model.")}, path)
    try:  # a tampered or foreign file: a clear error, never a traceback halfway through
        optim_state: dict[int, dict[str, torch.Tensor]] = {}
        for name, tensor in tensors.items():
            if name.startswith("optim."):
                _, index, key = name.split(".", 2)
                optim_state.setdefault(int(index), {})[key] = tensor
        optimizer.load_state_dict({"state": optim_state, "param_groups": meta["param_groups"]})
        torch.set_rng_state(tensors["rng.torch"])
        counters = meta["counters"]
        names = ("epoch", "position", "step", "bad_epochs", "lr_bad_epochs", "nan_steps")
        if not all(type(counters[k]) is int and counters[k] >= 0 for k in names):
            raise ValueError("counters must be non-negative integers")
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as err:
        raise ModelError(f"{path}: resume state does not fit this model ({err})") from None
    return counters
