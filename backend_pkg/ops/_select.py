"""``np.where`` for floating-point results, without its per-element branch.

``np.where(condition, a, b)`` picks each element with a branch, which a
random condition (ReLU's mask, any activation's kink) mispredicts half the
time: on 1.6 million float32 elements it takes 6 ms where the comparison
that made the condition takes 0.1 ms. Picking by bits instead gives the
same elements bit for bit (infinities, NaNs and signed zeros included):
``b ^ ((a ^ b) & mask)``, where the mask has every bit set where the
condition holds. The work happens in the result's own memory, since every
fresh temporary of this size costs its page faults again.
"""

import numpy as np

_SAME_WIDTH_INTEGER = {2: np.int16, 4: np.int32, 8: np.int64}
# Below this many elements the three extra passes cost more than the branches save.
_SMALL = 16384


def select(condition, if_true, if_false):
    """What ``np.where(condition, if_true, if_false)`` returns, computed by bit masks for floats."""
    if max(np.size(condition), np.size(if_true), np.size(if_false)) < _SMALL:
        return np.where(condition, if_true, if_false)
    dtype = np.result_type(if_true, if_false)
    if dtype.kind != "f":
        return np.where(condition, if_true, if_false)
    bits = _SAME_WIDTH_INTEGER[dtype.itemsize]
    condition = np.asarray(condition, np.bool_)
    true_bits = np.asarray(if_true, dtype).view(bits)
    false_bits = np.asarray(if_false, dtype).view(bits)
    shape = np.broadcast_shapes(condition.shape, true_bits.shape, false_bits.shape)
    chosen = np.bitwise_xor(true_bits, false_bits, out=np.empty(shape, bits))
    # True as int8 is 1; negated, -1, which widens to every bit set.
    np.bitwise_and(chosen, np.negative(condition.view(np.int8)), out=chosen)
    np.bitwise_xor(chosen, false_bits, out=chosen)
    return chosen.view(dtype)
