"""Linear maps along one axis, the building block of separable pooling and interpolation.

Average pooling, adaptive average pooling and every interpolation mode
compute each output element of an axis from a few input elements of that
axis, and do so axis after axis. One such map is a pair of ``(outputs, K)``
arrays: ``sources``, the input positions each output reads, and
``weights``, either numbers (a weighted sum) or booleans (a plain sum of the
entries marked ``True``; an unmarked entry adds nothing, even if its input
is inf or NaN, as a window never reads past its edges). ``weights=None``
means one source per output, copied.

:func:`gather` applies a map; :func:`scatter` applies its transpose, which
is the map's backward, as another gather (:func:`transposed`): each input
reads the outputs that read it, in output order, as CPU's backward kernels
add them.
"""

import numpy as np


def along(vector, axis):
    """``vector`` shaped to broadcast along ``axis`` (a negative axis) of an array."""
    return vector.reshape((-1,) + (1,) * (-axis - 1))


def gather(array, axis, sources, weights=None):
    """Output ``o`` along ``axis``: the sum over ``k`` of ``array[sources[o, k]]``, weighted by or
    selected by ``weights[o, k]``."""
    if weights is None:
        return np.take(array, sources[:, 0], axis=axis)
    result = None
    for column in range(sources.shape[1]):
        term = np.take(array, sources[:, column], axis=axis)
        chosen = weights[:, column]
        if chosen.dtype != bool:
            term = term * along(chosen, axis)
        elif not chosen.all():
            term = np.where(along(chosen, axis), term, 0).astype(term.dtype, copy=False)
        if result is None:
            result = term
        else:
            result += term
    return result


def transposed(sources, weights, size):
    """The transpose of a map from ``size`` inputs: for each input, the outputs that read it
    (in output order) and their weights. Inputs read fewer times than the most-read one are
    padded with reads of position ``len(sources)``, which :func:`scatter` makes a zero."""
    outputs = len(sources)
    if weights is None:
        weights = np.ones(sources.shape, bool)
    read = weights if weights.dtype == bool else np.ones(sources.shape, bool)
    readers = np.broadcast_to(np.arange(outputs)[:, None], sources.shape)[read]
    positions, shares = sources[read], weights[read]
    order = np.argsort(positions, kind="stable")
    positions, readers, shares = positions[order], readers[order], shares[order]
    counts = np.bincount(positions, minlength=size)
    slots = np.arange(positions.size) - np.repeat(np.cumsum(counts) - counts, counts)
    width = max(int(counts.max(initial=0)), 1)
    transposed_sources = np.full((size, width), outputs)
    transposed_weights = np.zeros((size, width), shares.dtype)
    if shares.dtype == bool:
        transposed_weights[...] = True  # the padding reads a zero
    transposed_sources[positions, slots] = readers
    transposed_weights[positions, slots] = shares
    return transposed_sources, transposed_weights


def scatter(array, axis, sources, weights, size):
    """The transpose of :func:`gather`: ``size`` elements along ``axis``."""
    if array.shape[axis] == 0:
        shape = list(array.shape)
        shape[axis] = size
        return np.zeros(shape, array.dtype)
    zero = np.zeros_like(np.take(array, [0], axis=axis))
    return gather(np.concatenate([array, zero], axis=axis), axis, *transposed(sources, weights, size))


def gather_last(array, maps):
    """``array`` with one ``(sources, weights)`` map applied to each of its last ``len(maps)`` axes."""
    for axis, (sources, weights) in zip(range(-len(maps), 0), maps):
        array = gather(array, axis, sources, weights)
    return array


def scatter_last(array, maps, sizes):
    """The transpose of :func:`gather_last`, back to ``sizes`` along the last axes."""
    for axis, (sources, weights), size in zip(range(-len(maps), 0), maps, sizes):
        array = scatter(array, axis, sources, weights, size)
    return array
