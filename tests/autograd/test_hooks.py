"""Differential tests of tensor hooks: register_hook, retain_grad, post-accumulate-grad hooks.

Programs record what each hook received (and when) into a list and return it; torch is the
oracle for order, arguments, and the effect of return values.
"""

from __future__ import annotations

import pytest

from differential import attempt, captured_warnings, leaf, ok, raises, torch, val

# --- register_hook on leaves ----------------------------------------------------------------------

def test_leaf_hooks_called_in_registration_order_and_chain():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: log.append(("h1", val(g))))
        x.register_hook(lambda g: (log.append(("h2", val(g))), g * 2)[1])
        x.register_hook(lambda g: log.append(("h3", val(g))))
        x.register_hook(lambda g: (log.append(("h4", val(g))), g + 1)[1])
        (x * x).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_leaf_hook_called_once_per_backward_with_summed_grad():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: log.append(val(g)))
        (x * 2 + x.exp() + x * x).sum().backward()
        (x * 3).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_leaf_hook_return_replaces_grad_and_accumulation():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: g * 10)
        (x * 2).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        return first, val(x.grad)

    ok(program)


def test_leaf_hook_handle_remove():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        h1 = x.register_hook(lambda g: log.append("h1") or g * 2)
        x.register_hook(lambda g: log.append("h2"))
        (x * 1).sum().backward()
        h1.remove()
        h1.remove()  # removing twice is harmless
        log.append("|")
        x.grad = None
        (x * 1).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_hook_handle_as_context_manager():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        with x.register_hook(lambda g: log.append("inside") or g * 3):
            (x * 1).sum().backward()
        (x * 1).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_leaf_hook_not_called_for_unreached_leaf():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        z = leaf(T, [1.0])
        z.register_hook(lambda g: log.append("z"))
        x.register_hook(lambda g: log.append("x"))
        (x * 2).sum().backward()
        return log, z.grad

    ok(program)


def test_leaf_hook_with_autograd_grad_changes_result():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: log.append(val(g)) or g * -1)
        res = T.autograd.grad((x ** 2).sum(), x)
        return log, res, x.grad

    ok(program)


def test_leaf_hook_under_create_graph_receives_grad_with_history():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: log.append((g.requires_grad, g.grad_fn is not None,
                                              g.detach().clone())))
        (x ** 3).sum().backward(create_graph=True)
        return log, val(x.grad)

    ok(program)


# --- register_hook on non-leaves ---------------------------------------------------------------

def test_nonleaf_hooks_order_and_return_values():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        y = x * 3
        y.register_hook(lambda g: log.append(("a", val(g))))
        y.register_hook(lambda g: g * 2)
        y.register_hook(lambda g: log.append(("b", val(g))))
        y.register_hook(lambda g: g - 1)
        y.register_hook(lambda g: log.append(("c", val(g))))
        (y * y).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_nonleaf_hook_return_affects_upstream_only():
    def program(T):
        x = leaf(T, [0.0, 1.0, 2.0, 3.0])
        y = leaf(T, [4.0, 5.0, 6.0, 7.0])
        w = leaf(T, [1.0, 2.0, 3.0, 4.0])
        z = x + y
        z.register_hook(lambda g: 2 * g)
        o = w.matmul(z)
        o.backward()
        return val(x.grad), val(y.grad), val(w.grad)

    ok(program)


def test_nonleaf_hook_receives_none_for_unused_output():
    # an output of a multi-output op that gets no gradient: torch calls its hook with None
    def program(T):
        log = []
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        a, b = x.unbind(0)
        a.register_hook(lambda g: log.append(("a", val(g))))
        b.register_hook(lambda g: log.append(("b", val(g))))
        (a * 2).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_nonleaf_hook_replacing_none_gradient_raises():
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        a, b = x.unbind(0)
        b.register_hook(lambda g: T.ones(2, dtype=T.float64))
        err = attempt(lambda: (a * 2).sum().backward())
        return err, x.grad

    ok(program)


def test_nonleaf_hook_remove_and_readd():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        y = x.exp()
        h = y.register_hook(lambda g: log.append("first") or g * 0)
        h.remove()
        y.register_hook(lambda g: log.append("second"))
        y.sum().backward()
        return log, val(x.grad)

    ok(program)


def test_hooks_on_root_tensor():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        y = (x * x).sum()
        y.register_hook(lambda g: log.append(val(g)) or g * 5)
        y.backward()
        return log, val(x.grad)

    ok(program)


def test_hooks_on_root_with_explicit_gradient():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        y = x * x
        y.register_hook(lambda g: log.append(val(g)))
        v = T.tensor([3.0, -1.0], dtype=T.float64)
        y.backward(v)
        return log, val(x.grad)

    ok(program)


def test_hook_registered_during_backward_on_other_tensor():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        a = x * 2
        b = a * 3
        a_hooks = []

        def on_b(g):
            log.append("b")
            a_hooks.append(a.register_hook(lambda g: log.append(("a", val(g)))))

        b.register_hook(on_b)
        b.sum().backward()
        return log, val(x.grad)

    ok(program)


# --- retain_grad ordering ---------------------------------------------------------------------------

def test_retain_grad_sees_hook_result_when_registered_before_hook():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 100)
        (y * y).sum().backward()
        return val(y.grad), val(x.grad)

    ok(program)


def test_retain_grad_sees_hook_result_when_registered_after_hook():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.register_hook(lambda g: g * 100)
        y.retain_grad()
        (y * y).sum().backward()
        return val(y.grad), val(x.grad)

    ok(program)


def test_retain_grad_twice_and_hooks_seed_003():
    def program(T):
        log = []
        x = T.Tensor([0, 1, 2, 3]).requires_grad_()
        y = T.Tensor([4, 5, 6, 7]).requires_grad_()
        w = T.Tensor([1, 2, 3, 4]).requires_grad_()
        z = x + y
        z.retain_grad()
        zhook = z.register_hook(lambda g: log.append(("z", val(g))))
        z.retain_grad()
        o = w.matmul(z)
        ohook = o.register_hook(lambda g: log.append(("o", val(g))))
        o.backward()
        zhook.remove()
        ohook.remove()
        return log, val(x.grad), val(y.grad), val(w.grad), val(z.grad), z.retains_grad

    ok(program)


def test_retain_grad_with_hook_modifying_grad_in_place():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.retain_grad()

        def hook(g):
            g.mul_(3)

        y.register_hook(hook)
        (y * 1).sum().backward()
        return val(y.grad), val(x.grad)

    ok(program)


def test_retained_grad_is_not_the_hook_argument_object():
    def program(T):
        seen = []
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: seen.append(g))
        (y * 1).sum().backward()
        return seen[0] is y.grad, val(y.grad)

    ok(program)


# --- post-accumulate-grad hooks -------------------------------------------------------------

def test_post_accumulate_grad_hook_receives_tensor_with_grad():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])

        def hook(t):
            log.append((t is x, val(t.grad)))

        x.register_post_accumulate_grad_hook(hook)
        (x * 3).sum().backward()
        (x * 4).sum().backward()
        return log

    ok(program)


def test_post_accumulate_grad_hook_return_value_ignored_and_order():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: log.append("pre") or g * 2)
        x.register_post_accumulate_grad_hook(lambda t: log.append("post1"))
        h = x.register_post_accumulate_grad_hook(lambda t: log.append("post2"))
        (x * 3).sum().backward()
        h.remove()
        (x * 3).sum().backward()
        return log, val(x.grad)

    ok(program)


@pytest.mark.parametrize("kind", ["same", "int", "other_dtype"])
def test_post_accumulate_grad_hook_returning_value_raises(kind):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        returned = {"same": T.zeros(2, dtype=T.float64), "int": 7, "other_dtype": T.zeros(2)}
        x.register_post_accumulate_grad_hook(lambda t: returned[kind])
        err = attempt(lambda: (x * 3).sum().backward())
        return err, val(x.grad)

    ok(program)


def test_post_accumulate_grad_hook_can_modify_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])

        def hook(t):
            t.grad.mul_(0.5)

        x.register_post_accumulate_grad_hook(hook)
        (x * 3).sum().backward()
        return val(x.grad)

    ok(program)


def test_post_accumulate_grad_hook_not_run_by_autograd_grad():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: log.append("post"))
        T.autograd.grad((x * 3).sum(), x)
        return log

    ok(program)


def test_post_accumulate_grad_hook_on_nonleaf_raises():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (x * 2).register_post_accumulate_grad_hook(lambda t: None)

    raises(program)


def test_post_accumulate_grad_hook_on_tensor_not_requiring_grad_raises():
    def program(T):
        x = T.tensor([1.0, 2.0])
        return x.register_post_accumulate_grad_hook(lambda t: None)

    raises(program)


# --- hooks and in-place modification ------------------------------------------------------------

def test_hook_then_inplace_hook_fires_for_old_version():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.register_hook(lambda g: log.append(("before", val(g))))
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", val(g))))
        (y * y).sum().backward()
        return log, val(x.grad), val(y)

    ok(program)


def test_retain_grad_then_inplace_retains_new_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.retain_grad()
        y.add_(1)
        y.exp_()
        (y * 3).sum().backward()
        return val(y.grad), val(x.grad), y.retains_grad

    ok(program)


def test_hook_on_view_then_inplace_on_base():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0, 3.0])
        b = x * 1
        v = b[1:]
        v.register_hook(lambda g: log.append(("v", val(g))))
        b.register_hook(lambda g: log.append(("b", val(g))))
        b.mul_(2)
        (b * b).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_hook_on_base_then_inplace_on_view():
    def program(T):
        log = []
        x = leaf(T, [1.0, 2.0, 3.0])
        b = x * 1
        b.register_hook(lambda g: log.append(("b-before", val(g))))
        v = b[:2]
        v.mul_(5)
        b.register_hook(lambda g: log.append(("b-after", val(g))))
        (b * b).sum().backward()
        return log, val(x.grad)

    ok(program)


def test_hook_modifies_grad_in_place_seed_003():
    """Seed 003 §2.0.1: an in-place change to the grad inside a hook leaks to a and b."""

    def program(T):
        a = T.tensor(2.0, requires_grad=True)
        b = T.tensor(3.0, requires_grad=True)
        c = a * b
        d = T.tensor(4.0, requires_grad=True)

        def d_hook(grad):
            grad *= 100

        d.register_hook(d_hook)
        e = c + d
        e.backward()
        return val(a.grad), val(b.grad), val(d.grad)

    ok(program)


def test_hook_in_place_on_grad_shared_by_two_branches():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = leaf(T, [3.0, 4.0])
        s = x + y

        def hook(g):
            g.add_(1)

        x.register_hook(hook)
        (s * 1).sum().backward()
        return val(x.grad), val(y.grad)

    ok(program)


# --- .grad of a non-leaf warns ------------------------------------------------------------------

def _same_warnings(program):
    tw = captured_warnings(program, torch)
    jw = captured_warnings(program, __import__("jaxgrad"))
    assert jw == tw
    return tw


def test_nonleaf_grad_access_warns():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.sum().backward()
        return y.grad

    tw = _same_warnings(program)
    assert tw, "torch should warn"
    ok(program)


def test_nonleaf_grad_no_warning_when_retained_or_leaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.retain_grad()
        y.sum().backward()
        c = T.tensor([1.0])
        return y.grad, x.grad, c.grad, x.detach().grad

    assert _same_warnings(program) == []
    ok(program)


def test_nonleaf_grad_warning_before_backward_and_after_detach_():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        first = y.grad
        z = x * 3
        z.detach_()
        return first, z.grad

    _same_warnings(program)
    ok(program)


# --- hooks returning the wrong thing ------------------------------------------------------------

@pytest.mark.parametrize("kind", ["list", "float", "numpy"])
def test_hook_returning_wrong_type_raises(kind):
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2

        def hook(g):
            import numpy as np

            return {"list": [1.0, 2.0], "float": 1.5, "numpy": np.ones(2)}[kind]

        y.register_hook(hook)
        err = attempt(lambda: y.sum().backward())
        return err, x.grad

    ok(program)


def test_hook_returning_wrong_shape_raises():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2

        def bad_shape(g):
            return T.ones(3, dtype=T.float64)

        y.register_hook(bad_shape)
        err = attempt(lambda: y.sum().backward())
        return err, x.grad

    ok(program)


def test_hook_returning_wrong_dtype_raises():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2

        def bad_dtype(g):
            return g.float()

        y.register_hook(bad_dtype)
        err = attempt(lambda: y.sum().backward())
        return err, x.grad

    ok(program)


def test_leaf_hook_returning_wrong_shape_raises():
    def program(T):
        x = leaf(T, [1.0, 2.0])

        def leaf_shape(g):
            return T.ones(2, 1, dtype=T.float64)

        x.register_hook(leaf_shape)
        err = attempt(lambda: (x * 2).sum().backward())
        return err, x.grad

    ok(program)


def test_hook_returning_wrong_dtype_lambda_name():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        y.register_hook(lambda g: g.to(T.float32))
        return [attempt(lambda: y.sum().backward())]

    ok(program)


def test_hook_raising_propagates():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2

        def boom(g):
            raise ValueError("boom from hook")

        y.register_hook(boom)
        err = attempt(lambda: y.sum().backward())
        return err, x.grad

    ok(program)


def test_register_hook_on_tensor_not_requiring_grad_raises():
    def program(T):
        return T.tensor([1.0]).register_hook(lambda g: g)

    raises(program)


def test_node_hook_keeps_gradients_that_are_later_summed():
    # a gradient a hook stored must not be summed into in place afterwards (torch's use_count)
    def program(T):
        class Clone(T.autograd.Function):
            @staticmethod
            def forward(ctx, *args):
                return tuple(a.clone() for a in args)

            @staticmethod
            def backward(ctx, *grads):
                return grads

        saved = []
        a = leaf(T, [1.0, 2.0])
        b = T.tensor([3.0, 4.0], dtype=T.float64)
        p1, p2 = Clone.apply(a * b, a + b)
        p1.grad_fn.register_hook(lambda gi, go: saved.append(go))
        kept = []
        a.register_hook(lambda g: kept.append(g))
        (p1 * 1 + p2 * 2).sum().backward()
        return [val(g) for g in saved[0]], val(kept[0]), val(a.grad)

    ok(program)


NODE_HOOK_RESULTS = {
    "post_list": lambda gi, go: list(gi),
    "post_count": lambda gi, go: gi + gi,
    "post_size": lambda gi, go: (gi[0][:1], gi[1]),
    "post_dtype": lambda gi, go: (gi[0].double(), gi[1]),
    "post_not_tensor": lambda gi, go: (1.0, gi[1]),
    "post_none_kept": lambda gi, go: (None, gi[1] * 3),
}
NODE_PRE_HOOK_RESULTS = {
    "pre_int": lambda go: 3,
    "pre_count": lambda go: (),
    "pre_size": lambda go: (go[0].sum(),),
    "pre_scaled": lambda go: (go[0] * 2,),
}


@pytest.mark.parametrize("name", [*NODE_HOOK_RESULTS, *NODE_PRE_HOOK_RESULTS])
def test_node_hook_results_are_checked(name):
    """torch checks what a grad_fn hook returns: a tuple of the right length whose tensors keep
    each gradient's dtype and size (errors name the hook)."""

    def program(T):
        a, b = leaf(T, [1.0, 2.0]), leaf(T, [3.0, 4.0])
        out = a * b
        if name in NODE_HOOK_RESULTS:
            out.grad_fn.register_hook(NODE_HOOK_RESULTS[name])
        else:
            out.grad_fn.register_prehook(NODE_PRE_HOOK_RESULTS[name])
        result = attempt(lambda: out.sum().backward())
        return result, val(a.grad), val(b.grad)

    ok(program)


# --- _backward_hooks ------------------------------------------------------------------------------

def test_backward_hooks_dict_is_an_ordered_dict_as_printed_by_seed_002():
    """Seed 002 In[12] prints ``z._backward_hooks``: torch shows ``OrderedDict([(id, fn)])``
    (retain_grad is not in it since torch 2.0), not a dict type of its own."""

    def program(T):
        def hook_fn(grad):
            return None

        x = leaf(T, [1.0, 2.0])
        z = x * 2
        z.retain_grad()
        handle = z.register_hook(hook_fn)
        z.retain_grad()
        x_handle = x.register_hook(hook_fn)
        # the function first: a handle id such as 3 also occurs inside addresses
        shown = [repr(t._backward_hooks).replace(repr(hook_fn), "FN").replace(f"({h.id}, ", "(ID, ")
                 for t, h in ((z, handle), (x, x_handle))]
        handle.remove()
        x_handle.remove()
        return shown, repr(z._backward_hooks), type(x._backward_hooks).__name__

    ok(program)
