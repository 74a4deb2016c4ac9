"""Language resources: tokenising and language detection, and the bilingual word lists."""
