"""torch.distributed on JAX's multi-controller runtime: the process group and the collectives
(layer L4; the public namespace is ``jaxgrad.distributed``)."""
