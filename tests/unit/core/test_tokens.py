from __future__ import annotations

from collections.abc import Iterator

import pytest

from langmem_ext.core import tokens
from langmem_ext.core.tokens import count_tokens, estimate_tokens, truncate_by_tokens


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    tokens._encoding.cache_clear()
    monkeypatch.setattr(
        "tiktoken.get_encoding", lambda name: (_ for _ in ()).throw(OSError("gone"))
    )
    yield
    tokens._encoding.cache_clear()


def test_bundled_cl100k_counts_exactly() -> None:
    # Known cl100k_base counts, loaded from the bundled file (the network is blocked).
    assert count_tokens("hello world") == 2
    assert count_tokens("主人喜欢吃拉面") == 10
    assert count_tokens("") == 0


def test_truncate_keeps_a_prefix_within_budget() -> None:
    text = "主人喜欢吃拉面。" * 50 + " and English words too " * 20
    cut = truncate_by_tokens(text, 25)
    assert text.startswith(cut)
    assert count_tokens(cut) <= 25
    assert "\ufffd" not in cut
    assert truncate_by_tokens("short", 100) == "short"
    assert truncate_by_tokens("anything", 0) == ""


def test_fallback_estimate_is_cjk_aware(no_encoding: None) -> None:
    assert tokens._encoding() is None
    assert count_tokens("主人喜欢吃拉面") == 7  # one per CJK character
    assert count_tokens("abcdefgh") == 2  # one per four other characters
    assert count_tokens("拉面 ramen") == estimate_tokens("拉面 ramen") == 2 + 2


def test_fallback_truncation(no_encoding: None) -> None:
    text = "主人喜欢吃拉面" * 10
    cut = truncate_by_tokens(text, 12)
    assert cut == text[:12]
    assert estimate_tokens(cut) <= 12
