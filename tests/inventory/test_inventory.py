"""The message inventory: every file well formed, and no tool's coverage below its floor.

``tests/inventory/<tool>.yaml`` lists each tool's messages from its source (README.md here); the
schema check reports every problem of every file with its file, entry id and field, so a file that
is still being written fails with the exact list of what is left. ``floors.yaml`` is a ratchet: the
share of a tool's messages raydiag reads right (``benchmarks/coverage.py``) may not drop below it;
raise a floor when a change raises the share (the target is 0.95 per tool).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from benchmarks.coverage import evaluate, shares
from tools.inventory.instantiate import INVENTORY, TOOLS, Inventory, cases, check_file, load
from tools.inventory.layouts import Line, render

FLOORS = INVENTORY / "floors.yaml"
# The Kubernetes-side inventories this suite was written with; the Ray side adds its own files.
KUBERNETES_SIDE = (
    "kube-scheduler",
    "kubelet",
    "cluster-autoscaler",
    "karpenter",
    "nvidia-device-plugin",
    "gpu-operator",
)


def _floors() -> dict[str, float]:
    raw = yaml.safe_load(FLOORS.read_text(encoding="utf-8")) or {}
    return {str(k): float(v) for k, v in raw.items()}


def _inventories() -> list[Inventory]:
    inventories, _ = load()
    return inventories


def test_every_inventory_file_is_well_formed() -> None:
    _, problems = load()
    assert not problems, "inventory problems:\n" + "\n".join(str(p) for p in problems)


def test_the_kubernetes_side_is_inventoried() -> None:
    present = {path.stem for path in INVENTORY.glob("*.yaml")}
    assert set(KUBERNETES_SIDE) <= present, sorted(set(KUBERNETES_SIDE) - present)


def test_every_tool_has_a_floor_and_every_floor_a_tool() -> None:
    floors = _floors()
    present = {path.stem for path in INVENTORY.glob("*.yaml")} - {"floors"}
    assert sorted(present - floors.keys()) == [], "add the measured share to floors.yaml"
    assert sorted(floors.keys() - present) == [], "a floor names no inventory file"
    assert all(0.0 <= share <= 1.0 for share in floors.values()), floors


def test_cases_are_deterministic_and_fill_every_placeholder() -> None:
    first, second = cases(_inventories()), cases(_inventories())
    assert [c.text for c in first] == [c.text for c in second]
    assert len({c.key for c in first}) == len(first)
    for case in first:
        message = case.entry.message()
        # JSON and logrus lines quote the message as a JSON string does.
        quoted = json.dumps(message)[1:-1] if case.layout in ("zap-json", "logrus") else message
        assert quoted in case.text, case.key
        assert "{{" not in message, case.key


def test_a_broken_file_is_reported_by_file_id_and_field(tmp_path: Path) -> None:
    path = tmp_path / "kubelet.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "tool": "kubelet",
                "repo": "kubernetes/kubernetes",
                "versions": "1.20-1.34",
                "layouts": ["event-row"],
                "messages": [
                    {
                        "id": "ok",
                        "source": "a.go",
                        "versions": "1.20-",
                        "template": "x",
                        "reason": "R",
                        "cause": 1,
                    },
                    {
                        "id": "ok",
                        "source": "a.go",
                        "versions": "1.20-",
                        "template": "x",
                        "reason": "R",
                        "cause": 1,
                    },
                    {
                        "id": "no-value",
                        "source": "a.go",
                        "versions": "1.20-",
                        "template": "{nope} left",
                        "reason": "R",
                        "cause": None,
                    },
                    {"id": "bad-cause", "source": "a.go", "versions": "soon", "template": "x", "cause": 11},
                    {
                        "id": "bad-layout",
                        "source": "a.go",
                        "versions": "1.2",
                        "template": "x",
                        "cause": 2,
                        "layouts": ["fax"],
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    inventory, problems = check_file(path)
    assert inventory is None
    found = {(p.file, p.id, p.field) for p in problems}
    assert found == {
        ("kubelet.yaml", "ok", "id"),
        ("kubelet.yaml", "no-value", "template"),
        ("kubelet.yaml", "bad-cause", "cause"),
        ("kubelet.yaml", "bad-cause", "versions"),
        ("kubelet.yaml", "bad-cause", "reason"),
        ("kubelet.yaml", "bad-layout", "layouts"),
    }
    assert "kubelet.yaml: no-value: template: placeholder {nope} has no value" in {str(p) for p in problems}


def test_layouts_print_as_the_tools_do() -> None:
    line = Line(
        message="0/3 nodes are available: 3 node(s) had untolerated taint {nvidia.com/gpu: present}.",
        reason="FailedScheduling",
        source="pkg/scheduler/schedule_one.go",
        values={"pod": "w-1", "component": "default-scheduler"},
    )
    row = render("event-row", line).splitlines()
    assert row[0] == "LAST SEEN   TYPE      REASON             OBJECT    MESSAGE"
    assert row[1].startswith("2m          Warning   FailedScheduling   pod/w-1  ")
    block = render("describe-events", line).splitlines()
    assert block[0] == "Events:"
    assert block[1] == "  Type     Reason            Age              From               Message"
    klog = render("klog", Line("no devices", "E", "cmd/x/main.go", {}))
    assert klog == "E1204 14:03:27.123456       1 main.go:123] no devices"
    assert TOOLS["kube-scheduler"] == "default-scheduler"


@pytest.mark.parametrize("tool", sorted(_floors()))
def test_coverage_does_not_drop_below_the_floor(tool: str) -> None:
    mine = [inventory for inventory in _inventories() if inventory.tool == tool]
    assert mine, f"floors.yaml names {tool}, which has no well-formed inventory"
    row = shares(evaluate(mine))[tool]
    share = row["right"] / row["messages"]
    assert share >= _floors()[tool], f"{tool}: {share:.3f} read right, floor {_floors()[tool]}"
