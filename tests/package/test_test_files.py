"""The test tree is collected without ``__init__`` files (pytest's rootdir imports), so two test
modules with one basename in different folders clash at collection ("import file mismatch")."""

from __future__ import annotations

import collections
import pathlib

TESTS = pathlib.Path(__file__).resolve().parents[1]


def test_test_modules_have_unique_basenames():
    folders = collections.defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        folders[path.name].append(str(path.parent.relative_to(TESTS)))
    clashes = {name: where for name, where in folders.items() if len(where) > 1}
    assert not clashes, clashes
