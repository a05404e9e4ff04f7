"""SentencePiece's precompiled normalization rules (`precompiled_charsmap`), read in Python.

A SentencePiece model (and a Hugging Face `Precompiled` normalizer converted from one, as in T5,
ALBERT, XLNet and mBART) stores its normalization (e.g. `nmt_nfkc`) as one blob:

1. a little-endian uint32: the size in bytes of the trie that follows;
2. the trie: a Darts-clone double array of uint32 units, keyed by the UTF-8 bytes of the
   text to replace; each key's value is an offset into the blob below;
3. the replacements: NUL-terminated UTF-8 strings.

A unit packs its fields in bits: bit 8 says a key ends here (the value sits in the unit the
node's offset points at), the low byte (with bit 31) is the label a child must carry, and the
offset to the children is bits 10-31, shifted left 8 more when bit 9 is set.
"""

import struct


class PrecompiledCharsmap:
    """The replacement rules of a `precompiled_charsmap`, looked up by prefix.

    Args:
        charsmap: bytes. The blob (a SentencePiece model's `normalizer_spec.precompiled_charsmap`,
            or a Hugging Face `Precompiled` normalizer's `precompiled_charsmap` decoded from
            base64).

    Raises:
        ValueError: a blob too short for the trie size it declares.

    Example:
    >>> PrecompiledCharsmap(b"").matches("a")
    []
    """

    def __init__(self, charsmap):
        charsmap = bytes(charsmap)
        self._cache = {}
        if not charsmap:
            self._units, self._strings = (), b""
            return
        if len(charsmap) < 4:
            raise ValueError(f"precompiled_charsmap of {len(charsmap)} bytes has no trie size")
        (trie_size,) = struct.unpack_from("<I", charsmap)
        if trie_size % 4 or 4 + trie_size > len(charsmap):
            raise ValueError(
                f"precompiled_charsmap declares a trie of {trie_size} bytes; the blob holds "
                f"{len(charsmap) - 4}"
            )
        self._units = struct.unpack_from(f"<{trie_size // 4}I", charsmap, 4)
        self._strings = charsmap[4 + trie_size :]

    @staticmethod
    def _offset(unit):
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    def matches(self, text):
        """`(length in bytes, replacement)` of every key that is a prefix of `text`'s UTF-8,
        shortest first (Darts' common-prefix search)."""
        if not self._units:
            return []
        found = []
        data = text.encode("utf-8")
        units = self._units
        position = self._offset(units[0])
        for index, byte in enumerate(data):
            if byte == 0:
                break
            position ^= byte
            if position >= len(units):
                break
            unit = units[position]
            if unit & ((1 << 31) | 0xFF) != byte:  # the child's label
                break
            position ^= self._offset(unit)
            if unit >> 8 & 1:  # a key ends here; its value is in the unit at `position`
                value = units[position] & ((1 << 31) - 1)
                end = self._strings.index(b"\0", value)
                found.append((index + 1, self._strings[value:end].decode("utf-8")))
        return found

    def replacement(self, text):
        """What Hugging Face's `Precompiled` normalizer writes for a chunk `text`: the
        replacement of the shortest key that prefixes it, or None (spm_precompiled's
        `transform`, which reads the first result of the prefix search)."""
        if text not in self._cache:
            found = self.matches(text)
            if len(self._cache) < 100_000:
                self._cache[text] = found[0][1] if found else None
            return found[0][1] if found else None
        return self._cache[text]
