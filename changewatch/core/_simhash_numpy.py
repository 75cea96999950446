"""The vectorised simhash of :mod:`.simhash` (NumPy): every word hash of a page out of a handful of
array operations, no Python loop per word or per gram. Imported on the first fingerprint."""

from __future__ import annotations

import numpy as np

from .simhash import _ASCII_SPACE, _M1, _M2, _P, _P_INV, _ROT, SHINGLE

__all__ = ["fingerprint"]

_SPACE_TABLE = np.zeros(256, dtype=bool)
_SPACE_TABLE[list(_ASCII_SPACE)] = True
# Row v holds the 8 bits of byte value v: a histogram of byte values times this matrix counts
# the set bits per position, far cheaper than unpacking every hash into 64 bits.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int64)
_BIT_VALUES = [1 << b for b in range(64)]


class _Powers:
    """P**j and P**-j modulo 2**64 for j < size, grown on demand and kept between calls."""

    def __init__(self) -> None:
        self.up = np.ones(1, dtype=np.uint64)
        self.down = np.ones(1, dtype=np.uint64)

    def ensure(self, size: int) -> None:
        if size <= len(self.up):
            return
        size = max(size, 2 * len(self.up))
        one = np.ones(1, dtype=np.uint64)
        with np.errstate(over="ignore"):  # wrapping modulo 2**64 is the point
            self.up = np.concatenate((one, np.cumprod(np.full(size - 1, _P, dtype=np.uint64))))
            self.down = np.concatenate((one, np.cumprod(np.full(size - 1, _P_INV, dtype=np.uint64))))


_POWERS = _Powers()


def _mix_array(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def _rotl_array(x: np.ndarray, r: int) -> np.ndarray:
    if not r:
        return x
    rotated: np.ndarray = (x << np.uint64(r)) | (x >> np.uint64(64 - r))
    return rotated


def _mark_unicode_spaces(b: np.ndarray, space: np.ndarray) -> None:
    """Mark the bytes of the non-ASCII characters that str.split() splits on (U+0085, U+00A0,
    U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) as spaces."""
    lead = np.flatnonzero((b == 0xC2) | ((b >= 0xE1) & (b <= 0xE3)))
    if not len(lead):
        return
    padded = np.concatenate((b, np.zeros(2, dtype=np.uint8)))
    b0, b1, b2 = b[lead], padded[lead + 1], padded[lead + 2]
    two = (b0 == 0xC2) & ((b1 == 0x85) | (b1 == 0xA0))
    three = (
        ((b0 == 0xE1) & (b1 == 0x9A) & (b2 == 0x80))
        | ((b0 == 0xE2) & (b1 == 0x80) & (((b2 >= 0x80) & (b2 <= 0x8A)) | (b2 == 0xA8) | (b2 == 0xA9) | (b2 == 0xAF)))
        | ((b0 == 0xE2) & (b1 == 0x81) & (b2 == 0x9F))
        | ((b0 == 0xE3) & (b1 == 0x80) & (b2 == 0x80))
    )
    for width, found in ((2, two), (3, three)):
        starts = lead[found]
        for k in range(width):
            space[starts + k] = True


def _word_hashes(data: bytes) -> np.ndarray:
    """The hash of every word of *data*, in order, as :func:`~.simhash._word_hash` computes it."""
    b = np.frombuffer(data, dtype=np.uint8)
    space = _SPACE_TABLE[b]
    if not data.isascii():
        _mark_unicode_spaces(b, space)
    edges = np.flatnonzero(np.diff(np.concatenate(([True], space, [True])).astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]  # a word is [start, end)
    if not len(starts):
        return np.zeros(0, dtype=np.uint64)
    _POWERS.ensure(len(b) + 1)
    with np.errstate(over="ignore"):
        terms = (b.astype(np.uint64) + np.uint64(1)) * _POWERS.down[: len(b)]
        prefix = np.concatenate(([np.uint64(0)], np.cumsum(terms, dtype=np.uint64)))
        # sum over the word of (byte+1) * P**(end-1-j) = P**(end-1) * sum of (byte+1) * P**-j
        poly = _POWERS.up[ends - 1] * (prefix[ends] - prefix[starts])
        lengths = (ends - starts).astype(np.uint64)
        return _mix_array(poly ^ lengths)


def fingerprint(text: str) -> int:
    """:func:`~.simhash.simhash` of *text*."""
    hashes = _word_hashes(text.encode("utf-8", "surrogatepass"))
    count = len(hashes)
    n = min(SHINGLE, count)
    if not n:
        return 0
    grams = count - n + 1
    z = np.zeros(grams, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(n):
            z ^= _rotl_array(hashes[i : i + grams], _ROT[i])
        z = _mix_array(z ^ np.uint64(n))
    octets = z.astype("<u8").view(np.uint8).reshape(grams, 8)
    ones = np.concatenate([np.bincount(octets[:, c], minlength=256) @ _BYTE_BITS for c in range(8)])
    positive = (2 * ones - grams) > 0
    return sum(v for v, p in zip(_BIT_VALUES, positive.tolist(), strict=True) if p)
