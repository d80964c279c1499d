"""Layer 4a: torch.func on JAX transformations, JAX functions as ops, torch's pytrees."""
