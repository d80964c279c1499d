"""Devices, default device/dtype, legacy typed constructors, ``jaxgrad.cuda``: against torch.

torch here is the CPU build, so the GPU questions are compared where both agree on a machine
without a GPU (``is_available``, ``device_count``, lazy seeding); what jaxgrad raises when a GPU
is asked for is a CUDA build's answer on such a machine (RuntimeError "Found no NVIDIA driver").
"""

from __future__ import annotations

import jax
import pytest

import jaxgrad
from differential import ok, raises, same

HAS_GPU = bool([d for d in jax.devices() if d.platform == "gpu"])
LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
          "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructor_from_data(name):
    ok(lambda T: getattr(T, name)([[1, 0], [3, 1]]))
    ok(lambda T: getattr(T, name)())
    ok(lambda T: getattr(T, name)(2, 3).shape)
    ok(lambda T: getattr(T, name)(T.Size([4])).shape)
    ok(lambda T: getattr(T, name)([1, 2]).type())


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_isinstance(name):
    ok(lambda T: [isinstance(T.ones(2, dtype=d), getattr(T, name))
                  for d in (T.float32, T.float64, T.int64, T.int32, T.uint8, T.bool)])
    ok(lambda T: [repr(getattr(T, name)), repr(type(getattr(T, name))),
                  str(getattr(T, name).dtype), getattr(T, name).is_cuda])


def test_legacy_constructor_casts_and_errors():
    ok(lambda T: T.LongTensor([1.7, -2.2]))
    raises(lambda T: T.FloatTensor(T.ones(2, dtype=T.float64)))
    raises(lambda T: T.IntTensor(T.ones(2)))
    raises(lambda T: T.FloatTensor(2.5))
    raises(lambda T: T.Tensor(2.5))
    raises(lambda T: T.FloatTensor(2, "a"))
    raises(lambda T: T.Tensor(-1))
    raises(lambda T: T.FloatTensor([[1, 2], [3]]))
    ok(lambda T: T.FloatTensor([1], device="cpu"))


def test_legacy_constructor_of_a_tensor_is_an_alias():
    def program(T):
        a = T.ones(2, requires_grad=True)
        y = a * 2
        b = T.FloatTensor(y)
        c = T.Tensor(T.arange(3))
        c.add_(1)
        b.sum().backward()
        return b, b._base is y, a.grad, c, b.is_leaf

    ok(program)


def test_tensor_type_conversions():
    ok(lambda T: T.ones(2).type())
    ok(lambda T: T.ones(2, dtype=T.int64).type())
    ok(lambda T: T.ones(2).type(T.DoubleTensor))
    ok(lambda T: T.ones(2).type("torch.IntTensor".replace("torch", T.__name__)))
    ok(lambda T: T.ones(2).type("torch.ShortTensor"))  # torch's spelling works on both
    ok(lambda T: T.ones(2).type(T.int16))
    ok(lambda T: T.ones(2).type(dtype=T.int64))
    ok(lambda T: [T.ones(2).type(T.FloatTensor) is not None, T.ones(2, requires_grad=True)
                  .type(T.float64)])
    raises(lambda T: T.ones(2).type("foo"))
    raises(lambda T: T.ones(2).type(3))

    def same_object(T):
        a = T.ones(2)
        return a.type(T.FloatTensor) is a, a.type(T.float32) is a, a.type(T.float64) is a

    ok(same_object)


def test_module_device_and_type_methods():
    def program(T):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.BatchNorm1d(2))
        out = [m.cpu() is m, m.type(T.float64) is m, m[0].weight.dtype,
               m[1].num_batches_tracked.dtype, m.type("torch.FloatTensor")[0].bias.dtype,
               m.double()[0].weight.dtype, m.half()[0].weight.dtype,
               m.bfloat16()[0].weight.dtype, m.float()[1].running_mean.dtype]
        return [str(x) if not isinstance(x, bool) else x for x in out]

    ok(program)


def test_default_device_and_device_context():
    def program(T):
        before = T.get_default_device()
        T.set_default_device("cpu")
        inside = [T.get_default_device(), T.zeros(1).device, T.ones(2).device, T.rand(1).device]
        T.set_default_device(None)
        with T.device("cpu"):
            ctx = [T.get_default_device(), T.tensor([1.0]).device, T.arange(3).device]
        return [str(d) for d in [before, *inside, *ctx, T.get_default_device()]]

    ok(program)


def test_default_device_is_per_thread():
    import threading

    seen = []
    jaxgrad.set_default_device("cpu")
    try:
        worker = threading.Thread(target=lambda: seen.append(jaxgrad._core.device._default_device()))
        worker.start()
        worker.join()
        assert jaxgrad._core.device._default_device() == jaxgrad.device("cpu")
    finally:
        jaxgrad.set_default_device(None)
    assert seen == [None]
    assert jaxgrad._core.device._default_device() is None


def test_default_dtype_roundtrip():
    def program(T):
        old = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            made = [T.tensor([1.0]), T.zeros(1), T.Tensor([1]), T.FloatTensor([1]),
                    T.arange(0.0, 1.0), T.get_default_dtype()]
        finally:
            T.set_default_dtype(old)
        return made + [T.tensor([1.0])]

    ok(program)


def test_cuda_answers_on_this_machine():
    ok(lambda T: T.cuda.is_available() == HAS_GPU or not HAS_GPU)
    if not HAS_GPU:
        ok(lambda T: [T.cuda.is_available(), T.cuda.device_count(), T.cuda.manual_seed(1),
                      T.cuda.manual_seed_all(1), T.ones(1).is_cuda])
        for call in (jaxgrad.cuda.current_device, jaxgrad.cuda.get_device_name,
                     jaxgrad.cuda.synchronize, lambda: jaxgrad.ones(1).cuda(),
                     lambda: jaxgrad.zeros(1, device="cuda"),
                     lambda: jaxgrad.nn.Linear(1, 1).cuda(),
                     lambda: jaxgrad.cuda.FloatTensor([1.0])):
            with pytest.raises(RuntimeError, match="Found no NVIDIA driver"):
                call()
        assert jaxgrad.cuda.is_bf16_supported() is False
    else:
        assert jaxgrad.cuda.device_count() == len(jax.devices("gpu"))
        x = jaxgrad.ones(2).cuda()
        assert x.is_cuda and isinstance(x, jaxgrad.cuda.FloatTensor)
        assert x.type() == "jaxgrad.cuda.FloatTensor"
        jaxgrad.cuda.synchronize()


def test_cuda_seeding_leaves_the_cpu_generator_alone():
    def program(T):
        T.manual_seed(0)
        a = T.rand(3)
        T.manual_seed(0)
        T.cuda.manual_seed(5)
        T.cuda.manual_seed_all(7)
        b = T.rand(3)
        return bool((a == b).all())

    ok(program)


def test_rand_like_keeps_the_input_device():
    x = jaxgrad.ones(2)
    assert jaxgrad.rand_like(x).device == x.device
    assert jaxgrad.randn_like(x).device == x.device


def test_public_paths():
    same(lambda T: [repr(T.cuda.FloatTensor), repr(T.LongTensor)])
