"""Differential tests of misuse: each must raise torch's exception class with torch's message
(with "torch" spelled "jaxgrad"), and leave no half-updated ``.grad`` behind.
"""

from __future__ import annotations

import copy

import pytest

from differential import Raised, attempt, leaf, ok, same


def after_error(program):
    """``program(T)`` returns (thunk that must raise, leaves): compare the error and that every
    leaf's ``.grad`` is untouched afterwards."""

    def wrapped(T):
        thunk, leaves = program(T)
        err = attempt(thunk)
        return err, [t.grad for t in leaves]

    ta, jb = same(wrapped)
    assert isinstance(ta[0], Raised), f"expected torch to raise, got {ta[0]!r}"
    return ta, jb


# --- backward / grad argument errors -----------------------------------------------------------

def test_non_scalar_backward_without_gradient():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: (x * 2).backward()), [x]

    after_error(program)


def test_non_scalar_autograd_grad_without_grad_outputs():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.grad(x * 2, x)), [x]

    after_error(program)


def test_backward_of_output_not_requiring_grad():
    def program(T):
        c = T.tensor([1.0, 2.0])
        return (lambda: (c * 2).sum().backward()), [c]

    after_error(program)


def test_backward_second_output_not_requiring_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        c = T.tensor([1.0, 2.0])
        return (lambda: T.autograd.backward([(x * 2).sum(), c.sum()])), [x]

    after_error(program)


def test_autograd_grad_output_not_requiring_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        c = T.tensor([1.0, 2.0])
        return (lambda: T.autograd.grad(c.sum(), x)), [x]

    after_error(program)


def test_backward_under_no_grad_made_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        with T.no_grad():
            y = (x * 2).sum()
        return (lambda: y.backward()), [x]

    after_error(program)


def test_gradient_shape_mismatch():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: (x * 2).backward(T.ones(3, dtype=T.float64))), [x]

    after_error(program)


def test_gradient_shape_mismatch_2d():
    def program(T):
        x = leaf(T, [[1.0, 2.0], [3.0, 4.0]])
        return (lambda: (x * 2).backward(T.ones(4, dtype=T.float64))), [x]

    after_error(program)


_INDEX_QUIRK = ("jaxgrad bug: for a mismatching grad at index >= 1 torch's _make_grads builds the "
                "message with grads.index(grad) (tensor ==), raising 'Boolean value of Tensor "
                "with more than one value is ambiguous'; jaxgrad raises 'Mismatch in shape'")


def test_grad_outputs_shape_mismatch_second_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.grad([x * 2, x * 3], x,
                                        [T.ones(2, dtype=T.float64), T.ones(1, 2,
                                                                             dtype=T.float64)])), [x]

    after_error(program)


def test_no_half_updated_grad_with_multiple_roots():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        w = leaf(T, [3.0, 4.0])
        return (lambda: T.autograd.backward([(x * 2).sum(), w * 3],
                                            [None, T.ones(3, dtype=T.float64)])), [x, w]

    after_error(program)


def test_no_half_updated_grad_when_second_root_is_non_scalar():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        w = leaf(T, [3.0, 4.0])
        return (lambda: T.autograd.backward([(x * 2).sum(), w * 3])), [x, w]

    after_error(program)


def test_no_half_updated_grad_first_root_mismatch():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        w = leaf(T, [3.0, 4.0])
        return (lambda: T.autograd.backward([w * 3, (x * 2).sum()],
                                            [T.ones(3, dtype=T.float64), None])), [x, w]

    after_error(program)


_COUNT = ("jaxgrad bug: wrong number of grad_tensors/grad_outputs: torch says 'got 2 tensors and 1 "
          "gradients'")


def test_grad_tensors_wrong_count():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.backward([(x * 2).sum(), (x * 3).sum()],
                                            [T.tensor(1.0, dtype=T.float64)])), [x]

    after_error(program)


def test_grad_outputs_wrong_count():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.grad([(x * 2).sum(), (x * 3).sum()], x,
                                        [T.tensor(1.0, dtype=T.float64)])), [x]

    after_error(program)


def test_grad_tensors_wrong_type():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.backward([x * 2], [[1.0, 1.0]])), [x]

    after_error(program)


def test_backward_inputs_empty():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: (x * 2).sum().backward(inputs=[])), [x]

    after_error(program)


def test_backward_inputs_not_requiring_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        c = T.tensor([1.0, 2.0])
        return (lambda: (x * c).sum().backward(inputs=[x, c])), [x]

    after_error(program)


def test_autograd_grad_unused_input():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        z = leaf(T, [3.0])
        return (lambda: T.autograd.grad((x * 2).sum(), [x, z])), [x, z]

    after_error(program)


def test_autograd_grad_unused_input_explicit_false():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        z = leaf(T, [3.0])
        return (lambda: T.autograd.grad((x * 2).sum(), [z, x], allow_unused=False)), [x, z]

    after_error(program)


def test_autograd_grad_input_not_requiring_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        c = T.tensor([1.0, 2.0])
        return (lambda: T.autograd.grad((x * c).sum(), [x, c])), [x]

    after_error(program)


def test_autograd_grad_input_not_a_tensor():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return (lambda: T.autograd.grad((x * 2).sum(), [x, 3.0])), [x]

    after_error(program)


def test_implicit_gradient_for_integer_output():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = (x * 2).sum()
        return (lambda: T.autograd.grad(y, x, grad_outputs=T.tensor(1))), [x]

    same(lambda T: [attempt(program(T)[0])])


# --- graph freed ----------------------------------------------------------------------------

def test_second_backward_message():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = (x * x).sum()
        y.backward()
        g = x.grad.clone()
        return [attempt(y.backward), g, x.grad]

    ok(program)


def test_second_autograd_grad_message():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x.exp().sum()
        T.autograd.grad(y, x)
        return [attempt(lambda: T.autograd.grad(y, x)), x.grad]

    ok(program)


def test_saved_tensor_access_after_free():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        w = leaf(T, [3.0, 4.0])
        y = x * w
        before = y.grad_fn._saved_self
        y.sum().backward()
        return before, attempt(lambda: y.grad_fn._saved_self)

    ok(program)


# --- requires_grad misuse ----------------------------------------------------------------------

def test_requires_grad_attribute_true_on_nonleaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        return [attempt(lambda: setattr(y, "requires_grad", True)), y.requires_grad]

    ok(program)


def test_requires_grad_underscore_true_on_nonleaf_is_noop():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        return [attempt(lambda: y.requires_grad_(True)), attempt(lambda: y.requires_grad_())]

    ok(program)


def test_requires_grad_on_nonleaf_false():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        return [attempt(lambda: y.requires_grad_(False)),
                attempt(lambda: setattr(y, "requires_grad", False)), y.requires_grad]

    ok(program)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_requires_grad_underscore_on_integer_tensor(dtype):
    def program(T):
        t = T.tensor([1, 2], dtype=getattr(T, dtype))
        return [attempt(lambda: t.requires_grad_()), t.requires_grad]

    ok(program)


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_requires_grad_attribute_on_integer_tensor(dtype):
    def program(T):
        t = T.tensor([1, 2], dtype=getattr(T, dtype))
        return [attempt(lambda: setattr(t, "requires_grad", True)), t.requires_grad]

    ok(program)


@pytest.mark.parametrize("factory", ["tensor", "ones", "zeros", "arange", "full"])
def test_requires_grad_at_creation_of_integer_tensor(factory):
    def program(T):
        f = {
            "tensor": lambda: T.tensor([1, 2], requires_grad=True),
            "ones": lambda: T.ones(2, dtype=T.int64, requires_grad=True),
            "zeros": lambda: T.zeros(2, dtype=T.int32, requires_grad=True),
            "arange": lambda: T.arange(3, requires_grad=True),
            "full": lambda: T.full((2,), 3, requires_grad=True),
        }[factory]
        return [attempt(f)]

    ok(program)


def test_requires_grad_false_on_leaf_is_fine():
    def program(T):
        t = T.tensor([1, 2])
        t.requires_grad_(False)
        x = leaf(T, [1.0])
        x.requires_grad_(False)
        return t.requires_grad, x.requires_grad, x.is_leaf

    ok(program)


# --- hooks / retain_grad on tensors not requiring grad --------------------------------------------

def test_register_hook_not_requiring_grad():
    def program(T):
        c = T.tensor([1.0, 2.0])
        return [attempt(lambda: c.register_hook(lambda g: g))]

    ok(program)


def test_retain_grad_not_requiring_grad():
    def program(T):
        c = T.tensor([1.0, 2.0])
        return [attempt(c.retain_grad), c.retains_grad]

    ok(program)


def test_register_post_accumulate_grad_hook_nonleaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: (x * 2).register_post_accumulate_grad_hook(lambda t: None))]

    ok(program)


# --- in-place misuse ----------------------------------------------------------------------------

def test_inplace_on_leaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: x.add_(1)), attempt(lambda: x.__imul__(2)), x, x._version]

    ok(program)


def test_detach_inplace_on_view():
    def program(T):
        x = leaf(T, [1.0, 2.0, 3.0])
        v = (x * 2)[1:]
        return [attempt(v.detach_), v.requires_grad]

    ok(program)


def test_detach_inplace_on_view_of_plain_tensor():
    def program(T):
        b = T.arange(4.0)
        v = b.view(2, 2)
        return [attempt(v.detach_)]

    ok(program)


# --- conversions -------------------------------------------------------------------------------

def test_numpy_on_tensor_requiring_grad():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        y = x * 2
        return [attempt(x.numpy), attempt(y.numpy), y.detach().numpy().tolist()]

    ok(program)


@pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
def test_item_on_multi_element_tensor(shape):
    def program(T):
        t = T.zeros(*shape)
        return [attempt(t.item)]

    ok(program)


def test_item_on_one_element_requiring_grad_is_fine():
    def program(T):
        x = leaf(T, [[2.5]])
        return x.item(), (x * 2).item(), float(x), int(T.tensor([3]))

    ok(program)


def test_bool_of_multi_element_tensor():
    def program(T):
        return [attempt(lambda: bool(T.ones(2))), attempt(lambda: T.ones(2) and 1)]

    ok(program)


def test_len_of_0d_tensor():
    def program(T):
        return [attempt(lambda: len(T.tensor(1.0))), attempt(lambda: iter(T.tensor(1.0)))]

    ok(program)


def test_deepcopy_nonleaf():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: copy.deepcopy(x * 2)), copy.deepcopy(x).detach().clone()]

    ok(program)


def test_deepcopy_leaf_version():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        c = copy.deepcopy(x)
        return c, c is x, c.requires_grad

    ok(program)


def test_deepcopy_versions():
    def program(T):
        modified = T.tensor([1.0, 2.0])
        modified.add_(1)
        modified.add_(1)
        with_grad = leaf(T, [1.0, 2.0])
        with_grad.grad = T.ones(2, dtype=T.float64)
        copied = copy.deepcopy(with_grad)
        return (copy.deepcopy(modified), copy.deepcopy(T.ones(3)[1:]), copied, copied.grad,
                modified, with_grad)

    ok(program)


# --- assigning .grad ----------------------------------------------------------------------------

def test_assign_grad_wrong_shape():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: setattr(x, "grad", T.ones(3, dtype=T.float64))), x.grad]

    ok(program)


def test_assign_grad_wrong_dtype():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: setattr(x, "grad", T.ones(2))), x.grad]

    ok(program)


def test_assign_grad_wrong_type():
    def program(T):
        x = leaf(T, [1.0, 2.0])
        return [attempt(lambda: setattr(x, "grad", [1.0, 2.0])), x.grad]

    ok(program)


# --- errors during backward -----------------------------------------------------------------

def test_error_in_hook_mid_backward_partial_state():
    # torch does not roll back: leaves already accumulated keep their gradient
    def program(T):
        x = leaf(T, [1.0, 2.0])
        w = leaf(T, [3.0, 4.0])
        a = x * 2  # lower sequence number: runs after w's branch
        b = w * 3

        def boom(g):
            raise RuntimeError("hook failed")

        a.register_hook(boom)
        err = attempt(lambda: (a.sum() + b.sum()).backward())
        return err, x.grad, w.grad

    ok(program)


def test_view_size_incompatible_message():
    def program(T):
        return [attempt(lambda: T.arange(6.0).view(4)),
                attempt(lambda: T.arange(6.0).view(2, 3).t().view(6))]

    ok(program)
