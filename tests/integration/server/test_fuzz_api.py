"""Fuzz every operation of the served app's own OpenAPI: no 500, every error is JSON.

Schemathesis generates requests from ``/openapi.json`` (valid and invalid bodies,
parameters and headers); most bodies get a valid caller config so that requests
reach the memory graph and the retriever instead of stopping at the trust rules.
The number of examples per operation is bounded (``LANGMEM_FUZZ_EXAMPLES``, default
6) so that the run takes a minute or two.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

from langmem_ext import Memory  # noqa: E402
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy  # noqa: E402
from langmem_ext.core.config import Settings  # noqa: E402
from langmem_ext.server.app import create_app, serve_in_thread  # noqa: E402

EXAMPLES = int(os.environ.get("LANGMEM_FUZZ_EXAMPLES", "6"))
CALLER = {"configurable": {"user_id": "alice", "thread_id": "fuzz"}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Memory]]:
    root: Path = tmp_path_factory.mktemp("fuzz")
    settings = Settings(workspace=root / "ws")
    settings.embeddings.provider = "fake"
    settings.server.max_message_chars = 4000
    memory = Memory(settings=settings)
    memory.add("Alice is allergic to peanuts", scope="user_alice", category="core")
    app = create_app(memory, ScriptedChatModel(policy=offline_policy))
    with serve_in_thread(app) as url:
        yield url, memory
    memory.close()


def _problem(response: Any) -> str | None:
    """What is wrong with one answer, if anything."""
    kind = (response.headers.get("content-type") or [""])[0]
    if response.status_code >= 500:
        return f"{response.status_code}: {response.text[:300]}"
    if response.status_code >= 400 and not kind.startswith(("application/json", "text/html")):
        return f"{response.status_code} answered as {kind!r}: {response.text[:200]}"
    return None


def test_no_operation_answers_500_or_a_non_json_error(served: tuple[str, Memory]) -> None:
    url, _memory = served
    schema = schemathesis.openapi.from_dict(httpx.get(f"{url}/openapi.json").json())
    problems: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20  # the agent's and the retriever's routes, /healthz
    rng = random.Random(7)
    for op in operations:
        problems.extend(_fuzz(op, url, rng)[:2])
    assert not problems, "\n".join(problems)


def _fuzz(op: Any, url: str, rng: random.Random) -> list[str]:
    """Problems of the answers to ``EXAMPLES`` generated requests of one operation."""
    found: list[str] = []

    @hypothesis_settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(op.as_strategy())
    def run(case: Any) -> None:
        if isinstance(case.body, dict) and rng.random() < 0.7:
            case.body["config"] = CALLER
        problem = _problem(case.call(base_url=url, timeout=120))
        if problem is not None:
            found.append(f"{op.method.upper()} {op.path} {problem}")

    run()
    return found


def test_the_problem_check_can_fail() -> None:
    class Answer:
        def __init__(self, status: int, kind: str) -> None:
            self.status_code, self.headers, self.text = status, {"content-type": [kind]}, "x"

    assert _problem(Answer(500, "application/json"))
    assert _problem(Answer(422, "text/plain"))
    assert _problem(Answer(404, "application/json")) is None
    assert _problem(Answer(200, "text/event-stream")) is None
