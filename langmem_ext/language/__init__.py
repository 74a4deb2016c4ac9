"""Language resources: tokens, sentences, statements and the bilingual word lists.

Pure and at the base: nothing here imports the rest of the package. The code that
applies a word list lives with its job (the summaries, the reply reader, recall
intent, safety facts, triples) and imports the list from here.
"""
