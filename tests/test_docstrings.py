"""Every ``>>>`` example in jaxgrad's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import jaxgrad

# _tensor_str's examples need its own globals and print options: test_tensor_str runs them
MODULES = sorted(m.name for m in pkgutil.walk_packages(jaxgrad.__path__, "jaxgrad.")
                 if m.name != "jaxgrad._tensor_str")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module, name, globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
