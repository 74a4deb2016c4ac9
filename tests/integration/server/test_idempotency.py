"""``Idempotency-Key`` on the ``/v1`` writes, on both engines (the app in the process,
a real ``Memory``), and the clients' retries with the same key against a real
``serve`` process whose connections a proxy cuts."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from _serve_helpers import checkout_env, served
from fastapi.testclient import TestClient

from langmem_ext import Memory, Settings
from langmem_ext.client import AsyncMemoryClient, MemoryClient
from langmem_ext.memory.lifecycle.jobs import DailyJobs
from langmem_ext.server.app import create_app
from langmem_ext.server.idempotency import fingerprint
from langmem_ext.workspace.records import IdempotencyRow

JSON = {"content-type": "application/json"}


@pytest.fixture(params=["embedded", "postgres"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "embedded":
        return Settings(workspace=tmp_path / "ws")
    url = request.getfixturevalue("pg_vector_url")
    return Settings(workspace=tmp_path / "ws", database_url=url)


@pytest.fixture
def memory(settings: Settings) -> Iterator[Memory]:
    with Memory(settings=settings) as mem:
        yield mem


@pytest.fixture
def api(memory: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory), base_url="http://127.0.0.1") as client:
        yield client


def _as(user: str, key: str | None = None) -> dict[str, str]:
    return {**JSON, "X-User-Id": user, **({"Idempotency-Key": key} if key else {})}


def _texts(memory: Memory, user: str) -> list[str]:
    return [e.text for e in memory.list(scope=f"user_{user}")]


def test_a_write_sent_again_with_its_key_is_answered_from_the_store(
    api: TestClient, memory: Memory
) -> None:
    first = api.post("/v1/memories", json={"text": "Ada lives in Lyon"}, headers=_as("ada", "a1"))
    again = api.post("/v1/memories", json={"text": "Ada lives in Lyon"}, headers=_as("ada", "a1"))
    assert (first.status_code, again.status_code) == (201, 201)
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert _texts(memory, "ada") == ["Ada lives in Lyon"]
    entry_id = first.json()["id"]

    body = {"text": "Ada lives in Nice"}
    new = [
        api.patch(f"/v1/memories/{entry_id}", json=body, headers=_as("ada", "u1")) for _ in range(2)
    ]
    assert [r.status_code for r in new] == [200, 200], new[1].text
    assert new[0].json()["id"] == new[1].json()["id"] != entry_id
    added = [h["id"] for h in memory.history(entry_id, scope="user_ada") if h["op"] == "add"]
    assert added == [entry_id, new[0].json()["id"]]  # one new version, not two
    assert _texts(memory, "ada") == ["Ada lives in Nice"]

    item = api.post("/v1/pending", json={"text": "Ada likes tea"}, headers=_as("ada", "s1")).json()
    confirms = [
        api.post(f"/v1/pending/{item['id']}/confirm", headers=_as("ada", "c1")) for _ in range(2)
    ]
    assert [r.status_code for r in confirms] == [200, 200], confirms[1].text
    assert confirms[1].headers["Idempotent-Replayed"] == "true"
    unkeyed = api.post(f"/v1/pending/{item['id']}/confirm", headers=_as("ada"))
    assert unkeyed.status_code == 409  # without the key the second confirm is refused

    gone = [
        api.delete(f"/v1/memories/{new[0].json()['id']}", headers=_as("ada", "d1"))
        for _ in range(2)
    ]
    assert [r.status_code for r in gone] == [200, 200], gone[1].text
    assert _texts(memory, "ada") == ["Ada likes tea"]

    facts = [
        api.post("/v1/profile/facts", json={"facts": {"name": "Ada"}}, headers=_as("ada", "f1"))
        for _ in range(2)
    ]
    assert facts[1].headers["Idempotent-Replayed"] == "true"
    assert facts[0].json() == facts[1].json()
    assert len(memory.profile_history(scope="user_ada", field="name")) == 1


def test_the_same_key_with_another_request_is_refused_and_does_nothing(
    api: TestClient, memory: Memory
) -> None:
    ok = api.post("/v1/memories", json={"text": "Bo keeps bees"}, headers=_as("bo", "k"))
    assert ok.status_code == 201
    for method, path, body in (
        ("POST", "/v1/memories", {"text": "Bo keeps goats"}),
        ("POST", "/v1/pending", {"text": "Bo keeps bees"}),
        ("DELETE", f"/v1/memories/{ok.json()['id']}", None),
    ):
        r = api.request(method, path, json=body, headers=_as("bo", "k"))
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "IdempotencyKeyReusedError"
        assert "another request" in r.json()["detail"]
    assert _texts(memory, "bo") == ["Bo keeps bees"]
    assert memory.list_pending(scope="user_bo") == []
    # a JSON body compares by value: the order of its keys does not make another request
    same = api.post(
        "/v1/memories",
        content=b'{ "text" : "Bo keeps bees" }',
        headers=_as("bo", "k"),
    )
    assert same.status_code == 201 and same.headers["Idempotent-Replayed"] == "true"


def test_a_key_is_the_callers_own_in_its_scope(api: TestClient, memory: Memory) -> None:
    for user in ("cy", "di"):
        r = api.post("/v1/memories", json={"text": "Likes plums"}, headers=_as(user, "same"))
        assert r.status_code == 201 and "Idempotent-Replayed" not in r.headers
    assert _texts(memory, "cy") == _texts(memory, "di") == ["Likes plums"]


@pytest.mark.parametrize(
    ("key", "says"),
    [("", "empty"), ("k" * 256, "256 characters"), ("two words", "ASCII letters")],
)
def test_a_malformed_key_is_refused_before_anything_runs(
    api: TestClient, memory: Memory, key: str, says: str
) -> None:
    headers = {**_as("ed"), "Idempotency-Key": key}
    r = api.post("/v1/memories", json={"text": "Ed rows"}, headers=headers)
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "InvalidIdempotencyKeyError" and says in r.json()["detail"]
    assert _texts(memory, "ed") == []


def test_a_failed_write_stores_nothing_under_its_key(api: TestClient, memory: Memory) -> None:
    for _ in range(2):
        r = api.delete("/v1/memories/m-0000000000", headers=_as("fa", "gone"))
        assert r.status_code == 404 and "Idempotent-Replayed" not in r.headers
    r = api.post("/v1/memories", json={"text": "Fa sings"}, headers=_as("fa", "gone"))
    assert r.status_code == 201  # the key held nothing: another request may use it


def test_the_daily_jobs_delete_keys_older_than_the_setting(memory: Memory) -> None:
    keys = memory.workspace.ledger.idempotency
    now = 1_900_000_000.0
    for key, age_hours in (("old", 25.0), ("new", 23.0)):
        row = IdempotencyRow("user_g", "user_g", key, "f", 201, "{}", now - age_hours * 3600)
        assert keys.put(row)
    assert not keys.put(row)  # one answer per key
    run = DailyJobs(memory, clock=lambda: now).run_due()
    assert run.errors == [] and run.keys_pruned == 1
    assert keys.get("user_g", "user_g", "old") is None
    assert keys.get("user_g", "user_g", "new") is not None


def test_the_kept_hours_are_a_setting(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path / "ws", server={"idempotency_key_hours": 1.0})
    with Memory(settings=settings) as mem:
        now = 1_900_000_000.0
        mem.workspace.ledger.idempotency.put(
            IdempotencyRow("s", "s", "k", "f", 200, "{}", now - 2 * 3600)
        )
        assert DailyJobs(mem, clock=lambda: now).run_due().keys_pruned == 1


# -- PostgreSQL: the key commits with the write ------------------------------------------

_KILLED_WRITER = """
import sys, time
from langmem_ext import Memory, Settings
from langmem_ext.server.callers import Caller
from langmem_ext.server.idempotency import Idempotency, answer_once

url, root = sys.argv[1], sys.argv[2]
with Memory(settings=Settings(workspace=root, database_url=url)) as mem:
    def write():
        mem.add("Hal keeps a red kite", scope="user_hal")
        print("written", flush=True)
        time.sleep(120)  # killed here: the write is done, its transaction not committed
    answer_once(mem, Idempotency("kite", "f"), Caller("hal", "user_hal", "user_hal"), 201, write)
"""


def _sessions(url: str, app: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (app,)
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_postgres_write_killed_before_its_commit_leaves_neither_it_nor_its_key(
    tmp_path: Path, pg_vector_url: str
) -> None:
    import psycopg

    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, pg_vector_url, str(tmp_path / "dead")],
        stdout=subprocess.PIPE, env=checkout_env(PGAPPNAME="killed-writer"),
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"written", "the writer did not write"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while _sessions(pg_vector_url, "killed-writer") and time.monotonic() < deadline:
        time.sleep(0.05)  # the server ends the dead process's sessions
    assert _sessions(pg_vector_url, "killed-writer") == 0
    with psycopg.connect(pg_vector_url) as conn:
        assert conn.execute("SELECT count(*) FROM idempotency_keys").fetchone() == (0,)
    settings = Settings(workspace=tmp_path / "live", database_url=pg_vector_url)
    with Memory(settings=settings) as mem:
        assert _texts(mem, "hal") == []
        with TestClient(create_app(mem), base_url="http://127.0.0.1") as api:
            body = {"text": "Hal keeps a red kite"}
            r = api.post("/v1/memories", json=body, headers=_as("hal", "kite"))
            assert r.status_code == 201 and "Idempotent-Replayed" not in r.headers
        assert _texts(mem, "hal") == ["Hal keeps a red kite"]


def test_a_key_committed_by_another_session_during_the_write_rolls_the_write_back(
    tmp_path: Path, pg_vector_url: str
) -> None:
    """The key's row is the last write and its primary key admits one commit: a
    request that looked the key up before another session's commit of it landed
    answers that session's response and leaves nothing of its own."""
    import psycopg

    settings = Settings(workspace=tmp_path / "ws", database_url=pg_vector_url)
    with (
        Memory(settings=settings) as mem,
        TestClient(create_app(mem), base_url="http://127.0.0.1") as api,
    ):
        other = psycopg.connect(pg_vector_url)  # a first request whose commit is on the way
        stored = '{"id":"m-1111111111","text":"Ivy flies kites"}'
        body = b'{"text":"Ivy flies kites"}'
        print_ = fingerprint("POST", "/v1/memories", "", body)
        other.execute(
            "INSERT INTO idempotency_keys VALUES (%s, %s, %s, %s, %s, %s, %s)",
            ("user_ivy", "user_ivy", "kites", print_, 201, stored, time.time()),
        )
        answers: list[httpx.Response] = []
        sent = threading.Thread(
            target=lambda: answers.append(
                api.post("/v1/memories", content=body, headers=_as("ivy", "kites"))
            )
        )
        sent.start()
        deadline = time.monotonic() + 30
        while _waiting_on_a_lock(pg_vector_url) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # the request wrote its memory and waits to store its key
        other.commit()
        other.close()
        sent.join(timeout=60)
        [answer] = answers
        assert answer.status_code == 201 and answer.headers["Idempotent-Replayed"] == "true"
        assert answer.text == stored
        assert _texts(mem, "ivy") == []  # the request's own write was rolled back


def _waiting_on_a_lock(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE 'INSERT INTO idempotency_keys%%'"
        ).fetchone()
    return int(row[0]) if row else 0


# -- the clients: a cut connection is retried with the same key ---------------------------


class CuttingProxy:
    """A TCP proxy before a server that, for the first ``cut`` requests, forwards the
    request, reads the server's answer and drops the client's connection instead of
    passing the answer on: the write ran, the client cannot know."""

    def __init__(self, target: str, cut: int) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.cut = cut
        self.keys: list[str | None] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client: socket.socket) -> None:
        with client, socket.create_connection(self.target) as server:
            while True:
                request = _read_message(client)
                if request is None:
                    return
                head = request.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
                key = [h.split(":", 1)[1].strip() for h in head.split("\r\n")
                       if h.startswith("idempotency-key:")]  # fmt: skip
                self.keys.append(key[0] if key else None)
                server.sendall(request)
                answer = _read_message(server)
                if self.cut > 0:
                    self.cut -= 1
                    client.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )  # a reset, as when the server's process dies
                    return
                assert answer is not None
                client.sendall(answer)

    def close(self) -> None:
        self.sock.close()


def _read_message(sock: socket.socket) -> bytes | None:
    """One HTTP/1.1 message with a ``Content-Length`` (or none) from ``sock``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return head + b"\r\n\r\n" + rest


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("idem")
    with served(root / "ws", root / "serve.log") as url:
        yield url


@contextmanager
def _proxy(url: str, cut: int) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(url, cut)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.mark.slow
def test_the_client_sends_a_cut_write_again_with_the_same_key(server: str) -> None:
    with (
        _proxy(server, cut=2) as proxy,
        MemoryClient(proxy.url, user_id="jo", retry_backoff=0.01) as client,
    ):
        entry_id = client.add("Jo mends nets on Sundays")
        assert len(proxy.keys) == 3 and proxy.keys[0] is not None
        assert len(set(proxy.keys)) == 1  # three sends, one key
        assert [e.id for e in client.list()] == [entry_id]
        item = client.save("Jo mends sails too", idempotency_key="jo-sails")
        assert proxy.keys[-1] == "jo-sails"
        assert client.confirm(item.id).id == item.entry_id  # type: ignore[union-attr]
    with MemoryClient(server, user_id="jo") as direct:
        texts = sorted(e.text for e in direct.list())
    assert texts == ["Jo mends nets on Sundays", "Jo mends sails too"]


@pytest.mark.slow
def test_the_async_client_sends_a_cut_write_again_with_the_same_key(server: str) -> None:
    async def main(proxy: CuttingProxy) -> tuple[str, list[Any]]:
        async with AsyncMemoryClient(proxy.url, user_id="kai", retry_backoff=0.01) as client:
            entry_id = await client.add("Kai rows at dawn")
            return entry_id, [e.id for e in await client.list()]

    with _proxy(server, cut=1) as proxy:
        entry_id, ids = asyncio.run(main(proxy))
        assert len(proxy.keys) == 3 and len(set(proxy.keys[:2])) == 1  # the add twice
        assert proxy.keys[2] is None  # the list is a read: no key
    assert ids == [entry_id]


@pytest.mark.slow
def test_the_client_gives_up_after_max_retries(server: str) -> None:
    from langmem_ext.core.errors import ServiceError

    with (
        _proxy(server, cut=5) as proxy,
        MemoryClient(proxy.url, user_id="lu", max_retries=2, retry_backoff=0.01) as client,
    ):
        with pytest.raises(ServiceError, match="Cannot reach"):
            client.add("Lu paints boats")
        assert len(proxy.keys) == 3 and len(set(proxy.keys)) == 1
    with MemoryClient(server, user_id="lu") as direct:
        assert [e.text for e in direct.list()] == ["Lu paints boats"]
