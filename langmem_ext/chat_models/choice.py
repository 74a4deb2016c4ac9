"""Choosing the chat model, and telling the user clearly when none is reachable."""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel

from langmem_ext.core.config import Settings
from langmem_ext.core.errors import ModelUnavailableError


def _port_open(url: str, timeout: float = 0.3) -> bool:
    parsed = urlparse(url)
    host = parsed.hostname or "127.0.0.1"
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_model_reachable(settings: Settings) -> None:
    """Raise :class:`ModelUnavailableError` with a fix when the chat model is unreachable.

    Only Ollama (the default) is checked with a connection to its port; other
    providers are assumed reachable when their package imports.
    """
    spec = settings.chat_model
    provider, _, model = spec.partition(":")
    if provider == "ollama" and model and model_reachability(spec, settings)[0] is False:
        url = settings.embeddings.ollama_base_url
        msg = (
            f"No chat model is reachable: Ollama is not running at {url}.\n"
            f"  Fix: install Ollama (https://ollama.com/download), then `ollama pull {model}`,\n"
            "  or set LANGMEM_CHAT_MODEL to another init_chat_model string\n"
            "  (e.g. 'openai:gpt-4o-mini' with OPENAI_API_KEY set).\n"
            "  Memory commands (save, search, get, list, ...) work without a model;\n"
            "  `langmem-ext chat --scripted` runs the offline scripted model."
        )
        raise ModelUnavailableError(msg)


def model_reachability(model: BaseChatModel | str, settings: Settings) -> tuple[bool | None, str]:
    """Whether the chat model can be reached now, and why that is known.

    An Ollama model (a ``ChatOllama`` or an ``ollama:`` string) is checked with a
    connection to its server's port; a model running in this process (the scripted
    and fake models) is always reachable; for other providers reachability is not
    known before a call (``None``).

    Args:
        model: The chat model, or its ``init_chat_model`` string.
        settings: Settings (the default Ollama address).

    Returns:
        ``(reachable, detail)``: ``True`` / ``False`` / ``None`` (not checked) and a
        sentence saying what was checked.
    """
    if isinstance(model, str):
        provider, _, _name = model.partition(":")
        if provider != "ollama":
            return None, f"{model!r} is not checked before a call."
        url = settings.embeddings.ollama_base_url
    else:
        module = type(model).__module__
        if module.startswith("langchain_ollama"):
            url = str(getattr(model, "base_url", None) or settings.embeddings.ollama_base_url)
        elif module.startswith(("langmem_ext.", "langchain_core.")):
            return True, f"{type(model).__name__} runs in this process."
        else:
            return None, f"{type(model).__name__} is not checked before a call."
    if _port_open(url):
        return True, f"Ollama answers at {url}."
    return False, f"Ollama is not running at {url}."


def chat_model_from_settings(settings: Settings) -> BaseChatModel:
    """The configured chat model, not checked (nothing connects until the first call).

    An Ollama model talks to ``settings.embeddings.ollama_base_url``, the address
    :func:`check_model_reachable` checks.
    """
    from langchain.chat_models import init_chat_model

    from langmem_ext.graph import resolve_model

    provider, _, name = settings.chat_model.partition(":")
    if provider == "ollama" and name:
        return init_chat_model(
            name, model_provider="ollama", base_url=settings.embeddings.ollama_base_url
        )
    return resolve_model(settings.chat_model)


def load_chat_model(settings: Settings) -> BaseChatModel:
    """The configured chat model (checked for reachability first)."""
    check_model_reachable(settings)
    return chat_model_from_settings(settings)


__all__ = [
    "ModelUnavailableError",
    "chat_model_from_settings",
    "check_model_reachable",
    "load_chat_model",
    "model_reachability",
]
