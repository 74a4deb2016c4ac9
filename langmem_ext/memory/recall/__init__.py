"""Recall: search over memories and notes, the turn's recall and the memory block."""
