"""Train an MLP on scikit-learn's bundled 8x8 digits with jaxgrad, or with torch for comparison.

    python examples/train_mlp.py                  # jaxgrad
    python examples/train_mlp.py --compile        # each training step as one XLA program
    python examples/train_mlp.py --backend torch  # the very same script on PyTorch

The data ships inside scikit-learn (no download). Along the way, tensor hooks and module hooks
collect intermediate-gradient statistics, which are printed after each epoch. The hooks record
through ``record`` (``jaxgrad.compiler.callback`` on jaxgrad), so they observe every step of a
compiled step too (torch has no such callback: it records directly).
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm


def load_data(seed: int):
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    return train_test_split(x, digits.target.astype(np.int64), test_size=0.25,
                            random_state=seed, stratify=digits.target)


def make_model(T, seed: int):
    """64-128-64-10 MLP; both backends start from the same numpy-drawn weights."""
    nn = T.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    rng = np.random.RandomState(seed)
    with T.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(p.shape[-1] if p.ndim > 1 else p.shape[0])
            p.copy_(T.tensor(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
    return model


class GradientStats:
    """Collects per-layer statistics with module forward hooks, full backward hooks and a
    tensor hook on each ReLU output (an intermediate gradient torch/jaxgrad would not keep)."""

    def __init__(self, model, T) -> None:
        self.rows: dict[str, list[float]] = {}
        compiler = getattr(T, "compiler", None)
        # jaxgrad's callback runs fn on every call of a compiled step; torch's hooks run eagerly
        self.record = getattr(compiler, "callback", None) or (lambda fn, *args: fn(*args))
        for name, module in model.named_children():
            kind = type(module).__name__
            if kind == "Linear":
                module.register_full_backward_hook(self._grad_output_hook(f"{name}:{kind}"))
            if kind == "ReLU":
                module.register_forward_hook(self._activation_hook(f"{name}:{kind}"))

    def _record(self, key: str, value) -> None:
        self.rows.setdefault(key, []).append(float(value))

    def _grad_output_hook(self, label: str):
        def hook(module, grad_input, grad_output):
            self.record(lambda v: self._record(f"{label} |grad_output|", v),
                        grad_output[0].norm())
        return hook

    def _activation_hook(self, label: str):
        def hook(module, inputs, output):
            self.record(lambda v: self._record(f"{label} active fraction", v),
                        (output > 0).float().mean())
            if output.requires_grad:
                output.register_hook(lambda g: self.record(
                    lambda v: self._record(f"{label} |grad| (tensor hook)", v), g.norm()))
        return hook

    def report(self) -> str:
        lines = [f"    {key:34s} mean {np.mean(v):.4f}" for key, v in sorted(self.rows.items())]
        self.rows.clear()
        return "\n".join(lines)


def evaluate(T, model, x, y) -> float:
    model.eval()
    with T.no_grad():
        logits = model(T.tensor(x))
    model.train()
    return float((logits.argmax(1) == T.tensor(y)).float().mean())


def train(backend: str, epochs: int, batch: int, lr: float, seed: int,
          compile: bool = False) -> float:
    T = importlib.import_module(backend)
    x_train, x_test, y_train, y_test = load_data(seed)
    model = make_model(T, seed)
    stats = GradientStats(model, T)
    optimizer = T.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def step(x, y):
        loss = T.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    if compile:
        step = T.compile(step)
    order = np.random.RandomState(seed)
    start = time.perf_counter()
    for epoch in range(epochs):
        perm = order.permutation(len(x_train))
        losses = []
        steps = range(0, len(perm), batch)
        for i in tqdm(steps, desc=f"[{backend}] epoch {epoch + 1}/{epochs}", leave=False):
            idx = perm[i:i + batch]
            loss = step(T.tensor(x_train[idx]), T.tensor(y_train[idx]))
            losses.append(float(loss))
        accuracy = evaluate(T, model, x_test, y_test)
        print(f"[{backend}] epoch {epoch + 1}: loss {np.mean(losses):.4f}, "
              f"test accuracy {accuracy:.4f}")
        print(stats.report())
    print(f"[{backend}] {epochs} epochs in {time.perf_counter() - start:.1f}s")
    return accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=["jaxgrad", "torch"], default="jaxgrad")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile", action="store_true",
                        help="compile each training step (jaxgrad.compile / torch.compile)")
    args = parser.parse_args()
    accuracy = train(args.backend, args.epochs, args.batch, args.lr, args.seed, args.compile)
    print(f"final test accuracy ({args.backend}): {accuracy:.4f}")


if __name__ == "__main__":
    main()
