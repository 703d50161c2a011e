"""Linear maps along one axis, the building block of separable pooling and resampling.

Average pooling, adaptive average pooling and every interpolation mode
compute each output element of an axis as a weighted sum of a few input
elements of that axis, and do so axis after axis. One such map is a pair of
``(outputs, K)`` arrays: ``sources`` (input positions, kept in range) and
``weights`` (0 for the entries a window does not use). :func:`gather` applies
the map, :func:`scatter` its transpose, which is the map's backward.

Every map here has sources that never decrease along the outputs (windows
and interpolation points move forward with the output index), which is what
lets :func:`scatter` add with ``np.add.reduceat`` instead of ``np.add.at``.
"""

import numpy as np


def along(vector, axis):
    """``vector`` shaped to broadcast along ``axis`` (a negative axis) of an array."""
    return vector.reshape((-1,) + (1,) * (-axis - 1))


def gather(array, axis, sources, weights=None):
    """Output ``o`` along ``axis`` is ``sum_k array[sources[o, k]] * weights[o, k]``."""
    if weights is None:
        return np.take(array, sources[:, 0], axis=axis)
    result = 0
    for column in range(sources.shape[1]):
        result = result + np.take(array, sources[:, column], axis=axis) * along(weights[:, column], axis)
    return result


def add_sorted(values, index, size, axis):
    """``values`` summed into ``size`` bins along ``axis``: element ``o`` goes to bin ``index[o]``.

    ``index`` never decreases, so each bin's elements are one run, which
    ``np.add.reduceat`` sums.
    """
    shape = list(values.shape)
    shape[axis] = size
    result = np.zeros(shape, values.dtype)
    if values.shape[axis] == 0:
        return result
    firsts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    bins = (slice(None),) * (values.ndim + axis) + (index[firsts],)
    result[bins] = np.add.reduceat(values, firsts, axis=axis)
    return result


def scatter(array, axis, sources, weights, size):
    """The transpose of :func:`gather`: ``size`` elements along ``axis``."""
    result = 0
    for column in range(sources.shape[1]):
        share = array if weights is None else array * along(weights[:, column], axis)
        result = result + add_sorted(share, sources[:, column], size, axis)
    return result


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
