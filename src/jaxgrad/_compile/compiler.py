"""``jaxgrad.compile``: a whole step (forward, backward, hooks, optimizer) as one XLA program.

The step's Python runs once per *signature* with every tensor it reaches holding a JAX tracer;
``jax.jit`` turns what it computed into one executable, and later calls with the same signature
run that executable only. The state outside the step is found by ``state.StateWalk``,
passed in as inputs, and written back by the ``program.Program`` the trace recorded, so
parameters, ``.grad``, optimizer state, buffers, the RNG key and scheduler-set learning rates end
each call as the eager step would leave them.

A signature is the walk's key (shapes, dtypes, which ``.grad`` and state entries exist, module
``training`` flags, hooks, static Python values) plus the grad mode and default dtype. Python that
needs a tensor's value (``loss.item() > 1``) cannot be traced: by default (``fullgraph=False``, as
torch.compile) that call and later calls of the signature run eagerly after a warning naming the
line; ``fullgraph=True`` raises :class:`GraphBreak` instead.
"""

from __future__ import annotations

import functools
import traceback
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp

from .._core import tracing as _tracing
from .._core.dtypes import get_default_dtype
from .._core.epoch import EPOCH, global_hooks
from .._core.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .._core.graph import FREED_MESSAGE, Node
from .._core.jax_setup import jit, x64_scope
from .._core.storage import scatter
from .._core.tensor import Tensor
from .._core.transform_stack import under_transform
from .._engine import autocast as _autocast
from .._functions import random as _random
from . import program as _compile_program
from .state import (
    NO_POLICY,
    TENSOR_KEY,
    StateWalk,
    Unsupported,
    WalkMemo,
    WalkPolicy,
    make_template,
)
from .watch import WHOLE, Watch

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_VALUE_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError)


class Config:
    """Settings of ``jaxgrad.compile`` (torch's ``torch._dynamo.config`` counterparts).

    ``recompile_limit``: how many signatures one compiled function traces; beyond it, calls with
    new signatures run eagerly after a warning (torch's ``recompile_limit``, 8).

    >>> import jaxgrad
    >>> jaxgrad.compiler.config.recompile_limit
    8
    """

    recompile_limit: int = 8


config = Config()


class GraphBreak(RuntimeError):
    """Raised by a ``fullgraph=True`` compiled step that cannot be traced as one program."""


class _Relearn(Exception):
    """A trace used state its walk had learned to skip: the call is traced again."""


class _Warmup(Exception):
    """The first trace of a step that creates the state it will then keep (the first ``.grad``,
    an optimizer's state): that call runs eagerly, and the next one traces the steady state."""


_compiled_functions: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Forget every compiled function's traces (torch's ``torch.compiler.reset``).

    >>> import jaxgrad
    >>> jaxgrad.compiler.reset()
    """
    for compiled in list(_compiled_functions):
        compiled._cache.clear()
        compiled._memo = None


def is_compiling() -> bool:
    """True while ``jaxgrad.compile`` traces a step (torch's ``torch.compiler.is_compiling``).

    >>> import jaxgrad
    >>> jaxgrad.compiler.is_compiling()
    False
    >>> jaxgrad.compile(lambda: jaxgrad.compiler.is_compiling())()
    True
    """
    return _tracing.current() is not None


def callback(fn: Callable[..., Any], *args: Any) -> None:
    """Call ``fn(*args)`` now when eager, and on every call of a compiled step when traced
    (``jax.debug.callback``): tensors reach ``fn`` as concrete tensors. Use it in hooks that only
    record values; plain Python side effects in a traced step happen once per trace.

    >>> import jaxgrad
    >>> seen = []
    >>> @jaxgrad.compile
    ... def step(x):
    ...     y = x * 2
    ...     jaxgrad.compiler.callback(lambda t: seen.append(t.tolist()), y)
    ...     return y
    >>> _ = step(jaxgrad.ones(2)); _ = step(jaxgrad.ones(2))
    >>> seen
    [[2.0, 2.0], [2.0, 2.0]]
    """
    leaves = [a._value if isinstance(a, Tensor) else a for a in args]
    if not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
        fn(*args)
        return
    trace = _tracing.current()
    if trace is not None:
        if trace.over_processes:  # (XLA orders host callbacks only in a one-device program)
            raise _tracing.ProgramOverProcesses(None)
        trace.callbacks += 1
    is_tensor = [isinstance(a, Tensor) for a in args]

    def host(*values: Any) -> None:
        fn(*(Tensor._make(jax.numpy.asarray(v)) if t else v for v, t in zip(values, is_tensor)))

    jax.debug.callback(host, *leaves, ordered=True)


class _Entry:
    """One signature's executable and the program that writes its results back."""

    __slots__ = ("collectives_on_host", "eager", "jitted", "key", "over", "per_call_python",
                 "policy", "program", "roots", "with_vjp")

    def __init__(self, key: tuple, policy: WalkPolicy) -> None:
        self.key = key
        self.policy = policy  # what the walks of this signature's trace followed
        self.eager = False
        self.per_call_python = False
        self.jitted = None
        self.with_vjp = None  # (backward, its cells) for results with history (_backward_of)
        self.program: _compile_program.Program | None = None
        self.roots: tuple | None = None  # the call's roots, while a call runs
        # the program over processes this signature runs as (it makes collectives), if any;
        # collectives_on_host: its collectives stay host calls instead (see _over_processes)
        self.over: Any = None
        self.collectives_on_host = False


class CompiledFunctionBackward(Node):
    """The grad_fn of a compiled function's results (torch's name): the VJP of its XLA program
    at the inputs of the call that made them."""

    __slots__ = ("backward", "bases", "inputs")

    def apply(self, grads: list, create_graph: bool, wanted: tuple | None = None) -> list:
        if self.inputs is None:
            raise RuntimeError(FREED_MESSAGE)
        if create_graph:
            raise RuntimeError("jaxgrad.compile: double backward through a compiled function is "
                               "not supported; compute higher-order gradients inside the "
                               "compiled function or without jaxgrad.compile")
        cts = [_base_cotangent(g, shape, dtype, base)
               for g, (shape, dtype), base in zip(grads, self.out_meta, self.bases)]
        return [Tensor._make(g) for g in self.backward(*self.inputs, cts)]

    def release_variables(self) -> None:
        self.inputs = None


class CompiledFunction:
    """A step compiled by :func:`compile`; call it as the original function."""

    _jaxgrad_opaque = True  # the state walk does not look inside
    # what a signature's first call turns into eager calls (others propagate); a quiet one
    # (cached_transforms' subclass) warns of nothing and runs a signature eagerly after its trace
    # where ``_runs_eagerly`` says so
    fallback_errors: tuple[type[BaseException], ...] = (*_VALUE_ERRORS, Unsupported)
    quiet = False
    # a training step's first call, which creates .grad and optimizer state, runs eagerly (once)
    warms_up = True

    def __init__(self, fn: Callable[..., Any], fullgraph: bool, dynamic: bool | None) -> None:
        self._fn = fn
        self._fullgraph = fullgraph
        self._dynamic = dynamic  # None: numbers in the arguments become traced once they change
        self._traced_numbers = dynamic is True
        self._last_numbers: tuple | None = None
        # what the traces taught the walks (see state.WalkPolicy); the objects it names by id are
        # kept alive; the attributes of each user object and the code any trace used
        self._policy = NO_POLICY
        self._policy_objects: dict[int, Any] = {}
        self._ever_read: dict[int, set] = {}
        self._ever_items: dict[int, Any] = {}  # user list -> (indices, length) read, or WHOLE
        self._ever_ran: set = set()
        self._relearns = 0  # traces of this call redone because the policy changed
        self._warmed_up = not self.warms_up
        self._state_specialized = False  # a traced one failed to trace: numbers stay constants
        self._last_seen_key: tuple | None = None
        self._cache: dict[tuple, _Entry] = {}
        self._warned: set = set()
        self._last_key: tuple | None = None
        self._memo: WalkMemo | None = None
        functools.update_wrapper(self, fn, updated=())  # a module's __dict__ is not copied
        self._orig_mod = fn  # torch's OptimizedModule name for what was compiled
        _compiled_functions.add(self)

    def __getattr__(self, name: str) -> Any:
        """Attributes of what was compiled (``compiled_model.parameters()``, ``.eval()``), as
        torch's OptimizedModule forwards them."""
        if name.startswith("__") or name in ("_fn", "_orig_mod"):
            raise AttributeError(name)
        return getattr(self._orig_mod, name)

    @property
    def _name(self) -> str:
        return getattr(self._fn, "__qualname__", None) or type(self._fn).__name__

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _tracing.current() is not None:  # inside another compiled step: part of its trace
            return self._fn(*args, **kwargs)
        _random.default_generator.key()  # (made now if still lazy: its key is traced state)
        state_roots, arg_roots = (self._fn, _random.default_generator), (args, kwargs)
        if self._number_arguments(args, kwargs):
            arg_roots = (list(args), dict(kwargs))  # containers where tracers can be put
        walk, entry = self._find(state_roots, arg_roots)
        if entry is None or entry.eager:  # inside the user's own JAX trace, or eager
            return self._fn(*args, **kwargs)
        entry.roots = (state_roots, arg_roots)  # for a trace (now, or jax's on a new sharding)
        inputs = walk.inputs()
        try:
            outputs = entry.jitted(*inputs)
            if self.quiet and entry.with_vjp is None and self._runs_eagerly(entry):
                entry.jitted, entry.eager = None, True
                return self._fn(*args, **kwargs)
            if entry.program.diff_outputs and entry.with_vjp is None:
                entry.with_vjp = self._backward_of(entry, inputs)
        except _Warmup:  # a first call creating state: eager; the next call traces
            self._cache.pop(entry.key, None)
            return self._fn(*args, **kwargs)
        except _tracing.ProgramOverProcesses as request:  # a collective: trace it again as
            self._over_processes(entry, request.program, inputs)  # one program over processes
            return self(*args, **kwargs)
        except _Relearn:  # walk and trace again, by what this trace taught (never compiled)
            self._cache.pop(entry.key, None)
            self._relearns += 1
            try:
                return self(*args, **kwargs)
            finally:
                self._relearns -= 1
        except self.fallback_errors as error:
            if entry.program is not None:
                raise
            entry.jitted = None
            entry.eager = True
            if self._traced_numbers and self._dynamic is None:  # automatic dynamic failed:
                self._traced_numbers, self._dynamic = False, False  # specialize, as torch
                self._cache.pop(entry.key, None)
                return self(*args, **kwargs)
            if self._policy.dynamic and not self._state_specialized:  # the same for the state
                self._policy = self._policy.but(dynamic={})
                self._state_specialized = True
                self._cache.pop(entry.key, None)
                return self(*args, **kwargs)
            self._graph_break(error)
            return self._fn(*args, **kwargs)
        finally:
            entry.roots = None
        program = entry.program
        replay = program.apply(walk, outputs)
        if program.diff_outputs and entry.with_vjp[1]:  # results with history, as torch's
            _connect(program, walk, replay, *entry.with_vjp, inputs)
        if program.spent_outputs:
            _spent(replay.created[i] for i in program.spent_outputs)
        self._remember(program, walk, replay, state_roots, entry.policy)
        return replay.result

    def _over_processes(self, entry: _Entry, program: Any, inputs: tuple) -> None:
        """Make ``entry`` run as ``program`` (see ``ProgramOverProcesses``); where it cannot (a
        second group's collective, inputs already spanning processes, an ordered host callback),
        its collectives become host calls."""
        if entry.over is None and program is not None and program.accepts(inputs):
            entry.over = program
            entry.jitted = program.jit(functools.partial(self._trace, entry))
        else:
            entry.over, entry.collectives_on_host = None, True
            entry.jitted = jit(functools.partial(self._trace, entry))

    def _runs_eagerly(self, entry: _Entry) -> bool:
        """Whether a quiet compiled function runs this signature eagerly after its trace."""
        return False

    def _backward_of(self, entry: _Entry, inputs: tuple) -> tuple[Callable, list[int]]:
        """The VJP of the step's differentiable results with respect to the cells of the tensors
        requiring grad, as one jitted function of the call's inputs and the cotangents. The step
        is first traced to a jaxpr (a pure function of the inputs: the objects it came from may
        have changed by the time backward runs); backward recomputes the forward inside it."""
        make_jaxpr = entry.over.make_jaxpr if entry.over else jax.make_jaxpr
        with x64_scope(), under_transform("eager"):  # Note [Function under a transform]
            closed = make_jaxpr(functools.partial(self._trace, entry))(*inputs)
        program = entry.program
        positions = [p for p, _ in program.diff_outputs]
        used = _used_inputs(closed.jaxpr, positions)  # torch: unused parameters get no .grad
        diff_cells = [i for i in program.diff_inputs if i in used]
        step = jax.extend.core.jaxpr_as_fun(closed)

        def backward(cells: list, numbers: list, arrays: list, cotangents: list) -> tuple:
            def on_diff(diff: list) -> tuple[list, list]:
                full = list(cells)
                for i, d in zip(diff_cells, diff):
                    full[i] = d
                outs = step(*full, *numbers, *arrays)
                kept = outs[len(outs) - entry.over.kept_results:] if entry.over else []
                return [outs[p] for p in positions], kept

            # (a program over processes returns what it needs computed: its collectives run on
            # every process, whatever this one's gradients use)
            _, pull, kept = jax.vjp(on_diff, [cells[i] for i in diff_cells], has_aux=True)
            return pull(cotangents)[0], kept

        jitted = (entry.over.jit if entry.over else jit)(backward)
        return (lambda *args: jitted(*args)[0]), diff_cells

    def _number_arguments(self, args: tuple, kwargs: dict) -> bool:
        """Whether this call's Python numbers are traced: always with ``dynamic=True``; with
        ``dynamic=None`` once one changed between calls (torch's automatic dynamic)."""
        numbers = tuple((i, type(v), v) for i, v in (*enumerate(args), *kwargs.items())
                        if type(v) is int or type(v) is float)
        if not numbers:
            return False
        if (self._dynamic is None and not self._traced_numbers
                and self._last_numbers is not None and numbers != self._last_numbers
                and [n[:2] for n in numbers] == [n[:2] for n in self._last_numbers]):
            self._traced_numbers = True
        self._last_numbers = numbers
        return self._traced_numbers

    def _find(self, state_roots: tuple, arg_roots: tuple) -> tuple[StateWalk, _Entry | None]:
        """This call's walk and its signature's entry (None: tensors hold a foreign tracer)."""
        modes = (is_grad_enabled(), is_inference_mode_enabled(), get_default_dtype(),
                 global_hooks(), _autocast.mode_key() if _autocast.active else ())
        memo, self._memo = self._memo, None
        link = None
        if memo is not None and memo.epoch == EPOCH.value and memo.still_valid():
            walk = StateWalk.resume(memo, arg_roots, type(arg_roots[0]) is list)
            if walk.has_foreign_tracers:
                return walk, None
            link = (walk.arg_key(), modes)
            entry = memo.template.next_entries.get(link)
            if entry is not None and self._cache.get(entry.key) is entry:  # (not one dropped
                return walk, entry  # since: a trace that taught the walk, done again)
        walk, key = self._walk(state_roots, arg_roots, modes)
        if walk.has_foreign_tracers:
            return walk, None
        entry = self._cache.get(key)
        if entry is None and self._learn_dynamic_numbers(walk, key):
            walk, key = self._walk(state_roots, arg_roots, modes)
            entry = self._cache.get(key)
        self._last_seen_key = key
        entry = entry or self._new_entry(key)
        if link is not None and not entry.eager and entry.policy is memo.template.policy:
            memo.template.next_entries[link] = entry
        return walk, entry

    def _walk(self, state_roots: tuple, arg_roots: tuple, modes: tuple) -> tuple[StateWalk, tuple]:
        """A fresh walk of this call's roots, and the signature it gives."""
        walk = StateWalk(state_roots, arg_roots, arg_numbers=type(arg_roots[0]) is list,
                         policy=self._policy)
        return walk, (walk.state_key(), walk.arg_key(), modes)

    def _learn_dynamic_numbers(self, walk: StateWalk, key: tuple) -> bool:
        """When ``key`` differs from the last call's only in the values of numbers held by
        dicts, lists or objects, trace those numbers from now on (torch.compile's automatic
        dynamic): a counter the step increments is not a new program per value."""
        if self._state_specialized or self._dynamic is False:
            return False
        changed = _changed_numbers(walk, key, self._last_seen_key)
        for obj, entry_key in changed:
            self._mark_dynamic(obj, entry_key)
        return bool(changed)

    def _learn_written_numbers(self, walk: StateWalk, program: _compile_program.Program) -> None:
        """A number the step itself changes (``history["step"] += 1``), or a list or dict of
        traced numbers it stores (``log["lrs"] = [group["lr"]]``), will differ on the next call:
        trace it from then on, so that the steady state is the next signature."""
        if self._state_specialized or self._dynamic is False:
            return
        for what, index, key, code in program.changes:
            if walk.kinds[index] not in _NUMBER_HOLDERS or what not in ("set", "list"):
                continue
            before = dict(walk.entries[index])
            if what == "list" and len(code) != len(before):
                continue  # grown or shrunk: positions do not name the same numbers
            after = {key: code} if what == "set" else dict(enumerate(code))
            for entry_key, new in after.items():
                old = before.get(entry_key)
                if _holds_traced_numbers(program, new) or (
                        old != new and old is not None and _is_number_constant(old)
                        and _is_number_constant(new) and old[1] is new[1]):
                    self._mark_dynamic(walk.objects[index], entry_key)

    def _mark_dynamic(self, obj: Any, entry_key: Any) -> None:
        policy = self._policy
        dynamic = dict(policy.dynamic)
        dynamic[id(obj)] = dynamic.get(id(obj), frozenset()) | {entry_key}
        self._policy_objects[id(obj)] = obj
        self._policy = policy.but(dynamic=dynamic)

    def _learn_uses(self, entry: _Entry, walk: StateWalk, watch: Watch, leaked: set) -> bool:
        """Learn from a trace which attributes of user objects, which items of user lists and
        which functions it used: what no trace used is not walked from now on (see ``watch``).
        True when this trace used something its own walk skipped (its program cannot stand)."""
        skipped, policy = entry.policy, self._policy
        items, void = self._learn_list_uses(skipped, watch, leaked)
        unread = dict(policy.unread)
        for obj in watch.objects:
            names = watch.accessed[id(obj)]
            ever = self._ever_read.setdefault(id(obj), set())
            ever |= names
            self._policy_objects[id(obj)] = obj
            was_skipped = skipped.unread.get(id(obj), frozenset())
            void = void or bool(was_skipped and (WHOLE in names or names & was_skipped))
            unused = frozenset() if WHOLE in ever else frozenset(
                name for name in vars(obj) if name not in ever)
            if unused:
                unread[id(obj)] = unused
            else:
                unread.pop(id(obj), None)
        unrun = policy.unrun
        if watch.ran is not None:
            walked = {obj.__code__ for obj, kind in zip(walk.objects, walk.kinds)
                      if kind == "function"}
            self._ever_ran |= watch.ran & (walked | skipped.unrun)
            void = void or bool(watch.ran & skipped.unrun)
            unrun = (unrun | walked) - self._ever_ran
        if unread != policy.unread or unrun != policy.unrun or items != policy.items:
            self._policy = policy.but(unread=unread, unrun=unrun, items=items)
        return void

    def _learn_list_uses(self, skipped: WalkPolicy, watch: Watch,
                         leaked: set) -> tuple[dict, bool]:
        """The policy's ``items`` after this trace's uses of the watched lists, and whether the
        trace used an item (or the length) its walk skipped. ``leaked``: lists walked whole
        from now on (a stand-in the step stored, or a list no longer held in one place)."""
        items, void = dict(self._policy.items), False
        for key in leaked:
            self._ever_items[key] = WHOLE
            items.pop(key, None)
        for lst, *_ in watch.lists:
            uses, key = watch.list_uses[id(lst)], id(lst)
            self._policy_objects[key] = lst
            walked = skipped.items.get(key)
            whole = uses.whole or key in leaked
            if walked is not None:
                void = void or whole or bool(uses.indices - walked[0]) or (
                    uses.length and not walked[1])
            ever = self._ever_items.get(key, (frozenset(), False))
            if whole or ever is WHOLE:
                self._ever_items[key] = WHOLE
                items.pop(key, None)
                continue
            ever = self._ever_items[key] = (ever[0] | uses.indices, ever[1] or uses.length)
            items[key] = ever
        return items, void or bool(leaked)

    def _remember(self, program: _compile_program.Program, walk: StateWalk,
                  replay: Any, state_roots: tuple, policy: WalkPolicy) -> None:
        """Keep the state part of the next call's walk (see ``state.WalkMemo``)."""
        if program.template is False:  # the program's first write-back: name what it made
            fresh = StateWalk(state_roots, (), policy=policy)
            program.template = make_template(fresh, walk, replay.created,
                                             replay.new_cells, replay.new_counters)
        if program.template is not None:
            self._memo = program.template.memo(walk, replay.created, replay.new_cells,
                                               replay.new_counters, EPOCH.value)

    def _new_entry(self, key: tuple) -> _Entry:
        entry = _Entry(key, self._policy)
        if len(self._cache) >= config.recompile_limit:
            self._warn_recompile_limit(key)
            entry.eager = True
            return entry  # not cached: a later signature may be a cached one again
        entry.jitted = jit(functools.partial(self._trace, entry))
        self._cache[key] = entry
        self._last_key = key
        return entry

    def _trace(self, entry: _Entry, cells: list, numbers: list, arrays: list) -> list:
        """The traced step: tracers in, the step run, its effects recorded, state put back."""
        state_roots, arg_roots = entry.roots
        args, kwargs = arg_roots
        walk = StateWalk(state_roots, arg_roots, snapshot=True,
                         arg_numbers=type(arg_roots[0]) is list, policy=entry.policy)
        before_arrays = [c.array for c in walk.cells]
        before_versions = [c.value for c in walk.counters]
        installed = walk.install(cells, numbers, arrays)
        # the user objects and lists of the state (the arguments' are walked whole every call)
        watch = Watch([obj for i, obj in enumerate(walk.objects[:walk.prefix[0]])
                       if walk.kinds[i] == "attrs" and i in walk.masks],
                      [held for held in _held_once(walk)
                       if self._ever_items.get(id(held[0])) is not WHOLE])
        # lists walked by items that this trace cannot watch (now held in two places): whole
        watched = {id(lst) for lst, *_ in watch.lists}
        leaked = {id(obj) for obj, kind in zip(walk.objects, walk.kinds)
                  if kind == "list" and id(obj) in entry.policy.items and id(obj) not in watched}
        try:
            with _tracing.tracing(self._name, self._warned, self.quiet) as trace, watch:
                trace.over_processes = entry.over is not None
                trace.collectives_on_host = entry.collectives_on_host
                result = self._fn(*args, **kwargs)
            entry.per_call_python = trace.per_call_python
            post = StateWalk(state_roots, arg_roots + (result,), pre=walk, installed=installed,
                             arg_numbers=type(arg_roots[0]) is list, policy=entry.policy)
            leaked |= watch.leaked(post.objects)
            program, outputs = _compile_program.build(walk, post, cells, before_versions)
            if entry.program is None:
                self._learn_written_numbers(walk, program)
            if is_grad_enabled():
                _compile_program.find_differentiable(program, walk, post)
        finally:
            walk.restore(before_arrays, before_versions)
        void = self._learn_uses(entry, walk, watch, leaked) if entry.program is None or leaked \
            else False
        if void or (entry.program is None and self._policy is not entry.policy
                    and self._relearns < 2):
            raise _Relearn  # a first trace that taught the walk something is done again
        if entry.program is None and not self._warmed_up:
            self._warmed_up = True
            if _compile_program.adds_state(program, walk):
                raise _Warmup
        entry.program = program
        return outputs

    def _graph_break(self, error: Exception) -> None:
        where = _user_line(error)
        reason = (f"jaxgrad.compile: {where} needs a tensor's value while the step is traced "
                  f"({type(error).__name__}); values exist only when the compiled step runs. "
                  "Move it out of the step, compute it with tensor ops (jaxgrad.where), or let "
                  "this signature run eagerly (fullgraph=False)."
                  if isinstance(error, _VALUE_ERRORS) else
                  f"jaxgrad.compile: {where}: {error}")
        if self._fullgraph:
            raise GraphBreak(reason) from error
        if where in self._warned:  # once per line of the step
            return
        self._warned.add(where)
        warnings.warn(f"{reason} Running '{self._name}' eagerly for this signature.",
                      UserWarning, stacklevel=4)

    def _warn_recompile_limit(self, key: tuple) -> None:
        if "recompile_limit" in self._warned:
            return
        self._warned.add("recompile_limit")
        last = self._last_key
        reason = ("the state's structure (shapes, .grad, optimizer state, flags, hooks, "
                  "values of the Python objects it reads) changed"
                  if last is None or key[0] != last[0] else
                  "the arguments' shapes, dtypes or values changed" if key[1] != last[1] else
                  "grad mode, the default dtype or the global hooks changed")
        code = getattr(self._fn, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
        warnings.warn(
            f"jaxgrad.compile hit config.recompile_limit ({config.recompile_limit})\n"
            f"   function: '{self._name}'{where}\n   last reason: {reason}\n"
            "To log all recompilation reasons, compare the signatures of the calls. New "
            "signatures of this function now run eagerly.", UserWarning, stacklevel=4)


_NUMBER_HOLDERS = ("dict", "list", "attrs")


def _held_once(walk: StateWalk) -> list[tuple[list, Any, str, Any]]:
    """``(list, holder, holder's kind, key)`` of each user list of the walk's state part that
    exactly one walked place holds, a dict entry, an attribute or a function's global or
    closure cell (a list held elsewhere too could be used past its stand-in)."""
    state, kinds = walk.prefix[0], walk.kinds
    places: dict[int, list] = {}
    for j, (kind, meta, entries) in enumerate(zip(kinds, walk.metas, walk.entries)):
        for key, code in entries:
            _note_places(places, code, (j, key))
            if type(key) is tuple and key[:1] == (TENSOR_KEY,):
                _note_places(places, key[1], (-1, None))
        if kind == "tensor":  # its hooks and base
            for code in (*meta[7], meta[8]):
                _note_places(places, code, (-1, None))
    for code in walk.arg_codes:
        _note_places(places, code, (-1, None))
    held = []
    for i, where in places.items():
        if i >= state or kinds[i] != "list" or i not in walk.masks or len(where) != 1:
            continue
        j, key = where[0]
        holder_kind = kinds[j] if 0 <= j < state else None
        if _replaceable(holder_kind, key):
            held.append((walk.objects[i], walk.objects[j], holder_kind, key))
    return held


def _replaceable(holder_kind: str | None, key: Any) -> bool:
    """Whether a stand-in can be put at entry ``key`` of a holder of this kind."""
    if holder_kind == "function":
        return key[0] in ("g", "c")  # a global or a closure cell (not a default)
    return holder_kind in ("dict", "attrs") and not (type(key) is tuple
                                                     and key[:1] == (TENSOR_KEY,))


def _note_places(places: dict, code: Any, place: tuple) -> None:
    """Note ``place`` as holding each walked object ``code`` names (bound methods too)."""
    if type(code) is not tuple or not code:
        return
    if code[0] == "old":
        places.setdefault(code[1], []).append(place)
    elif code[0] == "method":
        _note_places(places, code[1], (-1, None))
        _note_places(places, code[2], (-1, None))


def _changed_numbers(walk: StateWalk, key: tuple, last: tuple | None) -> list[tuple[Any, Any]]:
    """The (object, entry key) of each number whose value alone tells signature ``key`` (of
    ``walk``) from ``last``; empty when anything else differs."""
    if last is None or key[2] != last[2]:
        return []
    changed = []
    for part, old_part, start in ((key[0], last[0], 0), (key[1], last[1], walk.prefix[0])):
        (codes, objects, *rest), (old_codes, old_objects, *old_rest) = part, old_part
        if codes != old_codes or rest != old_rest or len(objects) != len(old_objects):
            return []
        for i, (new, old) in enumerate(zip(objects, old_objects)):
            if new == old:
                continue
            if new[:2] != old[:2] or new[0] not in _NUMBER_HOLDERS or len(new[2]) != len(old[2]):
                return []
            for (entry_key, code), (old_key, old_code) in zip(new[2], old[2]):
                if entry_key != old_key:
                    return []
                if code != old_code:
                    if not (_is_number_constant(code) and code[1] is old_code[1]
                            and _is_number_constant(old_code)):
                        return []
                    changed.append((walk.objects[start + i], entry_key))
    return changed


def _holds_traced_numbers(program: _compile_program.Program, code: tuple) -> bool:
    """Whether ``code`` names a list or dict the step created holding numbers it traced (read
    or computed), directly or in lists and dicts it also created."""
    if code[0] != "new" or program.new_objects[code[1]][0] not in ("list", "dict"):
        return False
    return any((value[0] in ("in", "out") and value[1] == "number")
               or _holds_traced_numbers(program, value)
               for _, value in program.new_objects[code[1]][2])


def _is_number_constant(code: tuple) -> bool:
    return len(code) == 3 and code[0] == "c" and (code[1] is int or code[1] is float)


def _used_inputs(jaxpr: Any, positions: list[int]) -> set[int]:
    """Indices of the inputs the outputs at ``positions`` depend on (an equation's outputs
    depend on all its inputs: nested calls are not looked into)."""
    needed = {v for v in (jaxpr.outvars[p] for p in positions) if not hasattr(v, "val")}
    for eqn in reversed(jaxpr.eqns):
        if any(v in needed for v in eqn.outvars):
            needed.update(v for v in eqn.invars if not hasattr(v, "val"))
    return {i for i, v in enumerate(jaxpr.invars) if v in needed}


def _connect(program: _compile_program.Program, walk: StateWalk, replay: Any,
             backward: Callable, diff_cells: list[int], inputs: tuple) -> None:
    """Give the differentiable results of this call a CompiledFunctionBackward grad_fn whose
    edges lead to the tensors (of this call) whose cells the program differentiated."""
    owners = {}
    for obj, kind in zip(walk.objects, walk.kinds):
        if kind == "tensor" and obj._requires_grad:
            cell = walk.cell_index[id(obj._cell)]
            if cell not in owners or (owners[cell]._layout is not None and obj._layout is None):
                owners[cell] = obj  # the gradient is the whole storage's: its base's, not a view's
    results = [replay.created[index] for _, index in program.diff_outputs]
    node = CompiledFunctionBackward(
        tuple(owners[i]._gradient_edge() for i in diff_cells),
        tuple((r.shape, r._cell.array.dtype) for r in results))
    node.backward, node.inputs = backward, inputs
    node.bases = tuple(None if r._layout is None else (r._layout, r._cell.array.shape)
                       for r in results)
    for j, r in enumerate(results):
        r._requires_grad, r._grad_node, r._output_nr = True, node, j


def _spent(results: Any) -> None:
    """Give the results whose history the step's own backward consumed (a training step's loss)
    a spent CompiledFunctionBackward, as torch.compile's: they require grad, and a second
    backward through them raises."""
    results = list(results)
    node = CompiledFunctionBackward((), tuple((r.shape, r._cell.array.dtype) for r in results))
    node.backward = node.inputs = node.bases = None
    for j, r in enumerate(results):
        r._requires_grad, r._grad_node, r._output_nr = True, node, j


def _base_cotangent(grad: Tensor | None, shape: tuple, dtype: Any, base: tuple | None) -> Any:
    """The cotangent of a result's storage array: for a result that is a view (``base``: its
    layout and the storage's shape), the view's gradient scattered into zeros."""
    g = grad._value if grad is not None else jnp.zeros(shape, dtype)
    if base is None:
        return g
    layout, base_shape = base
    return scatter(jnp.zeros(base_shape, g.dtype), layout, g)


def _user_line(error: BaseException) -> str:
    """``file:line: code`` of the innermost frame of the error outside jax and jaxgrad."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        path = frame.filename.replace("\\", "/")
        if "/jax/" in path or "/jaxgrad/" in path or "/jaxlib/" in path:
            continue
        return f"`{(frame.line or '').strip()}` ({frame.filename}, line {frame.lineno})"
    return "the step"


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,
            dynamic: bool | None = None, backend: str | Callable = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False) -> Any:
    """Compile ``model`` (a step function, a module, any callable) into one XLA program per
    signature, as ``torch.compile`` does: forward, ``backward()``, hooks, ``optimizer.step()``,
    ``zero_grad()`` and scheduler steps it runs become one ``jax.jit`` executable; parameters,
    ``.grad``, optimizer state, buffers, the RNG and learning rates are found, passed in and
    written back. Also a decorator, with or without arguments.

    ``fullgraph=True`` raises :class:`GraphBreak` where a step cannot be traced (by default that
    signature runs eagerly after a warning). ``dynamic``: Python numbers passed as arguments are
    traced once one changes between calls (``None``, torch's automatic dynamic; if the step then
    needs their values, it specializes on them again), always (``True``) or never (``False``);
    shapes are always specialized (XLA compiles static shapes). ``mode``,
    ``backend`` and ``options`` are accepted for torch compatibility; XLA picks its own
    optimizations. ``disable=True`` returns ``model`` unchanged.

    >>> import jaxgrad
    >>> w = jaxgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = jaxgrad.optim.SGD([w], lr=0.1)
    >>> @jaxgrad.compile
    ... def step(x):
    ...     opt.zero_grad()
    ...     loss = (w * x).sum()
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> step(jaxgrad.tensor([1.0, 1.0]))  # creates w.grad: this first call runs eagerly
    tensor(3., grad_fn=<SumBackward0>)
    >>> step(jaxgrad.tensor([1.0, 1.0]))  # the steady state, traced and compiled once
    tensor(2.8000, grad_fn=<CompiledFunctionBackward>)
    >>> w, w.grad
    (tensor([0.8000, 1.8000], requires_grad=True), tensor([1., 1.]))
    """
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in MODES if m)}")
    if options is not None and mode not in (None, "default"):
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("model must be callable")
    if disable:
        return model
    return CompiledFunction(model, fullgraph, dynamic)
