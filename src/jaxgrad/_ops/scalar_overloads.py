"""torch's ``.Scalar`` overloads of the four arithmetic ops (``add.Scalar``, ``sub.Scalar``,
``mul.Scalar``, ``div.Scalar``): what torch's C++ runs for ``tensor + number``, and what its
in-place foreach ops run on each tensor with a number.

The number (and add/sub's ``alpha``) is a traced operand, saved as a Scalar where a formula names
it, and each row records that overload's node (``AddBackward1``, not the ``AddBackward0`` of
Python's ``t + 2``, where torch's parser wraps the number as a tensor). The rows compute in their
input's dtype: callers bring the input to torch's result type with the number first
(``_functions.pointwise.with_scalar``: an integer tensor times ``0.5`` is in the default float
dtype), or check that an in-place result can be cast back (the foreach ops).
"""

from __future__ import annotations

from ._table import Op, identity_grad

ADD_SCALAR = Op("add", "AddBackward1", lambda x, other, alpha: x + alpha * other,
                aux=("other", "alpha"), promote="common", grads={"self": identity_grad})
SUB_SCALAR = Op("sub", "SubBackward1", lambda x, other, alpha: x - alpha * other,
                aux=("other", "alpha"), promote="common", grads={"self": identity_grad})
MUL_SCALAR = Op("mul", "MulBackward1", lambda x, other: x * other, aux=("other",),
                promote="common", grads={"self": lambda grad, other: grad * other},
                grad_nodes={"self": "MulBackward1"})
DIV_SCALAR = Op("div", "DivBackward1", lambda x, other: x / other, aux=("other",),
                promote="common", grads={"self": lambda grad, other: grad / other})
