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
    result = np.take(array, sources[:, 0], axis=axis) * along(weights[:, 0], axis)
    for column in range(1, sources.shape[1]):
        result += np.take(array, sources[:, column], axis=axis) * along(weights[:, column], axis)
    return result


def add_sorted(result, values, index, axis):
    """Add ``values`` into ``result`` along ``axis``: element ``o`` to element ``index[o]``.

    ``index`` never decreases, so the elements bound for one place are one
    run, which ``np.add.reduceat`` sums.
    """
    if values.shape[axis] == 0:
        return
    firsts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    if firsts.size < index.size:
        values = np.add.reduceat(values, firsts, axis=axis)
    result[(Ellipsis, _as_slice(index[firsts])) + (slice(None),) * (-axis - 1)] += values


def _as_slice(positions):
    """Increasing ``positions`` as a slice when evenly spaced: NumPy adds into a slice
    in place, but into fancy-indexed positions through a temporary copy."""
    steps = np.diff(positions)
    if positions.size == 1 or (steps == steps[0]).all():
        step = int(steps[0]) if steps.size else 1
        return slice(int(positions[0]), int(positions[-1]) + 1, step)
    return positions


def scatter(array, axis, sources, weights, size):
    """The transpose of :func:`gather`: ``size`` elements along ``axis``."""
    shape = list(array.shape)
    shape[axis] = size
    result = np.zeros(shape, array.dtype)
    for column in range(sources.shape[1]):
        share = array if weights is None else array * along(weights[:, column], axis)
        add_sorted(result, share, sources[:, column], axis)
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
