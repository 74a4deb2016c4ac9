"""On PostgreSQL a write is one commit: a replica killed in the middle of one leaves
nothing of it, and the other replica sees the state before it, whole.

The kill is simulated at the worst point of each write: the document (the Markdown)
is written, the ledger's part is not. On the embedded engine that order is repaired
by the next sync; on the database the document must not be there at all.
"""

from __future__ import annotations

import pytest

from langmem_ext import Memory


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs, the connection's transaction is lost."""


def _killed(*args: object, **kwargs: object) -> None:
    raise Killed


@pytest.fixture
def replicas(pg_replicas: tuple[Memory, Memory]) -> tuple[Memory, Memory]:
    return pg_replicas


def _document(mem: Memory, entry_id: str) -> str:
    st = mem.workspace.ledger.entries.get(entry_id)
    assert st is not None
    return mem.workspace.documents.read(st.scope, st.path)


def test_an_update_killed_after_its_document_write_leaves_nothing(
    replicas: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replicas
    old = a.add("The spare key is under the blue flowerpot")
    before = _document(b, old)
    monkeypatch.setattr(a.workspace.ledger.entries, "set_valid_to", _killed)
    with pytest.raises(Killed):
        a.update(old, "The spare key is under the red flowerpot")

    assert _document(b, old) == before  # the document's new version was not committed
    assert _document(a, old) == before  # nor kept by the replica that wrote it
    assert [h["id"] for h in b.history(old)] == [old]
    new = b.update(old, "The spare key is in the mailbox")  # not "superseded meanwhile"
    assert [e.text for e in b.list()] == ["The spare key is in the mailbox"]
    assert [h["id"] for h in b.history(new.id) if h["op"] == "add"] == [old, new.id]


def test_a_delete_killed_after_its_document_write_leaves_nothing(
    replicas: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replicas
    kept = a.add("The boiler is serviced every October")
    before = _document(b, kept)
    monkeypatch.setattr(a.workspace.ledger.entries, "record_history", _killed)
    with pytest.raises(Killed):
        a.delete(kept)

    assert _document(b, kept) == before
    assert _document(a, kept) == before
    assert [e.id for e in b.list()] == [kept]
    assert b.search("when is the boiler serviced")[0].id == kept


def test_a_confirm_killed_before_the_item_is_marked_leaves_it_pending(
    replicas: tuple[Memory, Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replicas
    item = a.save("The bike lock code is 4471")
    monkeypatch.setattr(a.workspace.ledger.pending, "resolve", _killed)
    with pytest.raises(Killed):
        a.confirm(item.id)

    assert [p.id for p in b.list_pending()] == [item.id]  # still waiting, nothing stored
    assert b.list() == []
    b.confirm(item.id)  # the other replica confirms it: written once
    assert [e.id for e in b.list()] == [item.entry_id]
    assert b.list_pending() == []
