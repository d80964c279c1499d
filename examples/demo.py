"""A tour of jaxgrad: PyTorch's autograd semantics on JAX. Run: python examples/demo.py"""

import jaxgrad as torch  # the same program runs with `import torch`

# leaves, non-leaves and retained gradients
x = torch.ones((2, 2), requires_grad=True)
y = x * 2
y.retain_grad()
z = y ** 2
z.backward(torch.ones_like(z))
print("x.is_leaf:", x.is_leaf, " y.grad_fn:", y.grad_fn)
print("x.grad:", x.grad)
print("y.grad:", y.grad)

# hooks see (and may replace) intermediate gradients
grads = {}
w1 = torch.tensor([[1.0], [2.0]], requires_grad=True)
w2 = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
z1 = torch.mm(w1, torch.tensor([[1.0]]))
z1.register_hook(lambda g: grads.__setitem__("z1", g))
y2 = torch.sigmoid(torch.mm(w2, torch.sigmoid(z1)))
loss = 0.5 * ((y2 - torch.tensor([[1.0], [0.0]])) ** 2).sum()
loss.backward()
print("grad of z1 seen by a hook:", grads["z1"])

# higher-order gradients
x = torch.tensor(2.0, requires_grad=True)
(g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
(gg,) = torch.autograd.grad(g, x)
print("d/dx x^3 =", g, " d2/dx2 =", gg)

# .data vs detach(): torch's classic pitfall, reproduced
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.sigmoid()
y.data.zero_()
y.sum().backward()
print("after y.data.zero_(): x.grad =", x.grad, "(silently wrong, as in torch)")
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.sigmoid()
y.detach().zero_()
try:
    y.sum().backward()
except RuntimeError as err:
    print("after y.detach().zero_():", str(err)[:80], "...")
