"""Helpers of the ``dataset: text`` kind: reading UTF-8 files with located errors, splitting
text into tokens, the vocabulary, a minimal labelled-table reader and the datasets of ids."""
