"""64-bit simhash (Charikar) over word 3-grams, vectorised with NumPy (:mod:`._simhash_numpy`,
imported on the first fingerprint: a worker that only keeps baselines never needs it).

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

__all__ = ["SHINGLE", "distance", "simhash", "simhash_reference"]

SHINGLE = 3
_MASK = (1 << 64) - 1
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_ROT = (0, 21, 42)
_P = 0x100000001B3  # FNV-1a's 64-bit prime: odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)
# What str.split() splits on in ASCII: whitespace and the separators \x1c-\x1f (beyond ASCII,
# see _simhash_numpy._mark_unicode_spaces).
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


def simhash(text: str) -> int:
    """64-bit simhash of *text*'s word 3-grams (fewer words: one gram of all of them).

    >>> simhash("the quick brown fox") == simhash_reference("the quick brown fox")
    True
    >>> simhash("")
    0
    """
    from ._simhash_numpy import fingerprint

    return fingerprint(text)


def distance(a: int, b: int) -> int:
    """Hamming distance between two fingerprints."""
    return (a ^ b).bit_count()
