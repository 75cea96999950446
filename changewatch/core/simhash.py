"""64-bit simhash (Charikar) over word 3-grams, vectorised with NumPy.

Words are what ``str.split()`` gives, as UTF-8 bytes. A word's stable 64-bit hash is a
polynomial hash of its bytes modulo 2**64 passed through the SplitMix64 finaliser (never
Python's salted ``hash()``); a 3-gram's hash mixes its three word hashes with rotations and the
finaliser again. Written this way, every word hash of a page comes out of a handful of array
operations (prefix sums of byte-times-inverse-power terms), with no Python loop per word or per
gram.

:func:`simhash_reference` is the straightforward algorithm over the very same hashes: a Python
loop per byte, per gram and per bit. Both give identical fingerprints, which the tests check.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SHINGLE", "distance", "simhash", "simhash_reference"]

SHINGLE = 3
_MASK = (1 << 64) - 1
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_ROT = (0, 21, 42)
_P = 0x100000001B3  # FNV-1a's 64-bit prime: odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)
# What str.split() splits on in ASCII: whitespace and the separators \x1c-\x1f (beyond ASCII,
# see _mark_unicode_spaces).
_ASCII_SPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


# -- the reference: one Python operation at a time ------------------------------------------------

def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK if r else x


def _word_hash(word: bytes) -> int:
    h = 0
    for byte in word:
        h = (h * _P + byte + 1) & _MASK
    return _mix(h ^ len(word))


def _gram_hash(words: list[bytes]) -> int:
    z = 0
    for i, w in enumerate(words):
        z ^= _rotl(_word_hash(w), _ROT[i])
    return _mix(z ^ len(words))


def simhash_reference(text: str) -> int:
    """The straightforward algorithm: hash every gram, then add or subtract 1 per bit."""
    words = [w.encode("utf-8", "surrogatepass") for w in text.split()]
    n = min(SHINGLE, len(words))
    if not n:
        return 0
    weights = [0] * 64
    for i in range(len(words) - n + 1):
        h = _gram_hash(words[i : i + n])
        for bit in range(64):
            weights[bit] += 1 if (h >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if weights[bit] > 0)


# -- the vectorised version -------------------------------------------------------------------------

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
    """The hash of every word of *data*, in order, as :func:`_word_hash` computes it."""
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


def simhash(text: str) -> int:
    """64-bit simhash of *text*'s word 3-grams (fewer words: one gram of all of them).

    >>> simhash("the quick brown fox") == simhash_reference("the quick brown fox")
    True
    >>> simhash("")
    0
    """
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


def distance(a: int, b: int) -> int:
    """Hamming distance between two fingerprints."""
    return (a ^ b).bit_count()
