"""The words of moving house, in English and Chinese (data only).

A move states where one lives from then on, whatever the verb ("moved",
"relocated", "emigrated", "settled in"; 搬到, 迁居, 移居, 定居), whether the user
moved alone or with others ("we moved", "my wife and I relocated", 我们搬到), and
whether the move is told after another action of the same subject ("I graduated
and moved to…"). A move whose place is left out ("我三月搬过去了", "we moved
there in March") goes to the place the clause before it named ("公司把我调到了成都",
"I got a job in Leeds"). A posting by an employer (调到, 派到, "was transferred
to") is a move when the same sentence says the user moved.

:mod:`langmem_ext.language.statements` compiles these into its ``lives_in`` rules.
"""

from __future__ import annotations

MOVE_VERBS_EN = (
    "moved to",
    "moved back to",
    "moved back into",
    "moved into",
    "moved over to",
    "moved out to",
    "moved away to",
    "moved home to",
    "moved house to",
    "relocated to",
    "relocated back to",
    "emigrated to",
    "immigrated to",
    "resettled in",
    "settled in",
    "settled down in",
    "went to live in",
    "came to live in",
)
"""English past forms of moving house, up to the place."""

POSTING_VERBS_EN = (
    "was transferred to",
    "got transferred to",
    "was relocated to",
    "got relocated to",
    "was posted to",
    "got posted to",
    "was sent to",
)
"""An employer's posting of the user to a place ("I was transferred to Leeds")."""

MOVE_SUBJECTS_EN = r"(?:i|we|(?:my|our) [a-z]+(?: [a-z]+)? and i)"
"""Who moves with the user: "I", "we", "my wife and I", "my whole family and I"."""

MOVE_VERBS_ZH = (
    "搬到",
    "搬去",
    "搬回",
    "搬回到",
    "搬家到",
    "搬进",
    "搬来",
    "搬至",
    "迁到",
    "迁居到",
    "迁居",
    "迁往",
    "迁至",
    "移居到",
    "移居",
    "移民到",
    "移民",
    "定居到",
    "定居在",
    "定居于",
    "安家在",
    "落户到",
    "落户",
)
"""Chinese verbs of moving house, each followed by the place."""

MOVE_SUBJECTS_ZH = r"(?:我们一家|我们全家|我们俩|我们|我和[^，,。！？\s]{1,6}|我)"
"""Who moves with the user: 我, 我们, 我们一家, 我和老婆."""

POSTING_VERBS_ZH = ("调到", "调去", "调往", "派到", "派去", "派驻到", "外派到", "调动到")
"""An employer's posting of the user to a place (公司把我调到了成都基地)."""

ELIDED_MOVE_ZH = r"搬(?:过去|过来|了过去|了过来|家)"
"""A move whose place is the one named just before (我三月搬过去了)."""

ELIDED_MOVE_EN = r"\b(?:moved|relocated) (?:there|over there|out there)\b"
"""A move whose place is the one named just before ("we moved there in March")."""

__all__ = [
    "ELIDED_MOVE_EN",
    "ELIDED_MOVE_ZH",
    "MOVE_SUBJECTS_EN",
    "MOVE_SUBJECTS_ZH",
    "MOVE_VERBS_EN",
    "MOVE_VERBS_ZH",
    "POSTING_VERBS_EN",
    "POSTING_VERBS_ZH",
]
