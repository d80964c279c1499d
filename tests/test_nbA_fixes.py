"""Fixes found while writing notebooks 01 and 03 (intermediate gradients, hooks in depth)."""

from __future__ import annotations

from differential import leaf, ok


def test_backward_hooks_dict_is_an_ordered_dict_as_printed_by_seed_002():
    """Seed 002 In[12] prints ``z._backward_hooks``: torch shows ``OrderedDict([(id, fn)])``
    (retain_grad is not in it since torch 2.0); jaxgrad showed ``HookDict(...)``."""

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


def test_module_hook_dicts_are_ordered_dicts():
    def program(T):
        m = T.nn.Linear(2, 2)
        m.register_forward_hook(lambda *a: None)
        m.register_forward_pre_hook(lambda *a: None)
        m.register_full_backward_hook(lambda *a: None)
        m.register_full_backward_pre_hook(lambda *a: None)
        return [type(getattr(m, name)).__name__ for name in (
            "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")]

    ok(program)
