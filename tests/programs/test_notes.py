"""Every ```python block in functorch_notes/ runs, in order, one namespace per note, with
warnings as errors (the pytest setting): a note's code is a program whose assertions compare
PyTorch, jaxgrad and plain JAX, so a note that drifts from what the libraries do fails here."""

from __future__ import annotations

import pathlib
import re
import sys
import types

import pytest

NOTES = sorted((pathlib.Path(__file__).resolve().parents[2] / "functorch_notes").glob("*.md"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("note", NOTES, ids=lambda path: path.name)
def test_note_code_blocks_run(note):
    text = note.read_text()
    module = types.ModuleType(f"functorch_notes.{note.stem}")  # dataclasses look it up
    sys.modules[module.__name__] = module
    try:
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start(1))  # tracebacks name the note's own lines
            exec(compile("\n" * line + match.group(1), str(note), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]


@pytest.mark.parametrize("note", NOTES, ids=lambda path: path.name)
def test_every_code_block_of_a_note_is_run(note):
    """Only python blocks run, so a note has no other kind: every code block is executed."""
    fences = re.findall(r"^```(\S*)", note.read_text(), re.M)
    openings = fences[0::2]
    assert len(fences) % 2 == 0 and set(openings) <= {"python"}, (note.name, openings)


def test_every_note_is_linked_from_the_notes_readme():
    readme = (NOTES[0].parent / "README.md").read_text()
    missing = [n.name for n in NOTES if n.name != "README.md" and f"({n.name})" not in readme]
    assert not missing, f"functorch_notes/README.md does not link {missing}"


def test_every_note_is_linked_from_the_project_readme():
    readme = (NOTES[0].parent.parent / "README.md").read_text()
    missing = [n.name for n in NOTES if n.name != "README.md"
               and f"(functorch_notes/{n.name})" not in readme]
    assert not missing, f"README.md does not link {missing}"
