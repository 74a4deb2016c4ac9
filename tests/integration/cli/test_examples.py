"""Every ``examples/*.py`` runs and exits 0; the notebook executes with nbclient.

Each example runs in a subprocess of this interpreter, from a temporary folder,
with outbound connections refused except to loopback (the same rule as
pytest-socket here). The notebook runs in an ipykernel started from this
interpreter (a kernelspec written to a temp folder, so a user-wide ``python3``
kernel of another Python cannot be picked up).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOTEBOOK = EXAMPLES / "memory_agent.ipynb"

OFFLINE_GUARD = """
import socket

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _check(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK:
        raise OSError(f"network blocked in examples: {address!r}")


def _guarded_connect(self, address):
    _check(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
"""

RUN_EXAMPLE = (
    OFFLINE_GUARD
    + """
import runpy, sys
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
)

EXPECTED: dict[str, list[str]] = {
    "quickstart.py": [
        "search '拉面' before confirming: []",
        "search 'what food do I like?': 主人喜欢吃拉面",
        "confirming it anyway: PendingAlreadyResolvedError",
        "search '拉面' in scope user_bob: []",
        "- 主人讨厌香菜 ^m-",
    ],
    "add_memory_to_my_agent.py": [
        "stored for alice: ['my sister Mei is vegetarian']",
        "agent: From your memory: your sister Mei is vegetarian.",
        "agent: I searched your memory but found nothing about your sister.",
        "Part 2: a hand-built StateGraph",
    ],
    "multi_agent_shared_state.py": [
        "turn 1 -> orders: Order B-2024 has shipped; it is going to Porto.",
        "slot orders: {'status': 'shipped', 'lookups': 1}",
        "resumed from the checkpoint: order_id=B-2024",
        "turn 2 -> shipping: Order B-2024 will go to Lisbon; change fee EUR 5.",
        "entities: {'order_id': 'B-2024', 'destination': 'Lisbon'}",
        "slot shipping: {'fee': 'EUR 5', 'changes': 1}",
    ],
    "langserve_app.py": [
        "'checkpointer': 'AsyncSqliteSaver'",
        "[alice/t2] agent: 你之前说过你喜欢吃拉面。",
        "[bob/t1] agent: 我查过你的记忆，没有找到相关内容。",
        "bob naming alice's scope: HTTP 403",
        "server stopped",
    ],
}


def _env() -> dict[str, str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}
    env.pop("LANGMEM_WORKSPACE", None)
    return env


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_runs_offline_and_exits_0(example: str, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", RUN_EXAMPLE, str(EXAMPLES / example)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(),
        timeout=600,
    )
    assert out.returncode == 0, f"{example} failed:\n{out.stdout}\n{out.stderr}"
    assert out.stdout.strip().endswith("done"), out.stdout
    for line in EXPECTED.get(example, []):
        assert line in out.stdout, f"{example}: {line!r} missing from\n{out.stdout}"
    assert list(tmp_path.iterdir()) == []  # temp workspaces only, nothing left behind


def test_every_example_has_expectations() -> None:
    assert sorted(EXPECTED) == sorted(p.name for p in EXAMPLES.glob("*.py"))


def test_notebook_is_valid_v4_with_outputs_cleared() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


@pytest.fixture
def kernel_manager(tmp_path: Path) -> AsyncKernelManager:
    """A kernel of this very interpreter, whatever kernelspecs the user has installed."""
    spec = tmp_path / "kernels" / "langmem-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "langmem-ext tests",
                "language": "python",
                "env": {"ANONYMIZED_TELEMETRY": "False"},
            }
        )
    )
    ksm = KernelSpecManager(kernel_dirs=[str(spec.parent)], ensure_native_kernel=False)
    return AsyncKernelManager(kernel_name="langmem-test", kernel_spec_manager=ksm)


def _text(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.slow
def test_notebook_executes(kernel_manager: AsyncKernelManager, tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(OFFLINE_GUARD))
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = NotebookClient(
        nb, km=kernel_manager, timeout=600, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [_text(c) for c in nb.cells if c.cell_type == "code"]
    assert outputs[-1].strip() == sys.executable
    everything = "\n".join(outputs)
    assert "search before confirming: []" in everything
    assert "-> You told me your sister Mei is vegetarian." in everything
    assert (
        "[bob] Do you remember what my sister doesn't eat?\n  -> I searched your memory"
        in everything
    )
    assert "- My sister Mei is vegetarian ^m-" in everything
    assert not any(o.output_type == "error" for c in nb.cells for o in c.get("outputs", []))
