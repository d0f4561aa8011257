"""AI processing of documents and cases (contract §8), all local: the jobs, the worker that runs
the pipeline (`processing.py`, over the text toolkit `casefile.nlp`) in separate processes, and the
endpoints that ask for it. Search and answers over the resulting passages are in `search/`.
Nothing is fetched at run time."""
