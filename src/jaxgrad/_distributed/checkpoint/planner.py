"""torch's default planners (``torch.distributed.checkpoint.default_planner``): the only ones
:func:`~jaxgrad.distributed.checkpoint.save` and ``load`` run."""

from __future__ import annotations

from typing import Any

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultSavePlanner:
    """torch's default save planner: the only planner :func:`save` runs (its arguments are
    accepted for compatibility; replicated tensors are always written once).

    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> dcp.DefaultSavePlanner().flatten_state_dict
    True
    """

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 dedup_replicated_tensors: bool | None = None,
                 dedup_save_to_lowest_rank: bool = False,
                 enable_plan_caching: bool = False) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.enable_plan_caching = enable_plan_caching


class DefaultLoadPlanner:
    """torch's default load planner: ``allow_partial_load=True`` skips the state dict's keys
    the checkpoint lacks (instead of raising).

    >>> import jaxgrad.distributed.checkpoint as dcp
    >>> dcp.DefaultLoadPlanner(allow_partial_load=True).allow_partial_load
    True
    """

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 allow_partial_load: bool = False) -> None:
        self.flatten_state_dict = flatten_state_dict
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = allow_partial_load


def resolve_planner(given: Any, kind: type) -> Any:
    """The planner to run: ``given``, or a new ``kind`` (a planner of another type raises)."""
    if given is None:
        return kind()
    if type(given) is not kind:
        raise NotImplementedError(f"jaxgrad.distributed.checkpoint runs torch's default planner "
                                  f"only ({kind.__name__}), not {type(given).__name__}")
    return given
