"""Layer 3: the functions users call, made from the op table and written on top of it.

Generated op functions (``opgen``), argument handling, hand-written compositions by theme,
creation, random, foreach, ``Parameter``, and ``Tensor``'s methods attached once
(``methods.attach_tensor_methods``). Imports only the layers below.
"""
