"""Objects handed from one process to another over a pipe, their numpy arrays out of band.

A replay's reader process hands the loop's process a poll every ten thousand records:
a few dozen arrays, about 1.5 MB. A :class:`multiprocessing.Queue` pickles it at the
default protocol, which copies every array's bytes twice on the way in (``tobytes``,
then into the pickle), and the receiving side reads it through growing buffers and
copies the bytes again as it unpickles. Here an object is pickled at protocol 5 with its
arrays' bytes left out of the pickle (:func:`frames`): the pipe is written from the
arrays themselves, and the receiver (:func:`receive`) reads each array's bytes straight
into memory of its own, which the array it unpickles then is. The bytes cross the pipe
once, copied by the kernel alone.

What arrives is what the default pickling gives: every array writable and owning its
bytes in effect (no other array shares them), a column-major array still column-major,
and an array of neither layout (a slice of a column-major matrix) a row-major copy.

>>> import os, numpy as np
>>> r, w = os.pipe()
>>> sent = {"ids": np.array(["a", "bc"]), "m": np.asfortranarray(np.ones((2, 3)))}
>>> write_frames(w, frames(sent))
>>> got = receive(r)
>>> got["ids"].tolist(), got["m"].flags.f_contiguous, got["m"].flags.writeable
(['a', 'bc'], True, True)
>>> os.close(w); receive(r)
Traceback (most recent call last):
...
EOFError: the pipe ended before a message
>>> os.close(r)

Objects both processes hold already (inherited at the fork), such as a reference's sketch
layout, may be named ``shared``: they cross as their position in that sequence, and the
receiver's own copy takes their place, so identity checks still hold there.

>>> r, w = os.pipe()
>>> layout = object()
>>> write_frames(w, frames({"layout": layout}, shared=(layout,)))
>>> receive(r, shared=(layout,))["layout"] is layout
True
>>> os.close(w); os.close(r)
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import signal
import struct
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["PIPE_BYTES", "ended_early", "fork_child", "frames", "pipe", "receive",
           "write_frames"]

_HEAD = struct.Struct("<QI")  # the pickle's bytes, the number of arrays after it
_IOV_MAX = 512  # buffers per writev, well under every system's limit

#: The pipe's capacity :func:`pipe` asks for, largest first: a message (a poll is about
#: 1.5 MB) then crosses in one or two writes, where the default 64 KiB takes two dozen,
#: each a switch between the processes. Linux lets an unprivileged process raise a pipe
#: to ``/proc/sys/fs/pipe-max-size`` (1 MiB by default); the first size granted is kept.
PIPE_BYTES = (4 << 20, 2 << 20, 1 << 20)


def pipe() -> tuple[int, int]:
    """``os.pipe()``, its capacity raised to the first of :data:`PIPE_BYTES` the system
    grants (where it grants none, or has no ``F_SETPIPE_SZ``, as it comes).

    >>> r, w = pipe()
    >>> os.write(w, b"x"), os.read(r, 1)
    (1, b'x')
    >>> os.close(r); os.close(w)
    """
    read_fd, write_fd = os.pipe()
    try:
        import fcntl

        setsize = fcntl.F_SETPIPE_SZ  # Linux only
    except (ImportError, AttributeError):
        return read_fd, write_fd
    for size in PIPE_BYTES:
        try:
            fcntl.fcntl(write_fd, setsize, size)
        except OSError:  # above the system's limit (EPERM), or out of pipe pages
            continue
        break
    return read_fd, write_fd


def _array(buf: Any, dtype: np.dtype[Any], shape: tuple[int, ...], order: str) -> np.ndarray:
    """An array on a received buffer (the receiver's own memory, so writable even where
    the pickle marks the sent array read-only)."""
    mem = buf.obj if isinstance(buf, memoryview) else buf
    return np.frombuffer(mem, dtype=dtype).reshape(shape, order=order)  # type: ignore[no-any-return]


class _Pickler(pickle.Pickler):
    """Protocol 5 with every numpy array of a fixed-size type out of band."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            return NotImplemented
        if obj.flags.c_contiguous:
            order = "C"
        elif obj.flags.f_contiguous:
            order = "F"
        else:  # as the default pickling gives it: a row-major copy
            obj, order = np.ascontiguousarray(obj), "C"
        return _array, (pickle.PickleBuffer(obj), obj.dtype, obj.shape, order)


def _shared(index: int) -> Any:
    """Stands in a pickle for the shared object at ``index``: :class:`_SharedUnpickler`
    resolves the name to its own lookup, so this runs only for a plain unpickler."""
    raise pickle.UnpicklingError("a shared object needs the receiver's own (receive(shared=))")


class _SharedPickler(_Pickler):
    """:class:`_Pickler` that sends the objects of ``shared`` as their position. It asks
    in ``reducer_override``, which the pickler calls for objects other than numbers,
    strings and the built-in containers, not in ``persistent_id``, which it calls for
    every object (a window's hand-over holds some two hundred)."""

    def __init__(self, *args: Any, shared: Sequence[Any], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._shared = {id(o): i for i, o in enumerate(shared)}

    def reducer_override(self, obj: Any) -> Any:
        at = self._shared.get(id(obj))
        if at is not None:
            return _shared, (at,)
        return super().reducer_override(obj)


class _SharedUnpickler(pickle.Unpickler):
    def __init__(self, *args: Any, shared: Sequence[Any], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._shared = shared

    def find_class(self, module: str, name: str) -> Any:
        if module == __name__ and name == "_shared":
            return self._shared.__getitem__
        return super().find_class(module, name)


def frames(obj: Any, *, shared: Sequence[Any] = ()) -> list[Any]:
    """``obj`` as the buffers to write, in order, for :func:`receive` to read: a head
    (the pickle's length, the arrays' count and lengths), the pickle, each array's bytes
    (views of the arrays themselves: write them before the arrays change). ``shared``:
    objects the receiver holds too (see the module docstring)."""
    out = io.BytesIO()
    views: list[memoryview] = []
    kw: dict[str, Any] = {"buffer_callback": lambda b: views.append(b.raw())}
    pickler = _SharedPickler(out, protocol=5, shared=shared, **kw) if shared \
        else _Pickler(out, protocol=5, **kw)
    pickler.dump(obj)
    data = out.getbuffer()
    sizes = np.array([v.nbytes for v in views], dtype="<u8")
    return [_HEAD.pack(data.nbytes, len(views)) + sizes.tobytes(), data, *views]


def _views(parts: Sequence[Any]) -> list[memoryview]:
    """``parts`` as byte views, the empty ones left out."""
    return [v for v in (memoryview(p).cast("B") for p in parts) if v.nbytes]


def _moved(views: list[memoryview], done: int) -> None:
    """Drop from the front of ``views`` the ``done`` bytes a vectored read or write moved
    (it may stop within a view: that view's rest stays first)."""
    while done:
        if done >= views[0].nbytes:
            done -= views.pop(0).nbytes
        else:
            views[0], done = views[0][done:], 0


def write_frames(fd: int, parts: list[Any]) -> None:
    """Write every byte of ``parts`` to ``fd``, in order (``writev`` may take fewer)."""
    views = _views(parts)
    while views:
        _moved(views, os.writev(fd, views[:_IOV_MAX]))


def _read_into(fd: int, *bufs: Any) -> None:
    """Fill every one of ``bufs``, in order, from ``fd``: as many at once as ``readv``
    takes (a judge's message holds some ninety arrays: one call, not ninety)."""
    views = _views(bufs)
    while views:
        got = os.readv(fd, views[:_IOV_MAX])
        if not got:
            raise EOFError("the pipe ended within a message")
        _moved(views, got)


def receive(fd: int, *, shared: Sequence[Any] = ()) -> Any:
    """The next object written to ``fd`` by :func:`write_frames`; :class:`EOFError` where
    the pipe ends before it, or within it (the writer is gone). ``shared``: as the sender
    named them to :func:`frames`."""
    head = bytearray(_HEAD.size)
    first = os.readv(fd, [head])
    if not first:
        raise EOFError("the pipe ended before a message")
    if first < len(head):
        _read_into(fd, memoryview(head)[first:])
    size, count = _HEAD.unpack(head)
    sizes = np.empty(count, dtype="<u8")
    data = bytearray(size)
    _read_into(fd, sizes, data)
    # not zeroed: every byte is read into them
    buffers = [np.empty(n, np.uint8) for n in sizes.tolist()]
    _read_into(fd, *buffers)
    if shared:
        return _SharedUnpickler(io.BytesIO(data), buffers=buffers, shared=shared).load()
    return pickle.loads(data, buffers=buffers)



def ended_early(process: str, before: str, exitcode: int | None) -> tuple[str, str | None]:
    """Why a forked process ended before ``before``, from its exit code (``-N``: signal
    ``N``), and the signal's name when a signal stopped it.

    >>> ended_early("judging", "the end of the replay", -signal.SIGKILL)
    ('the judging process was stopped by SIGKILL before the end of the replay', 'SIGKILL')
    >>> ended_early("file reader", "the end of the files", 3)[0]
    'the file reader process ended (exit code 3) before the end of the files'
    """
    if exitcode is None or exitcode >= 0:
        return f"the {process} process ended (exit code {exitcode}) before {before}", None
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    return f"the {process} process was stopped by {name} before {before}", name


def fork_child(target: Callable[..., object], args: tuple[Any, ...], name: str, *,
               ours: Sequence[int], theirs: Sequence[int]) -> Any:
    """Start ``target(*args)`` in a forked daemon process named ``name`` and return it.
    ``theirs``: the child's ends of its pipes, closed here once it has them (so a read
    or write here fails once the child is gone, rather than wait); ``ours``: this
    process's ends, closed too where the fork fails."""
    proc = multiprocessing.get_context("fork").Process(target=target, args=args, name=name,
                                                       daemon=True)
    try:
        with warnings.catch_warnings():  # idle library threads: the child uses none
            warnings.simplefilter("ignore", DeprecationWarning)
            proc.start()
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return proc
