"""The text toolkit: text in, text-facts out. Extraction of pages from files, sentences, passages,
summaries, keywords, entities, language, the document-type suggestion and sentence embeddings.

Nothing here knows Casefile's database, HTTP API or settings (it imports only the standard library
and third-party packages), so every piece can be used and tested on its own. Everything runs
locally: the word lists, the tokenizer and the labelled examples ship in `data/`, the embedding
model in an installed package; nothing is fetched at run time.
"""
