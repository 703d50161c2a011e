"""PyTorch's dim arguments: which dims they name, as NumPy axes, refused in PyTorch's words."""


def wrap_dim(dim, ndim):
    """``dim`` as a non-negative dim of an ``ndim``-dim tensor (a 0-dim one has dim 0)."""
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def reduced_axes(op, dim, ndim):
    """PyTorch's dim argument as NumPy axes: None or [] reduces every dim."""
    if dim is None or len(dim) == 0:
        return None
    rank = max(ndim, 1)
    axes = []
    for d in dim:
        if not -rank <= d < rank:
            raise IndexError(
                f"{op}: Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})"
            )
        axis = d % rank
        if axis in axes:
            raise RuntimeError(f"{op}: dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(axes) if ndim else None


def single_axis(op, dim, ndim):
    """A one-int dim as a NumPy axis; None for a zero-dim tensor (dim 0 or -1), which has none."""
    axes = reduced_axes(op, [dim], ndim)
    return None if axes is None else axes[0]
