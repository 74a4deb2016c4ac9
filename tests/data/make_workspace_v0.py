"""Build tests/data/workspace_v0 with the code of commit 50780a6 (the ledger before schema versions).

Run once with that commit checked out: python tests/data/make_workspace_v0.py DIR
"""

import shutil
import sys
from pathlib import Path

from langmem_ext import Memory
from langmem_ext.memory.sessions.manager import SessionManager
from langmem_ext.store.chroma import ChromaMemoryStore

root = Path(sys.argv[1])
shutil.rmtree(root, ignore_errors=True)
mem = Memory(root)
a = mem.add("I live in Berlin", scope="main")
b = mem.add("林伟对花生过敏", scope="main", category="core")
mem.add("Alice prefers tea", scope="alice")
mem.update(a, "I live in Hamburg", scope="main")
mem.boost(b, scope="main")
p = mem.save("I like cherries", scope="main")
p2 = mem.save("My cat is called Mochi", scope="alice")
mem.confirm(p2.id, scope="alice")
sm = SessionManager(mem)
sm.write_turn("main", "t1", "hello there, I am planning a trip", "Nice! Where to?")
sm.write_turn("main", "t1", "To Kyoto in April", "Kyoto in April is lovely.")
sm.checkpoint("main", "t1", force=True)
store = ChromaMemoryStore(mem)
store.put(("prefs", "u1"), "k1", {"text": "likes green tea"})
store.put(("prefs", "u1"), "k2", {"text": "dislikes coffee"}, index=False)
mem.close()
shutil.rmtree(root / ".index")
print(sorted(str(p.relative_to(root)) for p in root.rglob("*")))
