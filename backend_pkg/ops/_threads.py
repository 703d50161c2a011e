"""Splitting a kernel's NumPy work over as many threads as PyTorch's CPU kernels use.

Why it exists: NumPy runs an elementwise call on the calling thread only,
where PyTorch's CPU kernels split their work over ``torch.get_num_threads()``
threads. A kernel made of many such calls on small pieces (a depthwise
convolution: copies and small products sample by sample) then takes twice
as long as it could on two cores. NumPy releases the GIL inside its loops
and BLAS calls, so Python threads, each running the calls on its own part
of the arrays, do run at once. A large matrix product needs none of this:
NumPy's BLAS has threads of its own.

:func:`split_over_threads` runs ``work(part)`` over the parts of a range (the
batch, the channels) that :func:`parts_of` cuts, the first on the calling thread and the others on a
pool of worker threads, and returns when all are done. With
``torch.set_num_threads(1)`` everything runs on the calling thread, as
CPU's kernels then do. Parts write into disjoint slices of arrays the caller
made, so the results are the same whatever the number of threads, unless
the caller sums partial results.

The pool is :class:`concurrent.futures.ThreadPoolExecutor`, whose threads
are plain Python threads, made when first needed:

* at exit, ``concurrent.futures`` joins them before the interpreter
  finalizes (its ``threading._register_atexit`` hook), so none is left to
  take the GIL while Python shuts down (the abort the autograd engine's
  C++ thread can cause, ``backend_pkg/runtime.py``); a kernel called after
  that (from an ``atexit`` function) runs on the calling thread alone;
* several threads may call at once: the executor's queue is thread-safe,
  and a part never waits for another part, so the pool cannot deadlock;
* a forked child (a ``DataLoader`` worker) gets a new pool: the parent's
  threads do not exist in it;
* each part runs in a copy of the caller's ``contextvars`` context, where
  NumPy keeps its error state (``np.errstate``, :mod:`._numpy_errors`).
"""

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

_lock = threading.Lock()
_executor = None


def _pool():
    """The worker threads, made at the first call (and again in a forked child)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=os.cpu_count(), thread_name_prefix="npy_kernel")
        return _executor


def _forget_pool():
    global _executor, _lock
    _executor, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


# The least work (elements read or written) worth a thread of its own: waking a worker and waiting
# for it costs tens of microseconds, as long as NumPy takes over about this many.
MIN_ELEMENTS_PER_THREAD = 1 << 16


def parts_of(count, elements):
    """``range(count)`` as consecutive slices, one per thread: at most ``torch.get_num_threads()``,
    each with at least :data:`MIN_ELEMENTS_PER_THREAD` of the ``elements`` the whole work touches."""
    parts = max(1, min(torch.get_num_threads(), count, elements // MIN_ELEMENTS_PER_THREAD))
    bounds = [count * part // parts for part in range(parts + 1)]
    return [slice(start, stop) for start, stop in zip(bounds, bounds[1:])]


def split_over_threads(work, parts):
    """``work(part)`` for each of ``parts`` (slices, from :func:`parts_of`), at once."""
    first, *others = parts
    futures = []
    try:
        for part in others:
            futures.append(_pool().submit(contextvars.copy_context().run, work, part))
    except RuntimeError:  # the interpreter is shutting down: no new threads
        for part in others[len(futures) :]:
            work(part)
    try:
        work(first)
    finally:
        for future in futures:  # every part done before the caller's arrays are read or freed
            future.exception()
    for future in futures:
        future.result()
