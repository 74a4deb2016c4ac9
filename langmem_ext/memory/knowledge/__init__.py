"""The knowledge graph: triples, their extraction, their vectors and their search stage."""
