"""Reusable conformance checks for LangGraph ``BaseStore`` implementations.

Every check runs twice, through the sync API (``put``, ``get``, ``search`` ...) and
through the async API (``aput``, ``aget``, ``asearch`` ...), from one body: the body
talks to an :class:`Api` adapter that dispatches to one or the other.

Use it by subclassing :class:`StoreConformance` in a test module and providing a
``store`` fixture that returns a fresh, empty store with semantic search enabled
over the ``text`` field (``index={"fields": ["text"], ...}``)::

    class TestMyStore(StoreConformance):
        preserves_created_at = True

        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path, index={"fields": ["text"], ...})

Class attributes describe where implementations legitimately differ:

* ``preserves_created_at`` — an overwrite keeps the item's ``created_at``.
* ``supports_ttl`` — ``put(..., ttl=...)`` is supported (else it must raise
  ``NotImplementedError``).
* ``ttl_expiry_is_immediate`` — expired items are hidden before any sweep.
* ``scores_unindexed_last`` — items put with ``index=False`` come after scored
  items with ``score=None`` in a query search.
* ``lists_only_live_namespaces`` — ``list_namespaces`` lists only namespaces that
  hold items (``InMemoryStore`` keeps listing a namespace after its last item is
  deleted, and lists one a ``get`` merely looked into).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime
from typing import Any, Literal

import pytest
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, Item, PutOp, SearchOp

Mode = Literal["sync", "async"]

DOCS = {
    "ramen": "Alice loves eating ramen noodles",
    "bike": "Alice rides a red bicycle to work",
    "cat": "Alice has a cat named Miso",
    "tea": "Alice drinks green tea every morning",
}


class Api:
    """The sync or the async surface of a store, behind one awaitable interface."""

    def __init__(self, store: BaseStore, mode: Mode) -> None:
        self.store = store
        self.mode = mode

    async def put(self, *args: Any, **kwargs: Any) -> None:
        if self.mode == "sync":
            self.store.put(*args, **kwargs)
        else:
            await self.store.aput(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Item | None:
        if self.mode == "sync":
            return self.store.get(*args, **kwargs)
        return await self.store.aget(*args, **kwargs)

    async def delete(self, *args: Any) -> None:
        if self.mode == "sync":
            self.store.delete(*args)
        else:
            await self.store.adelete(*args)

    async def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        if self.mode == "sync":
            return self.store.search(*args, **kwargs)
        return await self.store.asearch(*args, **kwargs)

    async def list_namespaces(self, **kwargs: Any) -> list[tuple[str, ...]]:
        if self.mode == "sync":
            return self.store.list_namespaces(**kwargs)
        return await self.store.alist_namespaces(**kwargs)

    async def batch(self, ops: list[Any]) -> list[Any]:
        if self.mode == "sync":
            return self.store.batch(ops)
        return await self.store.abatch(ops)


@pytest.mark.parametrize("mode", ["sync", "async"])
class StoreConformance:
    """The checks; subclass it and provide a ``store`` fixture (see the module docstring)."""

    preserves_created_at: bool = False
    supports_ttl: bool = False
    ttl_expiry_is_immediate: bool = True
    scores_unindexed_last: bool = True
    lists_only_live_namespaces: bool = True

    # -- put / get / delete --------------------------------------------------

    async def test_put_get_round_trip(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        value = {"text": "héllo 世界", "n": 3, "nested": {"list": [1, "two", None], "ok": True}}
        await api.put(("docs", "u1"), "k1", value)
        item = await api.get(("docs", "u1"), "k1")
        assert item is not None
        assert item.value == value
        assert item.key == "k1" and item.namespace == ("docs", "u1")
        assert isinstance(item.created_at, datetime) and isinstance(item.updated_at, datetime)
        assert item.created_at.tzinfo is not None
        assert await api.get(("docs", "u1"), "missing") is None
        assert await api.get(("docs", "u2"), "k1") is None
        assert await api.get(("docs",), "k1") is None

    async def test_odd_keys_and_labels(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        ns = ("a%b", "c_d", "日本")
        for key in ("with space", "slash/key", "ключ", "%", "_"):
            await api.put(ns, key, {"text": key})
        for key in ("with space", "slash/key", "ключ", "%", "_"):
            got = await api.get(ns, key)
            assert got is not None and got.value == {"text": key}
        assert await api.get(ns, "x") is None

    async def test_overwrite(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(("docs",), "k", {"text": "one"})
        first = await api.get(("docs",), "k")
        await asyncio.sleep(0.01)
        await api.put(("docs",), "k", {"text": "two", "extra": 1})
        second = await api.get(("docs",), "k")
        assert first is not None and second is not None
        assert second.value == {"text": "two", "extra": 1}
        assert second.updated_at > first.updated_at
        if self.preserves_created_at:
            assert second.created_at == first.created_at
        results = await api.search(("docs",))
        assert [r.key for r in results] == ["k"]

    async def test_delete(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(("docs",), "k", {"text": "bye"})
        await api.delete(("docs",), "k")
        assert await api.get(("docs",), "k") is None
        await api.delete(("docs",), "never-existed")
        assert await api.search(("docs",)) == []
        assert await api.search(("docs",), query="bye") == []
        if self.lists_only_live_namespaces:
            assert await api.list_namespaces() == []

    async def test_invalid_namespaces(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        for bad in [(), ("a.b",), ("langgraph", "x"), ("",)]:
            with pytest.raises(InvalidNamespaceError):
                await api.put(bad, "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            await api.get(("a.b",), "k")
        with pytest.raises(InvalidNamespaceError):
            await api.search(("a.b",))

    # -- search without a query -----------------------------------------------

    async def test_prefix_isolation(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(("a",), "1", {"text": "a"})
        await api.put(("a", "b"), "2", {"text": "ab"})
        await api.put(("a", "bc"), "3", {"text": "abc"})
        await api.put(("ab",), "4", {"text": "ab-root"})
        await api.put(("a", "b", "c"), "5", {"text": "a-b-c"})

        async def keys(prefix: tuple[str, ...]) -> set[str]:
            return {r.key for r in await api.search(prefix, limit=100)}

        assert await keys(("a",)) == {"1", "2", "3", "5"}
        assert await keys(("a", "b")) == {"2", "5"}
        assert await keys(("ab",)) == {"4"}
        assert await keys(()) == {"1", "2", "3", "4", "5"}
        assert await keys(("a", "b", "c", "d")) == set()
        for r in await api.search(("a", "b"), query="a-b-c"):
            assert r.namespace[:2] == ("a", "b")

    async def test_filters(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        rows = {
            "a": {"text": "alpha", "n": 1, "color": "red", "meta": {"lang": "en", "v": 1}},
            "b": {"text": "beta", "n": 2, "color": "blue", "meta": {"lang": "fr", "v": 2}},
            "c": {"text": "gamma", "n": 3, "color": "red", "meta": {"lang": "en", "v": 3}},
            "d": {"text": "delta", "n": 4.5, "color": None, "tags": ["x", "y"]},
        }
        for k, v in rows.items():
            await api.put(("f",), k, v)

        async def keys(flt: dict[str, Any], query: str | None = None) -> set[str]:
            return {r.key for r in await api.search(("f",), filter=flt, query=query, limit=50)}

        assert await keys({"color": "red"}) == {"a", "c"}
        assert await keys({"color": "red", "n": 3}) == {"c"}
        assert await keys({"meta": {"lang": "en"}}) == {"a", "c"}
        assert await keys({"tags": ["x", "y"]}) == {"d"}
        assert await keys({"n": {"$eq": 2}}) == {"b"}
        assert await keys({"n": {"$ne": 2}}) == {"a", "c", "d"}
        assert await keys({"n": {"$gt": 2}}) == {"c", "d"}
        assert await keys({"n": {"$gte": 2}}) == {"b", "c", "d"}
        assert await keys({"n": {"$lt": 3}}) == {"a", "b"}
        assert await keys({"n": {"$lte": 3}}) == {"a", "b", "c"}
        assert await keys({"n": {"$gt": 1, "$lt": 4}}) == {"b", "c"}
        assert await keys({"missing": "x"}) == set()
        assert await keys({"color": "red"}, query="gamma") == {"a", "c"}

    async def test_pagination(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        for i in range(7):
            await api.put(("p",), f"k{i}", {"text": f"item {i}", "i": i})
        pages = [await api.search(("p",), limit=3, offset=o) for o in (0, 3, 6)]
        assert [len(p) for p in pages] == [3, 3, 1]
        seen = [r.key for p in pages for r in p]
        assert sorted(seen) == [f"k{i}" for i in range(7)]
        assert await api.search(("p",), limit=3, offset=10) == []
        flt = [
            await api.search(("p",), filter={"i": {"$gte": 2}}, limit=2, offset=o)
            for o in (0, 2, 4)
        ]
        assert sorted(r.key for p in flt for r in p) == [f"k{i}" for i in range(2, 7)]
        q = [await api.search(("p",), query="item", limit=4, offset=o) for o in (0, 4)]
        assert sorted(r.key for p in q for r in p) == [f"k{i}" for i in range(7)]

    # -- semantic search --------------------------------------------------------

    async def test_query_ranks_the_relevant_item_first(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        for k, text in DOCS.items():
            await api.put(("docs", "alice"), k, {"text": text})
        await api.put(("docs", "bob"), "ramen", {"text": "Bob loves eating ramen noodles"})
        checks = {
            "ramen noodles": "ramen",
            "bicycle": "bike",
            "what is the name of my cat": "cat",
            "green tea in the morning": "tea",
        }
        for query, want in checks.items():
            res = await api.search(("docs", "alice"), query=query, limit=4)
            assert res[0].key == want, (query, [(r.key, r.score) for r in res])
            assert res[0].score is not None
            assert all(r.namespace == ("docs", "alice") for r in res)
            scored = [r.score for r in res if r.score is not None]
            assert scored == sorted(scored, reverse=True)
        both = await api.search(("docs",), query="ramen noodles", limit=2)
        assert {r.namespace for r in both} == {("docs", "alice"), ("docs", "bob")}

    async def test_index_per_put(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(
            ("i",), "titled", {"title": "A guide to sourdough bread", "text": "x"}, index=["title"]
        )
        await api.put(("i",), "plain", {"text": "Notes about car engines"})
        await api.put(("i",), "hidden", {"text": "sourdough bread starter"}, index=False)
        res = await api.search(("i",), query="sourdough bread", limit=10)
        assert res[0].key == "titled" and res[0].score is not None
        assert {r.key for r in res} == {"titled", "plain", "hidden"}
        if self.scores_unindexed_last:
            assert res[-1].key == "hidden" and res[-1].score is None
        got = await api.get(("i",), "hidden")
        assert got is not None and got.value == {"text": "sourdough bread starter"}

    async def test_reindex_on_overwrite(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(("o",), "a", {"text": "The weather is sunny and warm"})
        await api.put(("o",), "b", {"text": "Quarterly revenue grew by ten percent"})
        await api.put(("o",), "a", {"text": "Chess openings: the Sicilian defence"})
        res = await api.search(("o",), query="chess opening", limit=2)
        assert res[0].key == "a" and res[0].value["text"].startswith("Chess")
        assert len(res) == 2

    # -- list namespaces ---------------------------------------------------------

    async def test_list_namespaces(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        spaces = [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("x", "y"),
        ]
        for ns in spaces:
            await api.put(ns, "k", {"text": "v"})
        assert await api.list_namespaces() == sorted(spaces)
        assert await api.list_namespaces(prefix=("a", "b"), max_depth=3) == [
            ("a", "b", "c"),
            ("a", "b", "d"),
            ("a", "b", "f"),
        ]
        assert await api.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
        assert await api.list_namespaces(prefix=("a", "*", "f")) == [
            ("a", "b", "f"),
            ("a", "c", "f"),
        ]
        assert await api.list_namespaces(max_depth=1) == [("a",), ("x",)]
        assert await api.list_namespaces(prefix=("a",), limit=2, offset=1) == sorted(spaces)[1:3]
        await api.delete(("x", "y"), "k")
        if self.lists_only_live_namespaces:
            assert ("x", "y") not in await api.list_namespaces()

    # -- batch ---------------------------------------------------------------------

    async def test_batch_mixed_ops_in_order(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        await api.put(("b",), "old", {"text": "old value"})
        results = await api.batch(
            [
                GetOp(("b",), "old"),
                PutOp(("b",), "new", {"text": "new value"}),
                SearchOp(("b",), limit=10),
                GetOp(("b",), "new"),
                PutOp(("b",), "dup", {"text": "first"}),
                PutOp(("b",), "dup", {"text": "last"}),
            ]
        )
        assert isinstance(results[0], Item) and results[0].value == {"text": "old value"}
        assert results[1] is None and results[4] is None and results[5] is None
        assert [r.key for r in results[2]] == ["old"]  # reads see the state before the writes
        assert results[3] is None
        new = await api.get(("b",), "new")
        dup = await api.get(("b",), "dup")
        assert new is not None and dup is not None and dup.value == {"text": "last"}

    # -- TTL ----------------------------------------------------------------------------

    async def test_ttl(self, store: BaseStore, mode: Mode) -> None:
        api = Api(store, mode)
        if not self.supports_ttl:
            with pytest.raises(NotImplementedError):
                await api.put(("t",), "k", {"text": "x"}, ttl=1)
            return
        await api.put(("t",), "long", {"text": "long lived"}, ttl=60)
        await api.put(("t",), "forever", {"text": "no ttl"})
        await api.put(("t",), "short", {"text": "short lived"}, index=False, ttl=0.02)  # 1.2 s
        assert await api.get(("t",), "short") is not None
        deadline = time.time() + 5
        while time.time() < deadline:
            await asyncio.sleep(0.2)
            if await api.get(("t",), "short", refresh_ttl=False) is None:
                break
        if self.ttl_expiry_is_immediate:
            assert await api.get(("t",), "short") is None
            assert {r.key for r in await api.search(("t",))} == {"long", "forever"}
        assert await api.get(("t",), "long") is not None


def unique_namespace() -> tuple[str, ...]:
    """A namespace no other test uses (for stores shared between tests)."""
    return ("conformance", uuid.uuid4().hex)


__all__ = ["DOCS", "Api", "StoreConformance", "unique_namespace"]
