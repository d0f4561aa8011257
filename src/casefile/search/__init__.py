"""Search over cases and document passages (full text fused with semantic similarity), and
extractive answers from a case's documents (contract §8)."""
