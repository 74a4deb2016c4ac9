"""The chat model talks to the Ollama address that the reachability check checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_ext import Settings
from langmem_ext.chat_models.choice import (
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


def test_reachability_checks_ollama_and_knows_in_process_models(tmp_path: Path) -> None:
    import socket

    from langmem_ext.chat_models.choice import model_reachability
    from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(workspace=tmp_path / "ws")
    settings.embeddings.ollama_base_url = f"http://127.0.0.1:{port}"
    reachable, why = model_reachability("ollama:qwen2.5:7b", settings)
    assert reachable is False and str(port) in why
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        settings.embeddings.ollama_base_url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        assert model_reachability("ollama:qwen2.5:7b", settings)[0] is True
    assert model_reachability(ScriptedChatModel(policy=offline_policy), settings)[0] is True
    assert model_reachability("openai:gpt-4o-mini", settings)[0] is None
