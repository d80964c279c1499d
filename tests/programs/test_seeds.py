"""The seed posts' runnable core-autograd examples (tests/data/seeds/*.txt), run differentially.

Each test reproduces one snippet and returns what the snippet prints: ``show(...)`` records
each printed value at the moment it is printed (a tensor as its values, dtype,
``requires_grad`` and grad_fn name, which is what its printout shows). Typos in the posts
(undefined variables, ``torch.ones_likes``) are fixed to the intended program; where a post
demonstrates an error, the same error is checked. The nn.Module examples are transcribed as
written too (a printed module is compared by its repr); tests/nn/test_nn_hooks.py checks the
same hooks more broadly.

Test names: ``test_<seed number>_<section>``; the docstring names the seed file and section,
and ``QUOTES`` a piece of the post's code each test transcribes (checked against the post).
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import jaxgrad
from differential import Raised, attempt, captured_warnings, same, torch


def snapshot(v):
    """What ``print(v)`` shows, as comparable data (tensors: values, flags, grad_fn name)."""
    import jaxgrad
    from differential import torch as _torch

    if isinstance(v, (_torch.Tensor, jaxgrad.Tensor)):
        fn = v.grad_fn
        return ("T", v.detach().clone(), v.requires_grad, None if fn is None else type(fn).__name__)
    if isinstance(v, (tuple, list)):
        return type(v)(snapshot(x) for x in v)
    if isinstance(v, (_torch.nn.Module, jaxgrad.nn.Module)):
        return ("M", repr(v))
    return v


class Printer:
    """A stand-in for ``print`` that records snapshots of its arguments."""

    def __init__(self) -> None:
        self.lines: list = []

    def __call__(self, *args) -> None:
        self.lines.append(tuple(snapshot(a) for a in args))


def check(program):
    """``program(T, show)`` runs a snippet; compare what it printed under torch and jaxgrad."""

    def wrapped(T):
        show = Printer()
        program(T, show)
        return show.lines

    ta, jb = same(wrapped)
    assert not isinstance(ta, Raised), f"torch raised: {ta}"
    assert ta, "the snippet printed nothing"
    return ta, jb


# === 000_5c434d4d551237ad.txt: "Torch的一些使用方法记录" ====================================

def test_000_intermediate_grad_1_retain_grad():
    """000 §求解中间变量的梯度, method 1: retain_grad()."""

    def program(T, show):
        x = T.ones((2, 2), requires_grad=True)
        show(x.is_leaf)
        y = x * 2
        y.retain_grad()
        z = y ** 2
        z.backward(T.ones_like(z))
        show(x.grad)
        show(y.grad)  # not None

    check(program)


def _seed000_method2(T, show):
    x = T.ones((2, 2), requires_grad=True)
    show(x.is_leaf)
    y = x * 2  # missing in the post
    z = y ** 2
    t = z.mean()
    x_res = T.autograd.grad(t, x, create_graph=True)[0]
    y_res = T.autograd.grad(t, y, create_graph=True)[0]
    return x_res, y_res


def test_000_intermediate_grad_2_autograd_grad_values():
    """000 §求解中间变量的梯度, method 2: autograd.grad (values; y = x * 2 was missing)."""

    def program(T, show):
        x_res, y_res = _seed000_method2(T, show)
        show(x_res.detach(), x_res.requires_grad)
        show(y_res.detach(), y_res.requires_grad)

    check(program)


def test_000_intermediate_grad_2_autograd_grad_printed():
    """000 §求解中间变量的梯度, method 2: the printed x_res / y_res (with their grad_fn)."""

    def program(T, show):
        x_res, y_res = _seed000_method2(T, show)
        show(x_res)
        show(y_res)

    check(program)


def test_000_intermediate_grad_3_register_hook():
    """000 §求解中间变量的梯度, method 3: register_hook; the post's ``global global_feat`` typo
    makes the hook's assignment local, so 'y grad' still prints the initial 0.0."""

    def program(T, show):
        global_grad = 0.0

        def extract_grad(grad):
            show("current grad: ", grad)
            global_grad = grad  # noqa: F841 - the post's bug: a local, not the global
            return grad

        x = T.ones((2, 2), requires_grad=True)
        show(x.is_leaf)
        y = x * 2
        z = y ** 2
        t = z.mean()
        y_hook = y.register_hook(extract_grad)
        t.backward()
        show("y grad: ", global_grad)
        show("x grad: ", x.grad)
        y_hook.remove()

    check(program)


def test_000_model_weight_grads():
    """000 §获取模型权重的梯度: named_parameters() gives each weight's gradient in ``param.grad``,
    while ``param.data.grad`` is None (``.data`` is a fresh leaf without a gradient). The post
    elides the model (``# ...``); seed 002's two-layer model stands in for it."""

    def program(T, show):
        model = _seed002_model(T)
        model(T.Tensor([[1.0, 1.0, 1.0]])).backward()
        for name, param in model.named_parameters():
            show(name)
            show(param.grad)  # 真实梯度 (the real gradient)
            show(param.data.grad)  # None

    check(program)


# === 001_ad06bd932b675186.txt: "torch.autograd" notes ==========================================

def test_001_s1_requires_grad():
    """001 §1 requires_grad propagates to children."""

    def program(T, show):
        a = T.tensor([1.0], requires_grad=True)
        b = a + 1
        show(b.requires_grad, b)

    check(program)


def test_001_s1_freeze_and_finetune():
    """001 §1 freeze every parameter, then replace model.fc for fine-tuning: the output still
    requires grad and only the new layer's parameters get gradients."""

    def program(T, show):
        nn = T.nn
        rng = np.random.RandomState(0)

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(32, 512), nn.ReLU())
                self.fc = nn.Linear(512, 10)

            def forward(self, x):
                return self.fc(self.body(x))

        model = Model()
        for param in model.parameters():
            param.requires_grad = False
        model.fc = nn.Linear(512, 100)
        with T.no_grad():
            for p in model.parameters():
                p.copy_(T.tensor(rng.randn(*p.shape).astype(np.float32) * 0.05))
        out = model(T.tensor(rng.randn(4, 32).astype(np.float32)))
        show(out.requires_grad)
        out.sum().backward()
        show([(name, p.requires_grad, p.grad is None) for name, p in model.named_parameters()])
        show(model.fc.bias.grad)

    check(program)


def test_001_s3_autograd_backward():
    """001 §3 torch.autograd.backward with grad_tensors; c.grad is None; a second call raises."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        grad = T.tensor([1.0, 1.0])
        T.autograd.backward(c, grad_tensors=grad)
        show(a.grad)
        show(b.grad)
        show(c.grad)  # not a leaf: None
        show(attempt(lambda: T.autograd.backward(c, grad_tensors=grad)))
        show(a.grad, b.grad)

    check(program)


def test_001_s4_autograd_grad():
    """001 §4 torch.autograd.grad w.r.t. leaves and a non-leaf; .grad stays None; a second call
    raises."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        d = 2 * c + 1
        grad = T.tensor([1.0, 1.0])
        show(T.autograd.grad(d, (a, b, c), grad))
        show((a.grad, b.grad))
        show(attempt(lambda: T.autograd.grad(d, a, grad)))

    check(program)


def test_001_s5_freeze_gradients():
    """001 §5 four ways to stop recording: no_grad, @no_grad(), set_grad_enabled(flag) as a
    context, and set_grad_enabled(False) as a plain call."""

    def program(T, show):
        x = T.tensor([1.0], requires_grad=True)
        with T.no_grad():
            y = x * 2
        show(y.requires_grad)

        @T.no_grad()
        def doubler(x):
            return x * 2

        z = doubler(x)
        show(z.requires_grad)
        flag = False
        with T.set_grad_enabled(flag):
            y = x * 2
        show(y.requires_grad)
        try:
            T.set_grad_enabled(False)
            y = x * 2
            show(y.requires_grad)
        finally:
            T.set_grad_enabled(True)
        show(T.is_grad_enabled())

    check(program)


def test_001_s7_detach():
    """001 §7 detach()."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        cc = c.detach()
        show(cc.requires_grad)
        show(cc)
        show(c)

    check(program)


def test_001_s8_detach_inplace():
    """001 §8 detach_() is in place: cc is c."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        cc = c.detach_()
        show(cc is c)
        show(cc.requires_grad)
        show(cc)

    check(program)


def test_001_s9_grad_none_before_backward():
    """001 §9 .grad is None before backward, set on leaves after."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        show(a.grad)
        (a * a).sum().backward()
        show(a.grad)

    check(program)


def test_001_s10_is_leaf():
    """001 §10 is_leaf."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        show(c.is_leaf)
        show(a.is_leaf)

    check(program)


def test_001_s11_register_hook():
    """001 §11 a hook on c prints its gradient during d.backward."""

    def program(T, show):
        def hook_func(grad):
            show(grad)

        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        d = 2 * c + 1
        hook = c.register_hook(hook_func)
        d.backward(T.tensor([1.0, 1.0]))
        hook.remove()
        show(a.grad, b.grad)

    check(program)


def test_001_s12_retain_grad():
    """001 §12 retain_grad on c."""

    def program(T, show):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([1.0, 2.0], requires_grad=True)
        c = 2 * a + 3 * b + 1
        d = 2 * c + 1
        c.retain_grad()
        d.backward(T.tensor([1.0, 1.0]))
        show(c.grad)

    check(program)


def _seed001_func(T):
    class Func(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            expx = T.exp(x)
            expy = T.exp(y)
            result = 3 * x + 2 * y + expx + expy
            ctx.save_for_backward(expx, expy)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            expx, expy, = ctx.saved_tensors
            grad_x = grad_output * (3 + expx)
            grad_y = grad_output * (2 + expy)
            return grad_x, grad_y

    return Func.apply


def test_001_s13_autograd_function():
    """001 §13 a custom Function for 3*x+2*y+exp(x)+exp(y); x.grad, y.grad."""

    def program(T, show):
        myfunc = _seed001_func(T)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        z = myfunc(x, y)
        z.backward(T.tensor([1.0, 1.0]))
        show((x.grad, y.grad))

    check(program)


def _seed001_inputs(T):
    """ipt = (randn(20).double(), randn(20).double()), the same numbers for both libraries."""
    rng = np.random.RandomState(1)
    return tuple(T.tensor(rng.randn(20).astype(np.float32), requires_grad=True).double()
                 for _ in range(2))


def test_001_s14_gradcheck():
    """001 §14 gradcheck of the custom Function at atol=1e-4 (and at the defaults)."""

    def program(T, show):
        myfunc = _seed001_func(T)
        ipt = _seed001_inputs(T)
        show(T.autograd.gradcheck(myfunc, ipt, atol=1e-4))
        show(T.autograd.gradcheck(myfunc, ipt))

    check(program)


def test_001_s15_gradgradcheck_fails():
    """001 §15 gradgradcheck of the Function fails: its backward uses exp(x) saved without
    history, so the second derivative misses a term; the error's first line is compared."""

    def program(T, show):
        myfunc = _seed001_func(T)
        ipt = _seed001_inputs(T)
        outs = tuple(T.ones(20, dtype=T.float64, requires_grad=True) for _ in range(1))
        show(T.autograd.gradgradcheck(myfunc, ipt, outs, raise_exception=False))
        err = attempt(lambda: T.autograd.gradgradcheck(myfunc, ipt, outs))
        show((err.cls, err.message.splitlines()[0]))

    check(program)


def test_001_s16_profiler():
    """001 §16 the profiler around the Function's forward and backward (CPU: use_cuda=False);
    what is compared is which ranges are recorded (times are machine-dependent)."""

    def program(T, show):
        myfunc = _seed001_func(T)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        grad = T.tensor([1.0, 1.0])
        with T.autograd.profiler.profile(use_cuda=False) as prof:
            z = myfunc(x, y)
            z.backward(grad)
        text = str(prof)
        show([name for name in ("Func", "FuncBackward", "aten::exp", "aten::mul", "aten::add",
                                "evaluate_function", "Self CPU time total") if name in text])
        show(text.splitlines()[1].split())

    check(program)


# === 002_0cdcbb9c31096628.txt: 中间梯度的查询 / hook, module hooks =================================

def _seed002_xyw(T):
    x = T.Tensor([0, 1, 2, 3]).requires_grad_()
    y = T.Tensor([4, 5, 6, 7]).requires_grad_()
    w = T.Tensor([1, 2, 3, 4]).requires_grad_()
    return x, y, w


def _seed002_in1(T, show):
    x, y, w = _seed002_xyw(T)
    z = x + y
    o = w.matmul(z)
    o.backward()
    show("x.requires_grad:", x.requires_grad)
    show("y.requires_grad:", y.requires_grad)
    show("z.requires_grad:", z.requires_grad)
    show("w.requires_grad:", w.requires_grad)
    show("o.requires_grad:", o.requires_grad)
    show("x.grad:", x.grad)
    show("y.grad:", y.grad)
    show("w.grad:", w.grad)
    show("z.grad:", z.grad)  # None, with a warning
    show("o.grad:", o.grad)  # None, with a warning


def test_002_in1_leaf_grads_only():
    """002 §1.1 In[1]: only leaves get .grad."""
    check(_seed002_in1)


def test_002_in1_nonleaf_grad_warnings():
    """002 §1.1 In[1]: reading z.grad and o.grad warns (the same UserWarning as torch)."""
    import jaxgrad

    def program(T):
        _seed002_in1(T, Printer())

    tw = captured_warnings(program, torch)
    assert len(tw) == 2
    assert captured_warnings(program, jaxgrad) == tw


def test_002_in3_retain_grad():
    """002 §1.1 In[3]: retain_grad on z and o (the post's comment says None, its output shows
    the gradients)."""

    def program(T, show):
        x, y, w = _seed002_xyw(T)
        z = x + y
        z.retain_grad()
        o = w.matmul(z)
        o.retain_grad()
        o.backward()
        for name, t in (("x", x), ("y", y), ("z", z), ("w", w), ("o", o)):
            show(name + ".requires_grad:", t.requires_grad)
        for name, t in (("x", x), ("y", y), ("w", w), ("z", z), ("o", o)):
            show(name + ".grad:", t.grad)

    check(program)


def test_002_in12_hook_and_retain_grad():
    """002 §1.1 In[12]: retain_grad twice around a hook; hooks fire o first, then z."""

    def program(T, show):
        x, y, w = _seed002_xyw(T)
        z = x + y

        def hook_fn(grad):
            show("grad: ", grad)

        z.retain_grad()
        zhook = z.register_hook(hook_fn)
        z.retain_grad()
        # the post prints z._backward_hooks: in torch 2.x only the user hook is in it
        show(len(z._backward_hooks), [h is hook_fn for h in z._backward_hooks.values()])
        o = w.matmul(z)
        ohook = o.register_hook(hook_fn)
        show("=====Start backprop=====")
        o.backward()
        show("=====End backprop=====")
        show("x.grad:", x.grad)
        show("y.grad:", y.grad)
        show("w.grad:", w.grad)
        show("z.grad:", z.grad)
        zhook.remove()
        ohook.remove()
        show(len(z._backward_hooks))

    check(program)


def test_002_s2_hook_changes_grad():
    """002 §2 In[5]: a hook returning 2*grad doubles the gradient reaching x and y."""

    def program(T, show):
        x, y, w = _seed002_xyw(T)
        z = x + y

        def hook_fn(grad):
            g = 2 * grad
            show(g)
            return g

        z.register_hook(hook_fn)
        o = w.matmul(z)
        show("=====Start backprop=====")
        o.backward()
        show("=====End backprop=====")
        show("x.grad:", x.grad)
        show("y.grad:", y.grad)
        show("w.grad:", w.grad)
        show("z.grad:", z.grad)

    check(program)


def test_002_s2_0_1_inplace_in_hook():
    """002 §2.0.1 In[14]: ``grad *= 100`` inside d's hook (the post's output: 3 and 2)."""

    def program(T, show):
        a = T.tensor(2.0, requires_grad=True)
        b = T.tensor(3.0, requires_grad=True)
        c = a * b
        d = T.tensor(4.0, requires_grad=True)

        def d_hook(grad):
            grad *= 100

        d.register_hook(d_hook)
        e = c + d
        e.backward()
        show(a.grad)
        show(b.grad)
        show(d.grad)

    check(program)


def test_002_s2_1_two_hooks():
    """002 §2.1 In[8]: two hooks on z; the second sees the first one's result."""

    def program(T, show):
        x, y, w = _seed002_xyw(T)
        z = x + y
        z.register_hook(lambda x: 100.0 + x)
        z.register_hook(lambda x: show("grad: ", x))
        o = w.matmul(z)
        show("=====Start backprop=====")
        o.backward()
        show("=====End backprop=====")
        show(x.grad, y.grad, w.grad)

    check(program)


def _seed002_model(T):
    """002 §3.1/§3.2's ``Model``, as the post writes it (weights replaced under no_grad)."""
    torch, nn = T, T.nn

    class Model(nn.Module):
        def __init__(self):
            super(Model, self).__init__()  # noqa: UP008 - as the post writes it
            self.fc1 = nn.Linear(3, 4)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(4, 1)
            self.initialize()

        def initialize(self):
            with torch.no_grad():
                self.fc1.weight = torch.nn.Parameter(
                    torch.Tensor([[1., 2., 3.],
                                  [-4., -5., -6.],
                                  [7., 8., 9.],
                                  [-10., -11., -12.]]))
                self.fc1.bias = torch.nn.Parameter(torch.Tensor([1.0, 2.0, 3.0, 4.0]))
                self.fc2.weight = torch.nn.Parameter(torch.Tensor([[1.0, 2.0, 3.0, 4.0]]))
                self.fc2.bias = torch.nn.Parameter(torch.Tensor([1.0]))

        def forward(self, x):
            o = self.fc1(x)
            o = self.relu1(o)
            o = self.fc2(o)
            return o

    return Model()


def test_002_s3_2_forward_pre_hook_drops_keyword():
    """002 §3.2 (pre forward hook): the hook sees only the positional inputs (a, b) and returns
    (a + 10, b), so forward is called without ``c`` and raises the post's TypeError."""

    def program(T, show):
        nn = T.nn

        class sumnet(nn.Module):
            def __init__(self):
                super(sumnet, self).__init__()  # noqa: UP008

            @staticmethod
            def forward(a, b, c):
                d = a + b + c
                show("a:", a)
                show("b:", b)
                show("c:", c)
                return d

        def forward_pre_hook(module, input):
            a, b = input
            show("pre b:", b)
            return a + 10, b

        def forward_hook(module, inputs, outputs):
            show("inputs: ", inputs)
            show("outputs: ", outputs)
            return outputs + 100

        sum_net = sumnet()
        sum_net.register_forward_pre_hook(forward_pre_hook)
        sum_net.register_forward_hook(forward_hook)
        a = T.tensor(2., requires_grad=True)
        b = T.tensor(3., requires_grad=True)
        c = T.tensor(4., requires_grad=True)
        try:
            d = sum_net(a, b, c=c)
        except TypeError as exc:
            show("TypeError", str(exc))
            return
        d.backward()
        show(d)

    check(program)


def test_002_s3_1_forward_hook():
    """002 §3.1 (register forward hook): each child's hook prints the module, its input tuple
    and output; the features are saved in lists and printed again after backward."""

    def program(T, show):
        total_feat_out = []
        total_feat_in = []

        def hook_fn_forward(module, input, output):
            show(module)
            show("input", input)
            show("output", output)
            total_feat_out.append(output)
            total_feat_in.append(input)

        model = _seed002_model(T)
        modules = model.named_children()
        for _name, module in modules:
            module.register_forward_hook(hook_fn_forward)
        x = T.Tensor([[1.0, 1.0, 1.0]]).requires_grad_()
        o = model(x)
        o.backward()
        show("==========Saved inputs and outputs==========")
        for idx in range(len(total_feat_in)):
            show("input: ", total_feat_in[idx])
            show("output: ", total_feat_out[idx])

    check(program)


def _seed002_backward_hook_program(T, show, whole_model):
    total_grad_out = []
    total_grad_in = []

    def hook_fn_backward(module, grad_input, grad_output):
        show(module)
        show("grad_output", grad_output)
        show("grad_input", grad_input)
        total_grad_in.append(grad_input)
        total_grad_out.append(grad_output)

    model = _seed002_model(T)
    if whole_model:
        model.register_backward_hook(hook_fn_backward)
    else:
        modules = model.named_children()
        for _name, module in modules:
            module.register_backward_hook(hook_fn_backward)
    x = T.Tensor([[1.0, 1.0, 1.0]]).requires_grad_()
    o = model(x)
    o.backward()
    show("==========Saved inputs and outputs==========")
    for idx in range(len(total_grad_in)):
        show("grad output: ", total_grad_out[idx])
        show("grad input: ", total_grad_in[idx])


@pytest.mark.parametrize("whole_model", [False, True], ids=["children", "whole_model"])
def test_002_s3_2_backward_hook(whole_model):
    """002 §3.2 (register backward hook) on each child, and §注意事项's variant with the hook on
    the whole model, which only sees the last simple op's gradients (fc2's addmm): torch's
    documented pitfall, with its deprecation warnings."""

    def program(T, show):
        _seed002_backward_hook_program(T, show, whole_model)

    check(program)

    def warned(T):
        _seed002_backward_hook_program(T, lambda *args: None, whole_model)

    assert captured_warnings(warned, jaxgrad) == captured_warnings(warned, torch)


# === 003_8f4aee35a4a2fd0a.txt: retain_grad() and hooks on a two-layer network ===========

def _seed003_data(T):
    x = T.tensor([[1.0]])
    y = T.tensor([[1.0], [0.0]])
    w1 = T.tensor([[1.0], [2.0]], requires_grad=True)
    w2 = T.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    return x, y, w1, w2


def test_003_retain_grad():
    """003 §retain_grad(): every intermediate retains its gradient."""

    def program(T, show):
        def forwrad(x, y, w1, w2):
            z_1 = T.mm(w1, x)
            z_1.retain_grad()
            y_1 = T.sigmoid(z_1)
            y_1.retain_grad()
            z_2 = T.mm(w2, y_1)
            z_2.retain_grad()
            y_2 = T.sigmoid(z_2)
            y_2.retain_grad()
            loss = 1 / 2 * (((y_2 - y) ** 2).sum())
            loss.retain_grad()
            return loss, z_1, y_1, z_2, y_2

        x, y, w1, w2 = _seed003_data(T)
        loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
        loss.backward()
        for t in (z_1, y_1, z_2, y_2, loss, w1, w2):
            show(t.grad)
        show(loss)

    check(program)


def test_003_hook():
    """003 §hook的使用: save_grad(name) hooks record each intermediate's gradient."""

    def program(T, show):
        grads = {}

        def save_grad(name):
            def hook(grad):
                grads[name] = grad

            return hook

        def forwrad(x, y, w1, w2):
            z_1 = T.mm(w1, x)
            y_1 = T.sigmoid(z_1)
            z_2 = T.mm(w2, y_1)
            y_2 = T.sigmoid(z_2)
            loss = 1 / 2 * (((y_2 - y) ** 2).sum())
            return loss, z_1, y_1, z_2, y_2

        x, y, w1, w2 = _seed003_data(T)
        loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
        z_1.register_hook(save_grad("z_1"))
        y_1.register_hook(save_grad("y_1"))
        z_2.register_hook(save_grad("z_2"))
        y_2.register_hook(save_grad("y_2"))
        loss.register_hook(save_grad("loss"))
        loss.backward()
        show(list(grads))  # the order hooks fired in
        for name in ("z_1", "y_1", "z_2", "y_2", "loss"):
            show(grads[name])

    check(program)


# === 004_60b2f1d1dd9beb00.txt: "PyTorch 梯度" ==============================================

def test_004_backward_and_grad():
    """004 §torch.Tensor.backward、torch.autograd.grad: y = x * w + b three ways."""

    def program(T, show):
        x = T.tensor(3.0)
        w = T.tensor(2.0, requires_grad=True)
        b = T.tensor(1.0, requires_grad=True)
        y = x * w + b
        y.backward()
        show(w.grad, b.grad)  # 2.0, 1.0

        w = T.tensor(2.0, requires_grad=True)
        b = T.tensor(1.0, requires_grad=True)
        y = x * w + b
        w_grad, b_grad = T.autograd.grad(y, [w, b])
        show(w_grad, b_grad)

        w = T.tensor(2.0, requires_grad=True)
        b = T.tensor(1.0, requires_grad=True)
        y = x * w + b
        w_grad = T.autograd.grad(y, w, retain_graph=True)
        b_grad = T.autograd.grad(y, b)
        show(w_grad[0], b_grad[0])
        show(attempt(lambda: T.autograd.grad(y, w)))  # no retain_graph this time

    check(program)


def test_004_higher_order_values():
    """004 §多级梯度: without create_graph the second grad errors; with it, 12 then 6; then
    z.backward(create_graph=True) and grad of x.grad (the snippets continue one session)."""

    def program(T, show):
        x = T.tensor(2.0, requires_grad=True)
        y = T.tensor(3.0, requires_grad=True)
        z = x * x * y
        grad_x = T.autograd.grad(z, x, retain_graph=True)
        show(attempt(lambda: T.autograd.grad(grad_x, x)))  # error
        grad_x = T.autograd.grad(z, x, create_graph=True)  # 12
        grad_xx = T.autograd.grad(grad_x, x)  # 6
        show(grad_x[0].detach(), grad_x[0].requires_grad, grad_xx)
        z.backward(create_graph=True)
        grad_xx = T.autograd.grad(x.grad, x)
        show(x.grad, grad_xx[0])  # 12, 6
        show(y.grad)

    check(program)


def test_004_higher_order_snippets_fresh():
    """004 §多级梯度, each snippet on a fresh graph: grad without create_graph cannot be
    differentiated again; with it 12 then 6; z.backward(create_graph=True) then grad of x.grad."""

    def program(T, show):
        def fresh():
            x = T.tensor(2.0, requires_grad=True)
            y = T.tensor(3.0, requires_grad=True)
            return x, y, x * x * y

        x, y, z = fresh()
        grad_x = T.autograd.grad(z, x, retain_graph=True)
        show(attempt(lambda: T.autograd.grad(grad_x, x)))  # error
        x, y, z = fresh()
        grad_x = T.autograd.grad(z, x, create_graph=True)  # 12
        grad_xx = T.autograd.grad(grad_x, x)  # 6
        show(grad_x[0].detach(), grad_x[0].requires_grad, grad_xx)
        x, y, z = fresh()
        z.backward(create_graph=True)
        grad_xx = T.autograd.grad(x.grad, x)
        show(x.grad, grad_xx[0])  # 12, 6
        show(y.grad)

    check(program)


def test_004_higher_order_printed_grad_fn():
    """004 §多级梯度: the printed ``grad_x`` (with its grad_fn)."""

    def program(T, show):
        x = T.tensor(2.0, requires_grad=True)
        y = T.tensor(3.0, requires_grad=True)
        z = x * x * y
        grad_x = T.autograd.grad(z, x, create_graph=True)
        show(grad_x)

    check(program)


def test_004_zeroing_grads_accumulate():
    """004 §梯度清零, first snippet: x.grad.backward() accumulates 6 onto 12."""

    def program(T, show):
        x = T.tensor(2.0, requires_grad=True)
        y = T.tensor(3.0, requires_grad=True)
        z = x * x * y
        z.backward(create_graph=True)
        show(x.grad)  # 12
        x.grad.backward()
        show(x.grad)  # 18
        show(y.grad)

    check(program)


def test_004_zeroing_grads_with_data_zero():
    """004 §梯度清零, second snippet: x.grad.data.zero_() then x.grad.backward() gives 6."""

    def program(T, show):
        x = T.tensor(2.0, requires_grad=True)
        y = T.tensor(3.0, requires_grad=True)
        z = x * x * y
        z.backward(create_graph=True)
        show(x.grad)  # 12
        x.grad.data.zero_()
        show(x.grad)  # 0
        x.grad.backward()
        show(x.grad)  # 6

    check(program)


def test_004_tensor_gradient():
    """004 §张量梯度: vector y.backward() errors; with ones_like (the post's ``ones_likes``
    typo fixed) x.grad is (4, 6); with weights [0.4, 0.6] it is (1.6, 3.6)."""

    def program(T, show):
        x = T.tensor([2.0, 3.0], requires_grad=True)
        y = x * x
        show(attempt(y.backward))  # error

        x = T.tensor([2.0, 3.0], requires_grad=True)
        y = x * x
        y.backward(T.ones_like(y))
        show(x.grad)  # (4, 6)

        x = T.tensor([2.0, 3.0], requires_grad=True)
        y = x * x
        y.backward(T.tensor([0.4, 0.6]))
        show(x.grad)  # (1.6, 3.6)

    check(program)


def test_004_ones_likes_typo_raises():
    """004 §张量梯度 as printed: ``torch.ones_likes`` does not exist."""

    def program(T):
        x = T.tensor([2.0, 3.0], requires_grad=True)
        y = x * x
        return [attempt(lambda: y.backward(T.ones_likes(y)))]

    ta, _ = same(program)
    assert isinstance(ta[0], Raised)


def test_004_no_grad_inplace():
    """004 §禁用梯度: ``x += 1`` on a leaf inside no_grad is allowed and bumps its version."""

    def program(T, show):
        x = T.tensor([2.0, 3.0], requires_grad=True)
        with T.no_grad():
            x += 1
            y = x * x
        show(x)  # [3, 4] requires_grad=True
        show(x._version)  # 1
        show(y.requires_grad)  # False

    check(program)


def test_004_no_grad_decorator_inplace():
    """004 §禁用梯度, decorator form (the post prints an undefined ``y``; we print f(x)'s)."""

    def program(T, show):
        x = T.tensor([2.0, 3.0], requires_grad=True)

        @T.no_grad()
        def f(x):
            x += 1
            return x * x

        y = f(x)
        show(x)  # [3, 4] requires_grad=True
        show(x._version)  # 1
        show(y.requires_grad)  # False
        show(y)

    check(program)


def test_004_data_sigmoid_silently_wrong():
    """004 §切断反向传播: zeroing y.data after sigmoid gives a wrong gradient [0, 0], no error."""

    def program(T, show):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x.sigmoid()
        y_ = y.data
        y_.zero_()
        z = y.sum()
        z.backward()
        show(x.grad)  # [0, 0]
        show(y, y._version, y_._version)

    check(program)


def test_004_detach_sigmoid_raises():
    """004 §切断反向传播: zeroing y.detach() after sigmoid makes backward raise."""

    def program(T, show):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x.sigmoid()
        y_ = y.detach()
        y_.zero_()
        z = y.sum()
        show(attempt(z.backward))  # error
        show(x.grad, y._version)

    check(program)


def test_004_data_square_correct():
    """004 §切断反向传播: for y = x * x the saved tensors are x, so zeroing y.data is harmless."""

    def program(T, show):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y_ = y.data
        y_.zero_()
        z = y.sum()
        z.backward()
        show(x.grad)  # [2, 4]

    check(program)


def test_004_detach_square_correct():
    """004 §切断反向传播: for y = x * x zeroing y.detach() raises nothing either."""

    def program(T, show):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y_ = y.detach()
        y_.zero_()
        z = y.sum()
        z.backward()
        show(x.grad)  # [2, 4]
        show(y._version)

    check(program)


# === the seed posts themselves ====================================================================

SEEDS = pathlib.Path(__file__).resolve().parents[1] / "data" / "seeds"
SEED_FILES = ["000_5c434d4d551237ad.txt", "001_ad06bd932b675186.txt", "002_0cdcbb9c31096628.txt",
              "003_8f4aee35a4a2fd0a.txt", "004_60b2f1d1dd9beb00.txt"]

# test -> code (or prose) of the section it transcribes, as the post writes it (whitespace aside)
QUOTES = {
    "test_000_intermediate_grad_1_retain_grad":
        "y.retain_grad()\nz = y ** 2\nz.backward(torch.ones_like(z))",
    "test_000_intermediate_grad_2_autograd_grad_values":
        "x_res = torch.autograd.grad(t, x, create_graph=True)[0]",
    "test_000_intermediate_grad_2_autograd_grad_printed":
        "print(x_res)\ny_res = torch.autograd.grad(t, y, create_graph=True)[0]\nprint(y_res)",
    "test_000_intermediate_grad_3_register_hook": "y_hook = y.register_hook(extract_grad)",
    "test_000_model_weight_grads": "print(param.data.grad)      # None",
    "test_001_s1_requires_grad": "b=a+1\nb.requires_grad # True",
    "test_001_s1_freeze_and_finetune": "model.fc = nn.Linear(512, 100)",
    "test_001_s3_autograd_backward": "torch.autograd.backward(c, grad_tensors=grad)",
    "test_001_s4_autograd_grad": "torch.autograd.grad(d,(a,b,c),grad)",
    "test_001_s5_freeze_gradients": "with torch.set_grad_enabled(flag):",
    "test_001_s7_detach": "cc = c.detach()",
    "test_001_s8_detach_inplace": "cc = c.detach_()\ncc is c # True",
    "test_001_s9_grad_none_before_backward": "调用后叶节点将储存.grad属性",
    "test_001_s10_is_leaf": "c.is_leaf # False\na.is_leaf # True",
    "test_001_s11_register_hook": "hook = c.register_hook(hook_func)",
    "test_001_s12_retain_grad": "c.retain_grad()",
    "test_001_s13_autograd_function": "myfunc = Func.apply",
    "test_001_s14_gradcheck": "test = torch.autograd.gradcheck(myfunc, ipt, atol=1e-4)",
    "test_001_s15_gradgradcheck_fails": "test = torch.autograd.gradcheck(myfunc, ipt) # 上述函数无法通过检测",
    "test_001_s16_profiler": "with torch.autograd.profiler.profile(use_cuda=True) as prof:",
    "test_002_in1_leaf_grads_only": "print('w.grad:', w.grad) # tensor([ 4.,  6.,  8., 10.])",
    "test_002_in1_nonleaf_grad_warnings": "print('o.grad:', o.grad) # None",
    "test_002_in3_retain_grad": "z.retain_grad()",
    "test_002_in12_hook_and_retain_grad": "zhook = z.register_hook(hook_fn)",
    "test_002_s2_hook_changes_grad": "z.register_hook(hook_fn)",
    "test_002_s2_0_1_inplace_in_hook": "d.register_hook(d_hook)",
    "test_002_s2_1_two_hooks": 'z.register_hook(lambda x: print("grad: ", x))',
    "test_002_s3_2_forward_pre_hook_drops_keyword":
        "sum_net.register_forward_pre_hook(forward_pre_hook)",
    "test_002_s3_1_forward_hook": "module.register_forward_hook(hook_fn_forward)",
    "test_002_s3_2_backward_hook": "module.register_backward_hook(hook_fn_backward)",
    "test_003_retain_grad": "z_1.retain_grad()",
    "test_003_hook": "z_1.register_hook(save_grad('z_1'))",
    "test_004_backward_and_grad": "w_grad, b_grad = torch.autograd.grad(y, [w, b])",
    "test_004_higher_order_values": "grad_xx = torch.autograd.grad(grad_x, x)",
    "test_004_higher_order_snippets_fresh": "grad_xx = torch.autograd.grad(x.grad, x)",
    "test_004_higher_order_printed_grad_fn": "grad_x = torch.autograd.grad(z, x, create_graph=True)",
    "test_004_zeroing_grads_accumulate": "x.grad.backward()",
    "test_004_zeroing_grads_with_data_zero": "x.grad.data.zero_()",
    "test_004_tensor_gradient": "y.backward(torch.tensor([0.4, 0.6]))",
    "test_004_ones_likes_typo_raises": "y.backward(torch.ones_likes(y))",
    "test_004_no_grad_inplace": "with torch.no_grad():\n  x += 1\n  y = x * x",
    "test_004_no_grad_decorator_inplace": "@torch.no_grad()\ndef f(x):",
    "test_004_data_sigmoid_silently_wrong": "y = x.sigmoid()\ny_ = y.data",
    "test_004_detach_sigmoid_raises": "y = x.sigmoid()\ny_ = y.detach()",
    "test_004_data_square_correct": "y = x * x\ny_ = y.data",
    "test_004_detach_square_correct": "y = x * x\ny_ = y.detach()",
}


def _squeezed(text):
    return re.sub(r"\s+", "", text)


def test_the_seed_posts_are_in_the_repository():
    assert sorted(p.name for p in SEEDS.glob("*.txt")) == SEED_FILES


def test_every_seed_test_quotes_its_post():
    transcribed = sorted(name for name in globals() if re.match(r"test_\d{3}_", name))
    assert sorted(QUOTES) == transcribed


@pytest.mark.parametrize("name", sorted(QUOTES))
def test_the_quoted_code_is_in_the_seed_post(name):
    (post,) = [f for f in SEED_FILES if f.startswith(name[5:8] + "_")]
    assert _squeezed(QUOTES[name]) in _squeezed((SEEDS / post).read_text(encoding="utf-8"))
