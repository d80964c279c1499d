"""torch's Distributed Checkpoint (``torch.distributed.checkpoint``) on JAX's multi-controller
runtime: every rank calls ``save`` / ``load`` with its state dict (SPMD) and touches only
the parts of each tensor it addresses (the public namespace is
``jaxgrad.distributed.checkpoint``).

- :mod:`.metadata`: torch's metadata types, :class:`CheckpointException`, the JSON form;
- :mod:`.planner`: torch's default planners;
- :mod:`.flatten`: state dicts flattened as torch's planner flattens them;
- :mod:`.layout`: which rank writes which shard, which saved chunks a rank reads back;
- :mod:`.filesystem`: the checkpoint directory and its files (the format);
- :mod:`.exchange`: the ranks, and what passes between them (metadata, failures);
- :mod:`.api`: ``save`` and ``load``.
"""
