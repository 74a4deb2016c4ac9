"""Sentences of Chinese / English text: splitting, questions, apostrophes."""

from __future__ import annotations

import pytest

from langmem_ext.language.sentences import is_question, normalize_quotes, split_sentences


def test_sentence_splitter_bilingual() -> None:
    text = "我叫李雷。Dr. Smith paid 3.5 dollars. 你好吗？\n- TODO: fix it\n```\ncode.\n```\nDone!"
    assert split_sentences(text) == [
        "我叫李雷。",
        "Dr. Smith paid 3.5 dollars.",
        "你好吗？",
        "TODO: fix it",
        "Done!",
    ]


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("你好吗", True),
        ("Where do I live?", True),
        ("他说：“你去吗？”", True),
        ("I live in Oslo.", False),
        ("我住在上海", False),
    ],
)
def test_questions_are_told_by_their_end(sentence: str, question: bool) -> None:
    assert is_question(sentence) is question


def test_typographic_apostrophes_become_plain() -> None:
    assert normalize_quotes("I’m here, ‘ok’") == "I'm here, 'ok'"
