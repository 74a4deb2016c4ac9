"""Serve the memory agent with LangServe and talk to it over HTTP.

By default the example starts the app in-process on 127.0.0.1 (a free port), runs a
save → confirm → recall conversation for one user over HTTP with httpx, shows that a
second user sees none of it, and shuts the server down. A scripted model stands in
for the LLM, so it runs offline::

    python examples/langserve_app.py

To keep a server running (docs at http://127.0.0.1:8000/docs, playground at
http://127.0.0.1:8000/agent/playground/)::

    python examples/langserve_app.py --serve [--model ollama:qwen2.5:7b] [--port 8000]

The endpoints: ``POST /agent/invoke`` (also ``/stream``, ``/batch``,
``/stream_events``), ``POST /memory/invoke`` (the retriever), ``GET /healthz``.
Every request names its thread and user in ``config.configurable``; the server
decides the memory scope from the user (see ``langmem_ext.server.app``).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.server.app import create_app, serve, serve_in_thread


def scripted_policy(messages: list[BaseMessage]) -> AIMessage:
    """A stand-in for a tool-calling LLM, so the example runs offline."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage("好的，我先记下：主人喜欢吃拉面。要保存吗？(确认 / 取消)")
    text = str(last.content)
    if "记住" in text:
        return AIMessage("", tool_calls=[tool_call("memory_save", text="主人喜欢吃拉面")])
    memory_block = "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
    if "confirmed and stored" in memory_block:
        return AIMessage("已保存到你的记忆里。")
    if "吃什么" in text:
        if "拉面" in memory_block:
            return AIMessage("你之前说过你喜欢吃拉面。")
        return AIMessage("我查过你的记忆，没有找到相关内容。")
    return AIMessage("你好！")


def say(client: httpx.Client, text: str, thread: str, user: str) -> dict[str, Any]:
    r = client.post(
        "/agent/invoke",
        json={
            "input": {"messages": [{"type": "human", "content": text}]},
            "config": {"configurable": {"thread_id": thread, "user_id": user}},
        },
    )
    r.raise_for_status()
    out: dict[str, Any] = r.json()["output"]
    print(
        f"  [{user}/{thread}] user: {text}\n  [{user}/{thread}] agent: {out['messages'][-1]['content']}"
    )
    return out


def demo(workspace: Path) -> None:
    with Memory(workspace) as memory:
        app = create_app(memory, ScriptedChatModel(policy=scripted_policy))
        with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
            print(f"serving on {url}: {client.get('/healthz').json()}")
            out = say(client, "我喜欢吃拉面，请记住", "t1", "alice")
            print(f"  pending saves: {out['pending_ids']}")
            say(client, "确认", "t1", "alice")
            say(client, "我喜欢吃什么？", "t2", "alice")  # a new thread recalls it
            say(client, "我喜欢吃什么？", "t1", "bob")  # another user: nothing
            r = client.post(
                "/memory/invoke",
                json={"input": "拉面", "config": {"configurable": {"user_id": "alice"}}},
            )
            for doc in r.json()["output"]:
                meta = doc["metadata"]
                print(f"  /memory for alice: {doc['page_content']} ({meta['citation']})")
            r = client.post(
                "/memory/invoke",
                json={
                    "input": "拉面",
                    "config": {"configurable": {"user_id": "bob", "scope": "user_alice"}},
                },
            )
            print(f"  bob naming alice's scope: HTTP {r.status_code} {r.json()['detail']}")
        print("server stopped")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--serve", action="store_true", help="run uvicorn until interrupted")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--model", help="chat model for --serve, e.g. ollama:qwen2.5:7b (default: scripted)"
    )
    p.add_argument("--workspace", type=Path, help="workspace folder (default: temp)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="langmem-serve-") as tmp:
        workspace = args.workspace or Path(tmp) / "ws"
        if args.serve:
            model = args.model or ScriptedChatModel(policy=scripted_policy)
            serve(args.host, args.port, memory=Memory(workspace), model=model)
        else:
            demo(workspace)
    print("done")


if __name__ == "__main__":
    main()
