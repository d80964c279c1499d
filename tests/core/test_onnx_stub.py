"""``jaxgrad.onnx``: importable, never exporting (torch writes ONNX; jaxgrad points to
``jax.export``)."""

from __future__ import annotations

import pytest

import jaxgrad
from differential import ok


def test_is_in_onnx_export():
    ok(lambda T: [T.onnx.is_in_onnx_export(), callable(T.onnx.export)])


def test_export_raises_and_points_to_jax_export(tmp_path):
    with pytest.raises(NotImplementedError, match="jaxgrad cannot export ONNX") as info:
        jaxgrad.onnx.export(jaxgrad.nn.Linear(2, 1), (jaxgrad.ones(1, 2),),
                            str(tmp_path / "m.onnx"), input_names=["x"])
    assert "jax.export" in str(info.value)
    assert not (tmp_path / "m.onnx").exists()


def test_the_recipe_in_the_message_runs():
    jax = pytest.importorskip("jax")
    model = jaxgrad.nn.Linear(2, 1)
    params, fn = jaxgrad.func.to_jax(model)
    x = jax.numpy.ones((3, 2))
    exported = jax.export.export(jax.jit(fn))(params, x)
    assert (exported.call(params, x) == model(jaxgrad.from_jax(x)).detach().jax()).all()
