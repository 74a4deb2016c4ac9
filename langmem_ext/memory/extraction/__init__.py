"""Extraction: the background extractor and the unconfirmed notes of found facts."""
