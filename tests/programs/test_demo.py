"""The README's demo, run as the README runs it, once per backend and once compiled: jaxgrad,
eager or with ``--compile``, must train exactly as torch does (same losses and test accuracy
each epoch, same hook statistics)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "train_mlp.py"
EPOCH_LINE = re.compile(r"\] epoch (\d+): loss ([\d.]+), test accuracy ([\d.]+)")
STAT_LINE = re.compile(r"^\s+(\d+:\w+ .+?)\s+mean ([\d.]+)$", re.MULTILINE)


def run_demo(backend: str, *flags: str) -> str:
    done = subprocess.run([sys.executable, str(DEMO), "--backend", backend, "--epochs", "2",
                           *flags], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    return {"torch": run_demo("torch"), "jaxgrad": run_demo("jaxgrad"),
            "compiled": run_demo("jaxgrad", "--compile")}


@pytest.mark.parametrize("mode", ["jaxgrad", "compiled"])
def test_demo_trains_like_torch(outputs, mode):
    torch_epochs = EPOCH_LINE.findall(outputs["torch"])
    ours = EPOCH_LINE.findall(outputs[mode])
    assert len(torch_epochs) == len(ours) == 2
    for (e1, loss1, acc1), (e2, loss2, acc2) in zip(torch_epochs, ours, strict=True):
        assert e1 == e2
        assert float(loss2) == pytest.approx(float(loss1), abs=2e-4)
        assert acc2 == acc1
    assert float(ours[-1][2]) > 0.7  # it learns: chance is 0.1


@pytest.mark.parametrize("mode", ["jaxgrad", "compiled"])
def test_demo_hook_statistics_match_torch(outputs, mode):
    torch_stats = STAT_LINE.findall(outputs["torch"])
    ours = STAT_LINE.findall(outputs[mode])
    assert [k for k, _ in ours] == [k for k, _ in torch_stats]
    assert len(ours) == 2 * 7  # 2 epochs x (3 Linear grad_output + 2 ReLU x 2 statistics)
    for (_, v1), (_, v2) in zip(torch_stats, ours, strict=True):
        assert float(v2) == pytest.approx(float(v1), abs=2e-4)
