"""AI processing of documents and cases (contract §8), all local: text extraction, analysis,
embeddings (an ONNX model shipped inside an installed package), hybrid search and extractive
answers. Nothing is fetched at run time."""
