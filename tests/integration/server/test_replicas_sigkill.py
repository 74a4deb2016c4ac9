"""Two ``langmem-ext serve`` replicas on one PostgreSQL, one of them SIGKILLed again
and again while eight clients write, confirm, update, forget, search and chat through
both.

A killer thread kills one replica at a random moment (the moments come from a fixed
random generator whose seed the test prints), restarts it on the same port, waits
until it answers, and kills again: at least :data:`KILLS` times. A client whose
request could not be sent sends it to the other replica. Every write carries an
``Idempotency-Key``; a write whose connection died after it was sent is *unknown*
(it may or may not have happened), and the client sends it again with the same key
to whichever replica is up until it is answered: the server runs it, or answers
what the first one stored. A request answered is *acknowledged*.

At the end, with both replicas up, everything acknowledged is there (through ``/v1``
on both replicas and through ``Memory`` opened on the database): each memory once,
with its latest text; forgotten ones gone; every version chain linear; each
acknowledged chat turn once in its thread. The replica that was not killed answered
every request sent to it; once both are up, a memory confirmed on one replica is
found by a search on the other within a second (the samples taken while the kills
went on are printed beside); a pending save confirmed on both replicas at once was
written once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from _serve_helpers import _port, checkout_env

pytestmark = pytest.mark.slow

SEED = 20_260_334
KILLS = int(os.environ.get("LANGMEM_TEST_REPLICA_KILLS", "30"))
"""Kills in one run (at least 30; fewer only by hand, on a machine too busy for 30)."""
CLIENTS = 8
USERS = 4  # two clients write to each scope, through either replica
VISIBILITY_SAMPLES = 20

WARM = (
    "import sys\n"
    "import langmem_ext.chat_models.scripted, langmem_ext.graph, langmem_ext.retrievers\n"
    "import langmem_ext.server.admin.routes, langmem_ext.server.app\n"
    "import langmem_ext.server.mcp_server, langmem_ext.server.rest\n"
    "import langmem_ext.workspace.postgres.engines\n"
    "from langmem_ext.core.config import Settings\n"
    "from langmem_ext.embeddings.factory import create_embeddings\n"
    "create_embeddings(Settings().embeddings).embed_query('warm')\n"
    "from langmem_ext.cli.app import main\n"
    "argv = sys.stdin.readline().split()\n"
    "sys.exit(main(argv) if argv else 0)\n"
)
"""A ``langmem-ext`` process that has imported the server's modules and loaded the
embedding model, and waits for its command line on stdin: a restart then costs only
the opening of the memory (``serve`` finds the model loaded when it warms up)."""


class Replica:
    """One ``serve`` process on a fixed port, killed and started again by the test."""

    def __init__(self, name: str, root: Path, env: dict[str, str]) -> None:
        self.name = name
        self.root = root
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.up = threading.Event()
        self.generation = 0  # counts kills: a request that saw it change was cut by one
        self.proc: subprocess.Popen[bytes] | None = None
        self.spare: subprocess.Popen[bytes] | None = None
        self.logs: list[Path] = []
        self.starts: list[float] = []

    def _spawn(self) -> subprocess.Popen[bytes]:
        log = self.root / f"{self.name}-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", WARM],
                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                env=checkout_env(**self.env), cwd=self.root,
            )  # fmt: skip
        return proc

    def start(self) -> None:
        """Start the process (a warm spare when there is one) and wait until it answers."""
        began = time.monotonic()
        proc = self.spare or self._spawn()
        self.spare = None
        assert proc.stdin is not None
        argv = f"--workspace {self.root / 'ws'} serve --port {self.port} --scripted"
        proc.stdin.write(argv.encode() + b"\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, self.logs[-1].read_text()
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"{self.name} did not start again"
            time.sleep(0.05)
        self.proc = proc
        self.starts.append(time.monotonic() - began)
        self.up.set()
        self.spare = self._spawn()

    def kill(self, lock: threading.Lock) -> None:
        """SIGKILL the process (clients stop choosing it first)."""
        with lock:
            self.up.clear()
            self.generation += 1
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> int | None:
        """SIGTERM the running process (its exit code) and drop the spare."""
        if self.spare is not None:
            self.spare.kill()
            self.spare.wait()
            self.spare = None
        if self.proc is None or self.proc.poll() is not None:
            return None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


class Unknown(Exception):
    """The connection died after the request was sent: it may or may not have run."""

    def __init__(self, what: str, replica: Replica, generation: int) -> None:
        super().__init__(what)
        self.replica = replica
        self.generation = generation


@dataclass
class Tally:
    """What happened to the clients' operations."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    resent: Counter[str] = field(default_factory=Counter)
    replayed: Counter[str] = field(default_factory=Counter)  # answered from the key's store
    live_failures: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    visible_after: list[float] = field(default_factory=list)  # both replicas warm
    visible_during_kills: list[float] = field(default_factory=list)
    killing: bool = True

    def count(self, what: Counter[str], kind: str) -> None:
        with self.lock:
            what[kind] += 1


class Cluster:
    """The two replicas as the clients see them: one request, sent to a live one."""

    def __init__(self, replicas: list[Replica], tally: Tally) -> None:
        self.replicas = replicas
        self.tally = tally
        self.lock = threading.Lock()

    def other(self, r: Replica) -> Replica:
        return self.replicas[1 - self.replicas.index(r)]

    def pick(self, rng: random.Random) -> Replica:
        first = rng.choice(self.replicas)
        return first if first.up.is_set() else self.other(first)

    def send(
        self, http: httpx.Client, r: Replica, method: str, path: str, **kw: Any
    ) -> tuple[Replica, httpx.Response]:
        """Send to ``r`` (or, when it is down or cannot be reached, to the other).

        Raises:
            Unknown: The connection died after the request was sent.
        """
        for _ in range(400):
            if not r.up.is_set():
                r = self.other(r)
                if not r.up.is_set():
                    time.sleep(0.05)
                    continue
            with self.lock:
                gen = r.generation
            try:
                resp = http.request(method, r.url + path, **kw)
            except httpx.ConnectError:
                self._check_killed(r, gen, f"{method} {path}: could not connect")
                r = self.other(r)
                continue
            except httpx.TransportError as e:
                self._check_killed(r, gen, f"{method} {path}: {e!r}")
                raise Unknown(f"{method} {path}", r, gen) from e
            if resp.status_code >= 500:
                with self.tally.lock:
                    self.tally.server_errors.append(f"{r.name} {method} {path}: {resp.text}")
            return r, resp
        raise AssertionError("no replica answered for 20 s")

    def _check_killed(self, r: Replica, gen: int, what: str) -> None:
        with self.lock:
            killed = r.generation != gen or not r.up.is_set()
        if not killed:
            with self.tally.lock:
                self.tally.live_failures.append(f"{r.name} (not killed) {what}")


@dataclass
class Mine:
    """What one client wrote and what it expects to find."""

    scope_user: str
    live: dict[str, str] = field(default_factory=dict)  # entry id -> its latest text
    forgotten: dict[str, str] = field(default_factory=dict)
    confirmed: set[str] = field(default_factory=set)  # pending ids
    turns: list[str] = field(default_factory=list)
    unknown_turns: list[str] = field(default_factory=list)


def _json(resp: httpx.Response, *ok: int) -> Any:
    assert resp.status_code in ok, f"{resp.request.method} {resp.request.url}: {resp.text}"
    return resp.json()


class Client:
    """One of the eight clients: a random mix of operations through both replicas."""

    def __init__(self, n: int, cluster: Cluster, rng: random.Random) -> None:
        self.n = n
        self.cluster = cluster
        self.rng = rng
        self.user = f"u{n % USERS}"
        self.mine = Mine(self.user)
        self.k = 0
        self.http = httpx.Client(
            headers={"X-User-Id": self.user, "Content-Type": "application/json"}, timeout=90
        )

    def text(self, what: str) -> str:
        self.k += 1
        return f"Parcel c{self.n}k{self.k} holds {what} for the depot"

    def send(
        self, method: str, path: str, r: Replica | None = None, **kw: Any
    ) -> tuple[Replica, httpx.Response]:
        c = self.cluster
        return c.send(self.http, r or c.pick(self.rng), method, path, **kw)

    def write(self, kind: str, method: str, path: str, ok: int, **kw: Any) -> tuple[Replica, Any]:
        """Send a write with a new idempotency key; when its fate is unknown, send it
        again with the same key until it is answered. Returns the replica that
        answered and the answer, which must be ``ok``."""
        tally = self.cluster.tally
        headers = {"Idempotency-Key": uuid.UUID(int=self.rng.getrandbits(128)).hex}
        try:
            r, resp = self.send(method, path, headers=headers, **kw)
        except Unknown:
            tally.count(tally.unknown, kind)
            r, resp = self.resend(kind, method, path, headers=headers, **kw)
        tally.count(tally.acked, kind)
        if resp.headers.get("Idempotent-Replayed") == "true":
            tally.count(tally.replayed, kind)
        return r, _json(resp, ok)

    def resend(
        self, kind: str, method: str, path: str, **kw: Any
    ) -> tuple[Replica, httpx.Response]:
        """Send again until answered (each try to whichever replica is up)."""
        self.cluster.tally.count(self.cluster.tally.resent, kind)
        for _ in range(10):
            try:
                return self.send(method, path, **kw)
            except Unknown:
                time.sleep(0.3)
        raise AssertionError(f"{method} {path} was cut 10 times")

    # -- operations --------------------------------------------------------------------

    def add(self) -> None:
        text = self.text(self.rng.choice(["tea", "maps", "rope", "ink", "seeds"]))
        _r, entry = self.write("add", "POST", "/v1/memories", 201, json={"text": text})
        self.mine.live[entry["id"]] = text

    def save_confirm(self) -> None:
        text = self.text(self.rng.choice(["lamps", "salt", "wool"]))
        _r, item = self.write("save", "POST", "/v1/pending", 201, json={"text": text})
        r, _entry = self.write("confirm", "POST", f"/v1/pending/{item['id']}/confirm", 200)
        self.mine.live[item["entry_id"]] = text
        self.mine.confirmed.add(item["id"])
        self.visible(r, item["entry_id"], text)

    def visible(self, on: Replica, entry_id: str, text: str) -> None:
        """How long after the confirm on ``on`` a search on the other replica finds it."""
        other = self.cluster.other(on)
        began = time.monotonic()
        with self.cluster.lock:
            gen = other.generation
        if not other.up.is_set():
            return  # no sample while the other replica starts again
        tries = []
        while time.monotonic() - began < 5:
            t0 = time.monotonic()
            try:
                resp = self.http.post(
                    f"{other.url}/v1/search", json={"query": text, "k": 10}, timeout=10
                )
            except httpx.TransportError:
                return  # killed meanwhile: no sample
            tries.append(round(time.monotonic() - t0, 3))
            if any(h["id"] == entry_id for h in _json(resp, 200)["hits"]):
                break
            time.sleep(0.02)
        with self.cluster.lock:
            if other.generation != gen:
                return  # killed and started again meanwhile: no sample
        took = time.monotonic() - began
        tally = self.cluster.tally
        (tally.visible_during_kills if tally.killing else tally.visible_after).append(took)
        if took > 0.5:
            print(f"slow sample: {took:.3f} s on {other.name}, searches took {tries}", flush=True)

    def update(self) -> None:
        if not self.mine.live:
            return self.add()
        old = self.rng.choice(sorted(self.mine.live))
        text = self.text("a newer version of " + self.mine.live[old].split()[1])
        _r, entry = self.write("update", "PATCH", f"/v1/memories/{old}", 200, json={"text": text})
        del self.mine.live[old]
        self.mine.live[entry["id"]] = text
        return None

    def forget(self) -> None:
        if len(self.mine.live) < 3:
            return self.add()
        gone = self.rng.choice(sorted(self.mine.live))
        self.write("forget", "DELETE", f"/v1/memories/{gone}", 200)
        self.mine.forgotten[gone] = self.mine.live.pop(gone)
        return None

    def once(self, kind: str, run: Callable[[], None], resolve: Callable[[], None]) -> None:
        """Run a request that is not a keyed write; when its fate is unknown, ``resolve``."""
        tally = self.cluster.tally
        try:
            run()
        except Unknown:
            tally.count(tally.unknown, kind)
            resolve()
        tally.count(tally.acked, kind)

    def search(self) -> None:
        query = self.rng.choice(["tea parcels", "what holds the wool", "depot rope"])

        def run() -> None:
            _json(self.send("POST", "/v1/search", json={"query": query, "k": 5})[1], 200)

        self.once("search", run, lambda: None)

    def chat(self) -> None:
        self.k += 1
        message = f"What do you know about parcel c{self.n}k{self.k}?"
        body = {
            "input": {"messages": [message]},
            "config": {"configurable": {"thread_id": f"c{self.n}", "user_id": self.user}},
        }

        def run() -> None:
            _json(self.send("POST", "/agent/invoke", json=body)[1], 200)
            self.mine.turns.append(message)

        def resolve() -> None:  # a turn is not sent twice: found once or not at all
            self.mine.unknown_turns.append(message)

        self.once("chat", run, resolve)

    def loop(self, until: threading.Event, errors: list[BaseException]) -> None:
        ops = [self.add, self.save_confirm, self.update, self.forget, self.search, self.chat]
        weights = [3, 3, 2, 1, 2, 2]
        try:
            while not until.is_set():
                self.rng.choices(ops, weights)[0]()
                time.sleep(self.rng.uniform(0.02, 0.2))
        except BaseException as e:
            errors.append(e)
            until.set()


def _killer(cluster: Cluster, rng: random.Random, stop: threading.Event, kills: list[str]) -> None:
    while len(kills) < KILLS and not stop.is_set():
        time.sleep(rng.uniform(0.1, 1.2))  # both replicas up: a random moment
        victim = rng.choice(cluster.replicas)
        victim.kill(cluster.lock)
        kills.append(victim.name)
        victim.start()


def _print_warnings(replicas: list[Replica]) -> None:
    """Print the warnings and errors the replicas logged, with their indented lines
    (a stack), so a failure shows what the servers saw."""
    for r in replicas:
        for log in r.logs:
            keep = False
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith(("WARNING", "ERROR", "CRITICAL", "Traceback")):
                    keep = True
                elif not line[:1].isspace():
                    keep = False
                if keep:
                    print(f"{log.name}: {line}")


@contextmanager
def _replicas(tmp_path: Path, url: str) -> Iterator[list[Replica]]:
    env = {"LANGMEM_DATABASE_URL": url, "LANGMEM_LIFECYCLE__DAILY_JOBS": "false"}
    replicas = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        replicas.append(Replica(name, tmp_path / name, env))
    try:
        for r in replicas:
            r.start()
        yield replicas
    finally:
        codes = [r.stop() for r in replicas]
        assert codes == [0, 0], codes


def _memory_list(tmp_path: Path, url: str, users: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Every current memory of each user's scope, read by ``Memory`` on the database."""
    from langmem_ext import Memory, Settings

    with Memory(tmp_path / "direct", settings=Settings(database_url=url)) as mem:
        return {u: [(e.id, e.text) for e in mem.list(scope=f"user_{u}")] for u in users}


def _double_confirms(cluster: Cluster, n: int) -> list[tuple[int, int]]:
    """Confirm ``n`` pending saves on both replicas at once: the two statuses of each."""
    a, b = cluster.replicas
    statuses: list[tuple[int, int]] = []
    with httpx.Client(
        headers={"X-User-Id": "u0", "Content-Type": "application/json"}, timeout=60
    ) as http:
        for i in range(n):
            text = f"Parcel twice{i} holds candles for the depot"
            item = _json(http.post(f"{a.url}/v1/pending", json={"text": text}), 201)
            barrier = threading.Barrier(2)
            got: dict[str, int] = {}

            def confirm(r: Replica, item: dict[str, Any] = item, barrier: Any = barrier,
                        got: dict[str, int] = got) -> None:  # fmt: skip
                barrier.wait()
                got[r.name] = http.post(f"{r.url}/v1/pending/{item['id']}/confirm").status_code

            both = [threading.Thread(target=confirm, args=(r,)) for r in (a, b)]
            for t in both:
                t.start()
            for t in both:
                t.join()
            statuses.append((got["a"], got["b"]))
    return statuses


def _thread_messages(url: str, user: str, thread: str) -> list[str]:
    from langmem_ext.workspace.postgres.checkpoints import postgres_saver

    with postgres_saver(url) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": f"user_{user}/{thread}"}})
    if found is None:
        return []
    return [str(m.content) for m in found.checkpoint["channel_values"].get("messages", [])]


def _forks(url: str) -> list[tuple[Any, ...]]:
    """Versions superseded by more than one newer version, and chains with two live ones."""
    import psycopg

    with psycopg.connect(url) as conn:
        twice = conn.execute(
            "SELECT supersedes, count(*) FROM entries WHERE supersedes IS NOT NULL "
            "GROUP BY supersedes HAVING count(*) > 1"
        ).fetchall()
        open_parents = conn.execute(
            "SELECT o.id FROM entries o JOIN entries n ON n.supersedes = o.id "
            "WHERE o.valid_to IS NULL AND o.deleted_at IS NULL"
        ).fetchall()
    return [*twice, *open_parents]


def test_replicas_survive_sigkills_without_losing_acknowledged_writes(
    tmp_path: Path, pg_vector_url: str
) -> None:
    print(f"\nkill moments from random.Random({SEED})")
    began = time.monotonic()
    rng = random.Random(SEED)
    tally = Tally()
    with _replicas(tmp_path, pg_vector_url) as replicas:
        cluster = Cluster(replicas, tally)
        clients = [Client(n, cluster, random.Random(rng.random())) for n in range(CLIENTS)]
        stop, errors, kills = threading.Event(), [], []  # type: ignore[var-annotated]
        workers = [threading.Thread(target=c.loop, args=(stop, errors)) for c in clients]
        killer = threading.Thread(
            target=_killer, args=(cluster, random.Random(rng.random()), stop, kills)
        )
        for t in [*workers, killer]:
            t.start()
        killer.join()
        stop.set()
        for t in workers:
            t.join(timeout=180)
        if errors:
            _print_warnings(replicas)
        assert not errors, errors

        # every acknowledged write is there, once, with its latest text (both replicas)
        users = sorted({c.user for c in clients})
        for r in replicas:
            with httpx.Client(timeout=60) as http:
                for user in users:
                    page = _json(http.get(f"{r.url}/v1/memories", params={"limit": 1000},
                                          headers={"X-User-Id": user}), 200)  # fmt: skip
                    current = Counter((m["id"], m["text"]) for m in page["entries"])
                    texts = Counter(m["text"] for m in page["entries"])
                    for c in (c for c in clients if c.user == user):
                        for entry_id, text in c.mine.live.items():
                            assert current[(entry_id, text)] == 1, (r.name, entry_id, text)
                            assert texts[text] == 1, (r.name, text, "duplicated")
                        for entry_id, text in c.mine.forgotten.items():
                            assert texts[text] == 0, (r.name, text, "forgotten but found")
                            gone = http.get(f"{r.url}/v1/memories/{entry_id}",
                                            headers={"X-User-Id": user})  # fmt: skip
                            assert gone.status_code == 404, gone.text
        direct = _memory_list(tmp_path, pg_vector_url, users)
        for c in clients:
            found = Counter(direct[c.user])
            for entry_id, text in c.mine.live.items():
                assert found[(entry_id, text)] == 1, (entry_id, text)
            assert not {i for i, _t in direct[c.user]} & set(c.mine.forgotten)
        assert _forks(pg_vector_url) == []

        # each acknowledged chat turn once in its thread, an unknown one at most once
        for c in clients:
            said = Counter(_thread_messages(pg_vector_url, c.user, f"c{c.n}"))
            assert all(said[m] == 1 for m in c.mine.turns), (c.n, said)
            assert all(said[m] <= 1 for m in c.mine.unknown_turns), (c.n, said)

        tally.killing = False
        for i in range(VISIBILITY_SAMPLES):  # both up and warm, the clients done
            clients[i % CLIENTS].save_confirm()

        statuses = _double_confirms(cluster, 5)
        assert all(sorted(s) == [200, 409] for s in statuses), statuses
        direct = _memory_list(tmp_path, pg_vector_url, ["u0"])
        for i in range(5):
            text = f"Parcel twice{i} holds candles for the depot"
            assert [t for _i, t in direct["u0"]].count(text) == 1, text

    wall = time.monotonic() - began
    worst = max(tally.visible_after, default=0.0)
    print(f"kills: {len(kills)} ({Counter(kills)}); restart s: "
          f"{[round(s, 1) for r in replicas for s in r.starts]}")  # fmt: skip
    print(f"acknowledged: {dict(tally.acked)}; unknown: {dict(tally.unknown)}; "
          f"sent again: {dict(tally.resent)}; answered from the key: {dict(tally.replayed)}")  # fmt: skip
    during = max(tally.visible_during_kills, default=0.0)
    print(f"lost=0 dupes=0 forks=0; visibility A->B: {len(tally.visible_after)} samples, "
          f"max {worst:.3f} s (during the kills: {len(tally.visible_during_kills)} samples, "
          f"max {during:.3f} s); wall {wall:.0f} s")  # fmt: skip
    assert len(kills) >= KILLS
    assert tally.live_failures == [], tally.live_failures
    assert tally.server_errors == [], tally.server_errors
    assert tally.visible_after and worst <= 1.0, tally.visible_after
    logs = [log.read_text() for r in replicas for log in r.logs if log.exists()]
    assert not [t for t in logs if "Traceback" in t], "a replica logged a traceback"
