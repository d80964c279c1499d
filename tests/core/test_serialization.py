"""``jaxgrad.save``/``jaxgrad.load`` against ``torch.save``/``torch.load``: checkpoints written by
either library load in both (values, dtypes, flags, Parameter-ness, storage sharing, strides and
offsets of views), state dicts load into models and optimizers, errors match torch's."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import subprocess
import sys
import tarfile
import zipfile

import jax
import pytest

import jaxgrad
from differential import assert_same, attempt, captured_warnings, describe, ok, raises, torch

# --- helpers ------------------------------------------------------------------------------------

def written_by(lib, build, **save_kw) -> bytes:
    buf = io.BytesIO()
    lib.save(build(lib), buf, **save_kw)
    return buf.getvalue()


def tensors_in(obj) -> list:
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in tensors_in(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in tensors_in(v)]
    return [obj] if isinstance(obj, (torch.Tensor, jaxgrad.Tensor)) else []


def geometry(T, obj) -> list:
    """Each tensor's class, strides, storage offset, and which earlier tensor's storage it
    shares (storage sharing, as torch.load preserves it)."""
    tensors = tensors_in(obj)
    keys = [t.untyped_storage().data_ptr() if T is torch else id(t._cell) for t in tensors]
    return [(type(t).__name__, tuple(t.stride()), t.storage_offset(), keys.index(k))
            for t, k in zip(tensors, keys)]


def comparable(T, obj):
    """``obj`` with bfloat16 tensors as float32 plus their dtype name (the differential harness
    reads torch tensors through numpy, which has no bfloat16)."""
    if isinstance(obj, dict):
        return type(obj)((k, comparable(T, v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(comparable(T, v) for v in obj)
    if isinstance(obj, T.Tensor) and obj.dtype == T.bfloat16:
        return obj.detach().float(), "bfloat16", obj.requires_grad
    return obj


def check_round_trips(build, after=comparable, **save_kw) -> None:
    """torch writes -> both read; jaxgrad writes -> torch reads it as it reads torch's own file;
    each library reads what it wrote. ``after(T, loaded)`` is what is compared."""
    from_torch = written_by(torch, build, **save_kw)
    from_jaxgrad = written_by(jaxgrad, build, **save_kw)
    ok(lambda T: (after(T, loaded := T.load(io.BytesIO(from_torch))), geometry(T, loaded)))
    ok(lambda T: (after(T, loaded := T.load(io.BytesIO(written_by(T, build, **save_kw)))),
                  geometry(T, loaded)))
    theirs = torch.load(io.BytesIO(from_torch))
    ours = torch.load(io.BytesIO(from_jaxgrad))
    assert_same(describe(after(torch, theirs), torch), describe(after(torch, ours), torch))
    assert geometry(torch, theirs) == geometry(torch, ours)


def fill(T, module):
    """Deterministic parameters and buffers (both libraries' random inits differ)."""
    with T.no_grad():
        for i, t in enumerate(module.state_dict(keep_vars=True).values()):
            if t.is_floating_point():
                n = t.numel()
                t.copy_(T.linspace(-1.0 + 0.1 * i, 1.0, n).reshape(t.shape))
    return module


def bn_model(T):
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.ReLU(), T.nn.Linear(4, 2))


def trained_bn_model(T):
    model = fill(T, bn_model(T))
    model(T.linspace(-2.0, 3.0, 15).reshape(5, 3))  # moves running stats, num_batches_tracked
    return model


class Box:
    """A class the weights-only unpickler refuses unless allowed."""

    def __init__(self, value=3):
        self.value = value


# --- tensors ---------------------------------------------------------------------------------------

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensors_of_every_dtype(dtype):
    def build(T):
        values = [[0, 1, -2], [3, 0, 1]] if dtype != "bool" else [[True, False, True]] * 2
        d = getattr(T, dtype)
        if dtype == "uint8":
            values = [[0, 1, 200], [3, 0, 255]]
        t = T.tensor(values, dtype=d)
        if d.is_complex:
            t = t * T.tensor(1 + 2j, dtype=d)
        return {"t": t, "scalar": T.tensor(7, dtype=d), "empty": T.zeros(0, 3, dtype=d),
                "dtype": d}
    check_round_trips(build)


def test_float_values_survive_exactly():
    check_round_trips(lambda T: [T.tensor([1e-8, -3.25, 65504.0, float("inf"), float("nan")]),
                                 T.tensor([0.1, 1 / 3], dtype=T.float64),
                                 T.tensor([1.5, -0.0078125], dtype=T.bfloat16)])


def test_views_share_storage_with_offsets_and_strides():
    def build(T):
        base = T.arange(24.0).reshape(4, 6)
        return {"col": base[:, 2], "base": base, "row": base[1], "t": base.t(),
                "step": base[1:3, ::2], "flat": base.view(-1), "other": T.ones(2)}
    check_round_trips(build)


def test_a_view_saved_without_its_base_keeps_the_whole_storage():
    check_round_trips(lambda T: [T.arange(10.0)[3:7], T.arange(6).reshape(2, 3).t()])


def test_loaded_views_alias_their_base_as_torchs_do():
    data = written_by(torch, lambda T: (lambda b: {"base": b, "col": b[:, 1]})(
        T.arange(6.0).reshape(2, 3)))

    def program(T):
        loaded = T.load(io.BytesIO(data))
        loaded["base"].mul_(10)
        loaded["col"].add_(1)
        return loaded["base"], loaded["col"], loaded["col"].is_contiguous()
    ok(program)


def test_parameters_and_requires_grad():
    def build(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        return {"p": T.nn.Parameter(T.ones(2, 2)),
                "frozen": T.nn.Parameter(T.zeros(3), requires_grad=False),
                "leaf": a, "nonleaf": a * 2, "plain": T.ones(1)}
    check_round_trips(build)
    ok(lambda T: [type(t).__name__ for t in T.load(io.BytesIO(written_by(T, build))).values()])


def test_a_parameter_and_its_detached_state_share_storage():
    def build(T):
        p = T.nn.Parameter(T.arange(4.0))
        return [p, p.detach(), p[1:]]
    check_round_trips(build)


def test_tensor_attributes_are_kept():
    def build(T):
        t = T.ones(2)
        t.note = "kept"
        return t
    data = written_by(torch, build)
    ok(lambda T: (lambda t: (t, t.note))(T.load(io.BytesIO(data))))
    ok(lambda T: (lambda t: (t, t.note))(T.load(io.BytesIO(written_by(T, build)))))
    assert torch.load(io.BytesIO(written_by(jaxgrad, build))).note == "kept"


# --- containers and other values -------------------------------------------------------------------

def nested_values(T):
    return {"list": [T.ones(2), (T.zeros(1), 3, 2.5), {"inner": T.arange(3)}],
            "none": None, "flags": (True, False), "name": "w", "big": 2 ** 70, "neg": -5,
            "wide": 70000, "complex": 1 + 2j, "bytes": b"ab\x00", "set": {1, 2},
            "size": T.Size([2, 3]), "dtype": T.float64, "counter": __import__(
                "collections").Counter("aab"), "ordered": __import__(
                "collections").OrderedDict(b=1, a=T.ones(1))}


def test_nested_containers_and_numbers():
    check_round_trips(nested_values)


def test_devices():
    check_round_trips(lambda T: [T.device("cpu"), T.device("cuda", 1)],
                      after=lambda T, obj: [str(d) for d in obj])


# --- state dicts ------------------------------------------------------------------------------------

def test_batchnorm_model_state_dict():
    check_round_trips(lambda T: trained_bn_model(T).state_dict())


def test_state_dict_loads_into_a_model_and_gives_torchs_outputs():
    for writer in (torch, jaxgrad):
        data = written_by(writer, lambda T: trained_bn_model(T).state_dict())

        def program(T, data=data):
            model = bn_model(T)
            result = model.load_state_dict(T.load(io.BytesIO(data)))
            model.eval()
            out = model(T.linspace(-1.0, 1.0, 6).reshape(2, 3))
            return out, repr(result), model[1].num_batches_tracked, model[1].running_var
        ok(program)


def adam_after_a_step(T):
    model = fill(T, T.nn.Linear(3, 2))
    opt = T.optim.Adam(model.parameters(), lr=0.1)
    model(T.linspace(-1.0, 1.0, 6).reshape(2, 3)).pow(2).sum().backward()
    opt.step()
    return model, opt


def test_optimizer_state_dict():
    check_round_trips(lambda T: adam_after_a_step(T)[1].state_dict())


def test_optimizer_state_dict_resumes_training():
    for writer in (torch, jaxgrad):
        data = written_by(writer, lambda T: {"model": adam_after_a_step(T)[0].state_dict(),
                                             "optim": adam_after_a_step(T)[1].state_dict()})

        def program(T, data=data):
            checkpoint = T.load(io.BytesIO(data))
            model = T.nn.Linear(3, 2)
            model.load_state_dict(checkpoint["model"])
            opt = T.optim.Adam(model.parameters(), lr=0.1)
            opt.load_state_dict(checkpoint["optim"])
            model(T.linspace(-1.0, 1.0, 6).reshape(2, 3)).pow(2).sum().backward()
            opt.step()
            return list(model.parameters()), opt.state_dict()["state"]
        ok(program)


def test_whole_objects_with_weights_only_false():
    data = written_by(torch, lambda T: fill(T, T.nn.Linear(2, 2)))

    def program(T):
        model = T.load(io.BytesIO(data), weights_only=False)
        return type(model).__name__, model(T.ones(1, 2)), list(model.parameters())
    ok(program)
    ok(lambda T: (lambda m: (type(m).__name__, m(T.ones(1, 2)), m.weight))(
        T.load(io.BytesIO(written_by(T, lambda T: fill(T, T.nn.Linear(2, 2)))),
               weights_only=False)))


def test_whole_objects_of_classes_jaxgrad_lacks_are_refused_clearly():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        data = written_by(torch, lambda T: T.nn.Container())
    # the premise: pick another class once jaxgrad has this one
    assert not hasattr(jaxgrad.nn, "Container")
    with pytest.raises(AttributeError, match=re.escape(  # the module is there, the class not
            "needs torch.nn.modules.container.Container, and jaxgrad has no "
            "jaxgrad.nn.modules.container.Container")):
        jaxgrad.load(io.BytesIO(data), weights_only=False)


class OnDevice:
    """Pickles as torch pickles tensors of storage-less backends (xla, mtia)."""

    def __reduce__(self):
        return (torch._utils._rebuild_device_tensor_from_cpu_tensor,
                (torch.arange(3), torch.float64, "cpu", True))


def test_device_tensors_rebuilt_from_cpu_tensors():
    buf = io.BytesIO()
    torch.save([OnDevice()], buf)
    ok(lambda T: T.load(io.BytesIO(buf.getvalue())))


# --- formats, files, locations -----------------------------------------------------------------------

def test_paths_and_file_objects(tmp_path):
    def program(T):
        path = tmp_path / f"{T.__name__}.pt"
        T.save({"x": T.arange(3.0)}, path)
        with open(path, "rb") as f:
            from_file = T.load(f)
        with open(tmp_path / f"{T.__name__}2.pt", "wb") as f:
            T.save(T.ones(2), f)
        return T.load(str(path)), from_file, T.load(tmp_path / f"{T.__name__}2.pt")
    ok(program)


def test_an_archive_after_other_bytes_in_a_stream():
    def written(lib):
        buf = io.BytesIO()
        buf.write(b"header")
        lib.save({"x": lib.arange(3.0)}, buf)
        return buf.getvalue()
    for data in (written(torch), written(jaxgrad)):
        ok(lambda T, data=data: (lambda f: (f.seek(6), T.load(f))[1])(io.BytesIO(data)))


def test_saving_to_a_write_only_stream():
    class WriteOnly:
        def __init__(self):
            self.inner = io.BytesIO()

        def write(self, data):
            return self.inner.write(data)

        def flush(self):
            pass

    def written(lib):
        out = WriteOnly()
        lib.save({"x": lib.arange(3.0), "v": lib.arange(4.0)[1:]}, out)
        return out.inner.getvalue()
    for data in (written(torch), written(jaxgrad)):
        ok(lambda T, data=data: T.load(io.BytesIO(data)))


def test_archive_layout_matches_torchs(tmp_path):
    torch.save(torch.ones(2), tmp_path / "model.v1.pt")
    jaxgrad.save(jaxgrad.ones(2), tmp_path / "mine.v1.pt")
    theirs = zipfile.ZipFile(tmp_path / "model.v1.pt")
    ours = zipfile.ZipFile(tmp_path / "mine.v1.pt")
    assert [n.replace("model.v1/", "") for n in theirs.namelist()] == [
        n.replace("mine.v1/", "") for n in ours.namelist()]
    for name in ("version", "byteorder", ".format_version", ".storage_alignment", "data/0"):
        assert theirs.read(f"model.v1/{name}") == ours.read(f"mine.v1/{name}")
    assert len(ours.read("mine.v1/.data/serialization_id")) == 40
    with open(tmp_path / "mine.v1.pt", "rb") as f:  # storages are 64-byte aligned, as torch's
        raw = f.read()
    info = ours.getinfo("mine.v1/data/0")
    start = info.header_offset + 30 + len(info.filename) + int.from_bytes(
        raw[info.header_offset + 28:info.header_offset + 30], "little")
    assert start % 64 == 0 and raw[start:start + 8] == theirs.read("model.v1/data/0")


def test_legacy_format():
    check_round_trips(lambda T: {"x": T.arange(6.0).reshape(2, 3), "p": T.nn.Parameter(T.ones(2)),
                                 "i": T.tensor([1, 2])}, _use_new_zipfile_serialization=False)


def test_legacy_format_from_a_real_file(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save({"x": torch.arange(4.0)}, path, _use_new_zipfile_serialization=False)
    ok(lambda T: T.load(path))


@pytest.mark.parametrize("protocol", [2, 4])
def test_pickle_protocols(protocol):
    data = {lib: written_by(lib, lambda T: {"x": T.ones(2), "d": T.float32},
                            pickle_protocol=protocol) for lib in (torch, jaxgrad)}
    for written in data.values():
        ok(lambda T, written=written: T.load(io.BytesIO(written), weights_only=False))


def test_weights_only_and_protocol_4_fail_and_warn_as_torchs():
    for writer in (torch, jaxgrad):
        data = written_by(writer, lambda T: T.ones(2), pickle_protocol=4)
        raises(lambda T, data=data: T.load(io.BytesIO(data)))
        def program(T, data=data):
            return T.load(io.BytesIO(data))
        assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)


@pytest.mark.parametrize("dtype", ["uint16", "uint64", "float8_e4m3fn"])
def test_torch_dtypes_jaxgrad_lacks_are_refused_clearly(dtype):
    data = written_by(torch, lambda T: T.zeros(2, dtype=getattr(T, dtype)))
    with pytest.raises(RuntimeError, match=re.escape(f"names torch.{dtype}, which jaxgrad does not")):
        jaxgrad.load(io.BytesIO(data))


@pytest.mark.parametrize("where", [
    lambda T: "cpu", lambda T: T.device("cpu"), lambda T: {"cpu": "cpu"},
    lambda T: (lambda storage, location: storage), lambda T: (lambda storage, location: None),
    lambda T: (lambda storage, location: storage.cpu()),
])
def test_map_location(where):
    data = written_by(torch, lambda T: {"x": T.arange(3.0), "v": T.arange(3.0)[1:]})
    ok(lambda T: (lambda d: (d, str(d["x"].device)))(
        T.load(io.BytesIO(data), map_location=where(T))))


def test_map_location_to_a_missing_gpu():
    if any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("this runtime has a GPU (torch here is a CPU build)")
    data = written_by(torch, lambda T: T.ones(1))
    raises(lambda T: T.load(io.BytesIO(data), map_location="cuda:0"))
    raises(lambda T: T.load(io.BytesIO(data), map_location={"cpu": "cuda"}))


def test_mmap(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"x": torch.arange(5.0), "y": torch.arange(3)}, path)
    ok(lambda T: T.load(path, mmap=True))
    raises(lambda T: T.load(io.BytesIO(path.read_bytes()), mmap=True))
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(1), legacy, _use_new_zipfile_serialization=False)
    raises(lambda T: T.load(str(legacy), mmap=True))


def test_jaxgrad_loads_torch_checkpoints_without_torch(tmp_path):
    path = tmp_path / "sd.pt"
    state = trained_bn_model(torch).state_dict()
    torch.save({"state": state, "view": torch.arange(6.0).reshape(2, 3)[:, 1]}, path)
    script = (
        "import json, sys\n"
        "sys.modules['torch'] = None\n"
        "import jaxgrad\n"
        f"loaded = jaxgrad.load({str(path)!r})\n"
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules\n"
        "               if sys.modules[m] is not None)\n"
        "out = {k: [str(v.dtype), v.tolist()] for k, v in loaded['state'].items()}\n"
        "out['view'] = [str(loaded['view'].dtype), loaded['view'].tolist(),\n"
        "               loaded['view'].stride(), loaded['view'].storage_offset()]\n"
        "print(json.dumps(out))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(jaxgrad.__file__)), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    want = {k: [str(v.dtype).replace("torch", "jaxgrad"), v.tolist()] for k, v in state.items()}
    view = torch.arange(6.0).reshape(2, 3)[:, 1]
    want["view"] = ["jaxgrad.float32", view.tolist(), list(view.stride()), view.storage_offset()]
    assert got == want


def hook(grad):
    return grad


def test_saving_a_tensor_with_hooks_warns_as_torch_does():
    def program(T):
        t = T.ones(2, requires_grad=True)
        t.register_hook(hook)
        T.save(t, io.BytesIO())
    assert captured_warnings(program, torch) == captured_warnings(program, jaxgrad)
    assert captured_warnings(program, torch)


# --- weights only -------------------------------------------------------------------------------

def test_weights_only_refuses_other_globals_with_torchs_message():
    for writer in (torch, jaxgrad):
        data = written_by(writer, lambda T: {"box": Box(), "x": T.ones(1)})
        raises(lambda T, data=data: T.load(io.BytesIO(data)))
        ok(lambda T, data=data: (lambda d: (d["box"].value, d["x"]))(
            T.load(io.BytesIO(data), weights_only=False)))


@pytest.mark.parametrize("value", [print, os.system, Box, pickle.loads])
def test_weights_only_errors_for_functions_and_blocked_modules(value):
    data = written_by(torch, lambda T: {"f": value})
    raises(lambda T: T.load(io.BytesIO(data)))


def test_safe_globals_allow_a_class():
    for writer in (torch, jaxgrad):
        data = written_by(writer, lambda T: [Box(5), T.ones(1)])

        def program(T, data=data):
            with T.serialization.safe_globals([Box]):
                inside = T.load(io.BytesIO(data))
            return inside[0].value, inside[1], Box in T.serialization.get_safe_globals()
        ok(program)
        raises(lambda T, data=data: T.load(io.BytesIO(data)))


def test_weights_only_with_a_pickle_module_or_pickle_arguments():
    data = written_by(torch, lambda T: T.ones(1))
    raises(lambda T: T.load(io.BytesIO(data), pickle_module=pickle, weights_only=True))
    ok(lambda T: T.load(io.BytesIO(data), pickle_module=pickle))
    ok(lambda T: T.load(io.BytesIO(data), weights_only=False, encoding="latin1"))
    for lib in (torch, jaxgrad):
        with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
            lib.load(io.BytesIO(data), encoding="utf-8")


# --- bad input ----------------------------------------------------------------------------------------

def truncated(n):
    return written_by(torch, lambda T: {"x": T.arange(100.0)})[:n]


@pytest.mark.parametrize("data", [
    b"", b"hello world", truncated(10), truncated(100), truncated(600), truncated(-30),
    pickle.dumps([1, 2], protocol=2), pickle.dumps([1, 2], protocol=4),
])
@pytest.mark.parametrize("weights_only", [True, False])
def test_bad_buffers(data, weights_only):
    raises(lambda T: T.load(io.BytesIO(data), weights_only=weights_only))


@pytest.mark.parametrize("data", [b"", b"hello world", truncated(600)])
def test_bad_files(tmp_path, data):
    path = tmp_path / "bad.pt"
    path.write_bytes(data)
    raises(lambda T: T.load(path))
    raises(lambda T: T.load(str(path), weights_only=False))


def test_tar_checkpoints_are_refused_with_weights_only(tmp_path):
    path = tmp_path / "old.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("pickle")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    raises(lambda T: T.load(path))


def test_missing_file(tmp_path):
    raises(lambda T: T.load(tmp_path / "missing.pt"))
    raises(lambda T: T.load(str(tmp_path / "missing.pt")))


def rezipped(drop=(), names=None) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(written_by(torch, lambda T: {"x": T.ones(2)})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in source.namelist():
            if not any(name.endswith(d) for d in drop):
                z.writestr(name if names is None else names(name), source.read(name))
    return out.getvalue()


@pytest.mark.parametrize("data", [rezipped(["data.pkl"]), rezipped(["data/0"]),
                                  rezipped(["/version"]), rezipped(names=lambda n: n + "/x")])
def test_zip_archives_missing_records(data):
    raises(lambda T: T.load(io.BytesIO(data)))


def test_zip_without_an_archive_directory():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("foo.txt", b"hi")
    theirs, ours = (attempt(lambda lib=lib: lib.load(io.BytesIO(out.getvalue())))
                    for lib in (torch, jaxgrad))
    assert theirs.cls == ours.cls == "RuntimeError"
    assert theirs.message.endswith(ours.message)  # torch's starts with a C++ source location


def test_a_record_missing_only_from_the_zip_directory_loads_as_torch_does():
    ok(lambda T: T.load(io.BytesIO(rezipped(["byteorder", ".format_version"]))))


@pytest.mark.parametrize("target", [object(), 3])
def test_save_to_something_without_write(target):
    raises(lambda T: T.save(T.ones(1), target))


def test_save_and_load_through_a_non_seekable_stream():
    class Unseekable(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.inner.readinto(b)

        def seek(self, *args):
            raise io.UnsupportedOperation("seek")

    data = written_by(torch, lambda T: T.ones(1))
    raises(lambda T: T.load(Unseekable(data)))
