"""The chat model talks to the Ollama address that the reachability check checks."""

from __future__ import annotations

import pytest

from langmem_ext import Settings
from langmem_ext.chat_models import (
    ModelUnavailableError,
    chat_model_from_settings,
    check_model_reachable,
)


def test_ollama_chat_model_uses_the_checked_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # must not win over the setting
    settings = Settings()
    settings.chat_model = "ollama:qwen2.5:7b"
    settings.embeddings.ollama_base_url = "http://127.0.0.1:1"
    model = chat_model_from_settings(settings)
    assert getattr(model, "base_url", None) == "http://127.0.0.1:1"
    assert getattr(model, "model", None) == "qwen2.5:7b"
    with pytest.raises(ModelUnavailableError, match=r"127\.0\.0\.1:1"):
        check_model_reachable(settings)
