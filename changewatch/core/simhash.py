"""64-bit simhash (Charikar) over word 3-grams, vectorised with NumPy.

Each word gets a stable 64-bit hash (BLAKE2b, never Python's salted ``hash()``); a 3-gram's hash
mixes its three word hashes with rotations and a SplitMix64 finaliser, so that gram hashes are
computed for the whole page in a few array operations instead of once per gram in Python.
:func:`simhash_reference` is the straightforward per-gram, per-bit loop over the very same gram
hashes: both give identical fingerprints, which the tests check.
"""

from __future__ import annotations

from hashlib import blake2b

import numpy as np

__all__ = ["distance", "simhash", "simhash_reference", "SHINGLE"]

SHINGLE = 3
_MASK = (1 << 64) - 1
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_ROT = (0, 21, 42)


def _word_hash(word: str) -> int:
    return int.from_bytes(blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK if r else x


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def _gram_hash(words: list[str]) -> int:
    z = 0
    for i, w in enumerate(words):
        z ^= _rotl(_word_hash(w), _ROT[i])
    return _mix(z ^ len(words))


def simhash_reference(text: str) -> int:
    """The straightforward algorithm: hash every gram, then add or subtract 1 per bit."""
    words = text.split()
    n = min(SHINGLE, len(words))
    if not n:
        return 0
    weights = [0] * 64
    for i in range(len(words) - n + 1):
        h = _gram_hash(words[i : i + n])
        for bit in range(64):
            weights[bit] += 1 if (h >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if weights[bit] > 0)


def _rotl_array(x: np.ndarray, r: int) -> np.ndarray:
    if not r:
        return x
    rotated: np.ndarray = (x << np.uint64(r)) | (x >> np.uint64(64 - r))
    return rotated


def _mix_array(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


_BIT_VALUES = [1 << b for b in range(64)]
# Row v holds the 8 bits of byte value v: a histogram of byte values times this matrix counts
# the set bits per position, far cheaper than unpacking every hash into 64 bits.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int64)


def _word_hashes(words: list[str]) -> np.ndarray:
    """Stable hash of every word, computing each distinct word's hash once."""
    distinct = dict.fromkeys(words)
    digests = b"".join([blake2b(w.encode("utf-8", "surrogatepass"), digest_size=8).digest() for w in distinct])
    table = np.frombuffer(digests, dtype="<u8").astype(np.uint64)
    index = {w: i for i, w in enumerate(distinct)}
    picked: np.ndarray = table[np.fromiter(map(index.__getitem__, words), dtype=np.intp, count=len(words))]
    return picked


def simhash(text: str) -> int:
    """64-bit simhash of *text*'s word 3-grams (fewer words: one gram of all of them).

    >>> simhash("the quick brown fox") == simhash_reference("the quick brown fox")
    True
    >>> simhash("")
    0
    """
    words = text.split()
    n = min(SHINGLE, len(words))
    if not n:
        return 0
    hashes = _word_hashes(words)
    grams = len(words) - n + 1
    z = np.zeros(grams, dtype=np.uint64)
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
