"""A scripted chat model: a policy function decides each reply, offline.

Used by the demo when no real model is reachable (it says so), by
``chat --scripted`` and ``serve --scripted``, by the examples in CI, and by tests.
It is a real ``BaseChatModel``: it binds tools, streams, and emits tool calls that
LangGraph's ``ToolNode`` runs.

:func:`offline_policy` is the stand-in assistant those commands share: it calls
``memory_save`` when the user asks to remember something (请记住 / 记住 /
remember this / remember that ...), tells the user what happened to pending saves,
and answers questions from the whole memory block (core memories first).

Example:
    .. code-block:: python

        from langchain_core.messages import AIMessage
        from langmem_ext.chat_models.scripted import ScriptedChatModel

        model = ScriptedChatModel(policy=lambda messages: AIMessage("好的"))
        model.invoke("你好").content  # '好的'
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

from langmem_ext.graph.replies import classify_by_rules

Policy = Callable[[list[BaseMessage]], AIMessage]
"""``policy(messages) -> reply``."""

_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """A tool call dict for ``AIMessage(tool_calls=[...])`` with a fresh id."""
    return {"name": name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies come from a policy function.

    Args:
        policy: Called with the full message list; returns the reply.
    """

    policy: Policy
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    """Every message list the model was called with (for inspection)."""
    bound_tools: list[str] = Field(default_factory=list)
    """Names of the tools last bound."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        reply = self.policy(list(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tool names; the policy decides which to call."""
        self.bound_tools = [getattr(t, "name", str(t)) for t in tools]
        return self  # type: ignore[return-value]


# -- the offline stand-in assistant ------------------------------------------------

# "请记住" / "帮我记住" / "记住" / "please remember this:" / "remember that" (not "记得")
# Chinese: 记住 anywhere except "记住了" (I have memorized it);
# English: "remember" as a request, at the start or the end of the message.
_REMEMBER = re.compile(
    r"(?:请|麻烦)?(?:你)?(?:帮我)?记住(?:一下)?(?!了)|"
    r"^\s*(?:(?:please|pls|can you|could you|do)\s+)*remember(?:\s+(?:this|that|it))?\b\s*:?|"
    r"(?:please\s+)?remember(?:\s+(?:this|that|it))?[\s.!。！]*$",
    re.IGNORECASE,
)
_THIS = frozenset({"这个", "这些", "这一点", "这件事", "那个", "this", "that", "it"})
_EDGE = " \t\n,，.。!！:：;；、~…\"'“”"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    (  # noqa: SIM905 - a word list reads better as one string
        "a an and any are did do does for from had has have he her him his how i in is it me "
        "my of on or our she that the their them they this to was we were what when where "
        "which who why will with you your"
    ).split()
)
_BLOCK_LINE = re.compile(
    r"^- (safety memory|core|recalled|daily notes|pending saves)\b[^\n]*?: (\"[^\n]*\")$"
)


def _is_question(text: str) -> bool:
    return text.rstrip().endswith(("?", "？")) or text.rstrip().endswith(("吗", "呢"))


def _has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


@dataclass(frozen=True)
class _Anything:
    id: str = "p"
    text: str = ""


def _answer_words_only(text: str) -> bool:
    """Whether ``text`` is only yes / ok / 好的 / 吧 ... (an answer, no fact)."""
    return bool(text) and classify_by_rules(text, [_Anything()]).resolves


def remember_request(text: str) -> str | None:
    """What the user asks to remember, or ``None`` when ``text`` asks for nothing.

    ``"我喜欢吃拉面，请记住"`` → ``"我喜欢吃拉面"``; ``"Remember that my sister Mei is
    vegetarian"`` → ``"My sister Mei is vegetarian"``; ``"remember this"`` → ``""``
    (the previous message is meant). Questions ("Do you remember ...?") are not
    requests.

    Args:
        text: The user's message.

    Returns:
        The text to save (``""``: the request names nothing itself), or ``None``.
    """
    if _is_question(text) or not _REMEMBER.search(text):
        return None
    rest = _REMEMBER.sub(" ", text)
    rest = re.sub(r"\s+", " ", rest).strip(_EDGE)
    rest = re.sub(r"^(?:please|pls)\b\s*", "", rest, flags=re.IGNORECASE).strip(_EDGE)
    if rest.lower() in _THIS or _answer_words_only(rest):
        return ""  # "好的，记住吧": the previous message is meant
    if rest and rest[0].isascii():
        rest = rest[0].upper() + rest[1:]
    return rest


def memory_block_texts(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """The memories of the memory block in the system messages, in block order.

    The block lists the memories stating a safety field the question asks about
    first, then core memories, recalled hits, daily notes and what happened to
    pending saves; each item is ``(kind, text)`` with ``kind`` one of
    ``"safety memory"``, ``"core"``, ``"recalled"``, ``"daily notes"``,
    ``"pending saves"``.
    """
    out: list[tuple[str, str]] = []
    for m in messages:
        if not isinstance(m, SystemMessage):
            continue
        for line in str(m.content).splitlines():
            found = _BLOCK_LINE.match(line)
            if found is None:
                continue
            try:
                text = json.loads(found.group(2))
            except ValueError:
                continue
            if isinstance(text, str):
                out.append((found.group(1), text))
    return out


def _terms(text: str) -> set[str]:
    low = text.lower()
    words = {w for w in _WORD.findall(low) if w not in _STOP and len(w) > 1}
    words |= {w[:-1] for w in list(words) if w.endswith("s") and len(w) > 3}  # plurals
    han = "".join(ch if _CJK.match(ch) else " " for ch in low).split()
    grams = {run[i : i + 2] for run in han for i in range(len(run) - 1)}
    return words | grams


def best_memory(question: str, memories: Sequence[tuple[str, str]]) -> str | None:
    """The memory of the block that answers ``question`` best (scripted stand-in).

    Core memories and recalled hits are read in block order (core first); the one
    sharing most words (or Chinese character pairs) with the question wins, ties
    going to the earlier one. When none shares any, the first recalled hit (the
    search's best) is used; with no hit, ``None``.
    """
    asked = _terms(question)
    candidates = [(k, t) for k, t in memories if k in ("core", "recalled", "daily notes")]
    best, best_overlap = None, 0
    for _kind, text in candidates:
        overlap = len(asked & _terms(text))
        if overlap > best_overlap:
            best, best_overlap = text, overlap
    if best is not None:
        return best
    return next((t for k, t in candidates if k == "recalled"), None)


def _last_human(messages: Sequence[BaseMessage]) -> tuple[str, str]:
    """The last human message's text and the one before it."""
    humans = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
    return (humans[-1] if humans else "", humans[-2] if len(humans) > 1 else "")


def offline_policy(messages: list[BaseMessage]) -> AIMessage:
    """The offline stand-in assistant of ``demo``, ``chat --scripted`` and ``serve --scripted``.

    * The user asks to remember something → a ``memory_save`` call (the save then
      waits for the user's answer).
    * After a tool ran → says what the tool did (for ``memory_save``: asks whether
      to keep it).
    * A question → answered from the memory block (:func:`best_memory`), or says it
      searched and found nothing.
    * Otherwise → reports what happened to pending saves, or acknowledges.
    """
    from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY

    user, before = _last_human(messages)
    zh = _has_cjk(user)
    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage):
        calls = [
            c
            for m in messages
            if isinstance(m, AIMessage)
            for c in m.tool_calls
            if c.get("id") == last.tool_call_id
        ]
        if calls and calls[0]["name"] == "memory_save":
            text = calls[0]["args"].get("text", "")
            if zh:
                return AIMessage(f"要我记住这条吗：{text}？回复“好的”保存，“不用”放弃。")
            return AIMessage(f"Shall I remember this: {text}? Reply yes to keep it, no to drop it.")
        return AIMessage("好的。" if zh else "OK.")
    if user == FLUSH_PROMPT:
        return AIMessage(NO_REPLY)
    block = memory_block_texts(messages)
    notes = [t for k, t in block if k == "pending saves"]
    wanted = remember_request(user)
    if notes and not wanted:  # "好的，记住吧" answered a proposal: say what happened
        return AIMessage(("已处理：" if zh else "Done: ") + "; ".join(notes))
    if wanted is not None:
        if not wanted:
            wanted = (remember_request(before) or before).strip()
        if wanted:
            return AIMessage("", tool_calls=[tool_call("memory_save", text=wanted)])
        return AIMessage("要我记住什么？" if zh else "What should I remember?")
    if _is_question(user):
        found = best_memory(user, block)
        if found is not None:
            return AIMessage(f"From memory: {found}")
        if zh:
            return AIMessage("我搜索过记忆，但没有找到相关内容。")
        return AIMessage("I searched my memory but found nothing about that.")
    return AIMessage("好的。" if zh else "OK.")


__all__ = [
    "Policy",
    "ScriptedChatModel",
    "best_memory",
    "memory_block_texts",
    "offline_policy",
    "remember_request",
    "tool_call",
]
