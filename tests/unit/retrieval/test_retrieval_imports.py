"""The public surface of langmem_ext.retrieval."""

from __future__ import annotations

import langmem_ext.retrieval as retrieval


def test_all() -> None:
    assert retrieval.__all__ == [
        "Candidate",
        "GateDecision",
        "PipelineOptions",
        "RecallIntent",
        "detect_recall_intent",
        "fuse_rrf",
        "fuse_weighted",
        "is_noise",
        "rank",
        "should_retrieve",
    ]
    for name in retrieval.__all__:
        assert getattr(retrieval, name) is not None
