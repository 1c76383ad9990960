"""The JSON line scanner's loops, compiled by numba (imported only when numba is; see
:mod:`driftwatch.connectors.jsonscan` for the path tree they walk and what they give).

One pass over each line's bytes validates it as a JSON object and copies the mapped
paths' values into column arrays; nothing else is built. A line the scanner cannot take
*exactly* as orjson would is refused, never guessed at, and goes to the other parsers:

* anything that is not JSON (what orjson rejects), including a trailing comma, a bare
  ``NaN``, a leading zero, a control character or invalid UTF-8 inside a string, or a
  nesting deeper than :data:`MAX_DEPTH`;
* a ``\\u`` escape anywhere (orjson's surrogate rules are not repeated here), and any
  escape or a duplicate within a mapped key or text value;
* a mapped value of another type than its column's, an object or array where a value is
  mapped, or a mapped parent that is neither an object nor ``null``;
* a mapped number that is not exactly a double by Clinger's fast path (at most 2**53 as
  an integer mantissa, a power of ten within 1e±22); an exponent beyond ±300 anywhere.

A mapped number is then the correctly rounded double (one exact product or quotient),
as orjson's; an integer column takes integers of up to 18 digits.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from driftwatch.numba_setup import compiled

__all__ = ["K_BOOL", "K_FLOAT", "K_INT", "K_NULL", "K_TEXT", "MAX_DEPTH", "gather_texts", "scan"]

K_FLOAT, K_INT, K_TEXT, K_BOOL, K_NULL = 0, 1, 2, 3, 4
#: Deeper nesting is refused (orjson's limit is 1024)
MAX_DEPTH = 512
_POW10 = np.array([10.0**i for i in range(23)])
_EXACT = 1 << 53
# 64-bit FNV-1a, as jsonscan.fnv1a hashes the names when it builds the tables
_FNV_BASIS = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
# no reference counts: every helper takes the line's arrays, once per line or value, and
# each hand-over would take and drop an atomic reference to each (see numba_setup)
_jit = compiled(inline="always", refcounts=False)
_TRUE = np.frombuffer(b"true", dtype=np.uint8)
_FALSE = np.frombuffer(b"false", dtype=np.uint8)
_NULL = np.frombuffer(b"null", dtype=np.uint8)
_LITTLE = sys.byteorder == "little"


@_jit
def _u(i):  # type: ignore[no-untyped-def]
    """An index into a line's bytes or the names, as unsigned: numba indexes an array by a
    signed integer only after checking it for a negative one (counted from the end),
    three more instructions on every byte read, a third of the scanner's time."""
    return np.uint64(i)


@intrinsic
def _word(typingctx, arr, i):  # type: ignore[no-untyped-def]
    """The eight bytes ``arr[i:i + 8]`` of a contiguous byte array as one integer, in the
    machine's byte order (one unaligned load); the caller keeps them inside ``arr``."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and arr.ndim == 1
            and arr.layout == "C" and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        at = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(ary.data, [at]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return types.uint64(arr, i), codegen


@_jit
def _ws(buf, p, end):  # type: ignore[no-untyped-def]
    while p < end:
        c = buf[_u(p)]
        if c > 32 or not (c == 32 or c == 9 or c == 13 or c == 10):
            break
        p += 1
    return p


@_jit
def _lit(buf, p, end, word):  # type: ignore[no-untyped-def]
    """The position after the literal ``word`` (true, false, null) at ``p``, or -1."""
    n = len(word)
    if p + n > end:
        return -1
    for i in range(n):
        if buf[_u(p + i)] != word[i]:
            return -1
    return p + n


@_jit
def _text(buf, p, end):  # type: ignore[no-untyped-def]
    """``p`` just after an opening quote: (position after the closing quote, position of
    the closing quote, 0 plain / 1 with escapes / -1 refused)."""
    esc = 0
    while p < end:
        c = buf[_u(p)]
        if 93 <= c <= 127:  # lower-case letters and the like: no quote, escape or control
            p += 1
            continue
        if c == 34:
            return p + 1, p, esc
        if c == 92:
            if p + 1 >= end:
                return p, p, -1
            d = buf[_u(p + 1)]
            if (d == 34 or d == 92 or d == 47 or d == 98 or d == 102 or d == 110
                    or d == 114 or d == 116):
                esc = 1
                p += 2
                continue
            return p, p, -1  # \u (surrogates) or not an escape
        if c < 32:
            return p, p, -1
        if c >= 0x80:
            p = _utf8(buf, p, end)
            if p < 0:
                return p, p, -1
            continue
        p += 1
    return p, p, -1


@_jit
def _utf8(buf, p, end):  # type: ignore[no-untyped-def]
    """The position after the UTF-8 sequence at ``p`` (a lead byte), or -1 where it is
    not valid UTF-8 (overlong, a surrogate, past U+10FFFF, cut short), as orjson says."""
    c = buf[_u(p)]
    if 0xC2 <= c <= 0xDF:
        n, lo, hi = 1, 0x80, 0xBF
    elif c == 0xE0:
        n, lo, hi = 2, 0xA0, 0xBF
    elif c == 0xED:
        n, lo, hi = 2, 0x80, 0x9F
    elif 0xE1 <= c <= 0xEF:
        n, lo, hi = 2, 0x80, 0xBF
    elif c == 0xF0:
        n, lo, hi = 3, 0x90, 0xBF
    elif 0xF1 <= c <= 0xF3:
        n, lo, hi = 3, 0x80, 0xBF
    elif c == 0xF4:
        n, lo, hi = 3, 0x80, 0x8F
    else:
        return -1
    if p + n >= end:
        return -1
    if not (lo <= buf[_u(p + 1)] <= hi):
        return -1
    for i in range(2, n + 1):
        if not (0x80 <= buf[_u(p + i)] <= 0xBF):
            return -1
    return p + n + 1


@_jit
def _number(buf, p, end):  # type: ignore[no-untyped-def]
    """A JSON number at ``p``: (position after, status, double, integer, is an integer).

    Status 0: the double is exact (and the integer, for an integer of at most 18 digits);
    1: valid JSON but not converted here; -1: not a JSON number.
    """
    neg = False
    if p < end and buf[_u(p)] == 45:
        neg = True
        p += 1
    if p >= end:
        return p, -1, 0.0, 0, False
    c = buf[_u(p)]
    mant = 0
    nd = 0
    exp10 = 0
    lost = False
    if c == 48:
        p += 1
    elif 49 <= c <= 57:
        while p < end and 48 <= buf[_u(p)] <= 57:
            if nd < 18:
                mant = mant * 10 + (buf[_u(p)] - 48)
                nd += 1
            else:
                lost = True
                exp10 += 1
            p += 1
    else:
        return p, -1, 0.0, 0, False
    is_int = True
    if p < end and buf[_u(p)] == 46:
        is_int = False
        p += 1
        if p >= end or not (48 <= buf[_u(p)] <= 57):
            return p, -1, 0.0, 0, False
        while p < end and 48 <= buf[_u(p)] <= 57:
            d = buf[_u(p)] - 48
            if mant == 0 and d == 0:
                exp10 -= 1
            elif nd < 18:
                mant = mant * 10 + d
                nd += 1
                exp10 -= 1
            else:
                lost = True
            p += 1
    if p < end and (buf[_u(p)] == 101 or buf[_u(p)] == 69):
        is_int = False
        p += 1
        eneg = False
        if p < end and (buf[_u(p)] == 43 or buf[_u(p)] == 45):
            eneg = buf[_u(p)] == 45
            p += 1
        if p >= end or not (48 <= buf[_u(p)] <= 57):
            return p, -1, 0.0, 0, False
        e = 0
        while p < end and 48 <= buf[_u(p)] <= 57:
            if e < 100000:
                e = e * 10 + (buf[_u(p)] - 48)
            p += 1
        exp10 += -e if eneg else e
    if exp10 + nd > 300 or exp10 < -300:
        return p, -1, 0.0, 0, False  # orjson refuses an infinite double: not judged here
    if lost or mant > _EXACT or exp10 > 22 or exp10 < -22:
        return p, 1, 0.0, 0, is_int
    if mant == 0:
        v = -0.0 if (neg and not is_int) else 0.0
    elif exp10 >= 0:
        v = np.float64(mant) * _POW10[exp10]
    else:
        v = np.float64(mant) / _POW10[-exp10]
    if neg and mant != 0:
        v = -v
        mant = -mant
    return p, 0, v, mant, is_int


@_jit
def _scalar(buf, p, end):  # type: ignore[no-untyped-def]
    """Validate an unmapped scalar at ``p``: the position after it, or -1."""
    c = buf[_u(p)]
    if c == 34:
        q, _, fl = _text(buf, p + 1, end)
        return -1 if fl < 0 else q
    if c == 116:
        return _lit(buf, p, end, _TRUE)
    if c == 102:
        return _lit(buf, p, end, _FALSE)
    if c == 110:
        return _lit(buf, p, end, _NULL)
    q, status, _, _, _ = _number(buf, p, end)
    return -1 if status < 0 else q


@_jit
def _leaf(buf, p, end, kind, col, slot, k, fv, iv, s0, s1, valid):  # type: ignore[no-untyped-def]
    """Read a mapped value of ``kind`` at ``p`` into row ``k`` of column ``col`` (column
    ``slot`` of the arrays for its kind): the position after it, or -1 (refused)."""
    c = buf[_u(p)]
    if c == 110:
        return _lit(buf, p, end, _NULL)  # null: the cell stays invalid
    if kind == K_TEXT:
        if c != 34:
            return -1
        q, qe, fl = _text(buf, p + 1, end)
        if fl != 0:
            return -1
        s0[k, slot] = p + 1
        s1[k, slot] = qe
        valid[k, col] = 1
        return q
    if kind == K_BOOL:
        q = _lit(buf, p, end, _TRUE)
        if q >= 0:
            fv[k, slot] = 1.0
        else:
            q = _lit(buf, p, end, _FALSE)
            fv[k, slot] = 0.0
        if q >= 0:
            valid[k, col] = 1
        return q
    if kind == K_NULL:
        return -1  # only null is taken
    if c != 45 and not (48 <= c <= 57):
        return -1
    q, status, v, iv_, is_int = _number(buf, p, end)
    if status != 0:
        return -1
    if kind == K_FLOAT:
        fv[k, slot] = v
    else:
        if not is_int:
            return -1
        iv[k, slot] = iv_
    valid[k, col] = 1
    return q


@_jit
def _key_text(buf, p, end):  # type: ignore[no-untyped-def]
    """A key in a mapped object, ``p`` just after its opening quote: (position after the
    closing quote, its FNV-1a hash), hashed as it is read; position -1 where the key has an
    escape (it might name a mapped path) or is no valid JSON text, as :func:`_text` says."""
    h = _FNV_BASIS
    while p < end:
        c = buf[_u(p)]
        if c == 34:
            return p + 1, h
        if c == 92 or c < 32:
            return -1, h
        if c >= 0x80:
            q = _utf8(buf, p, end)
            if q < 0:
                return -1, h
            for t in range(p, q):
                h = (h ^ np.uint64(buf[_u(t)])) * _FNV_PRIME
            p = q
            continue
        h = (h ^ np.uint64(c)) * _FNV_PRIME
        p += 1
    return -1, h


@_jit
def _predicted(buf, p, end, child, koff, klen, keys):  # type: ignore[no-untyped-def]
    """``p`` just after a key's opening quote: the position after its closing quote where
    the key is exactly ``child``'s name, else -1 (and -1 for no child).

    Only a child :func:`_key` found from a key :func:`_key_text` read is ever predicted,
    so the name holds no quote, backslash or control byte and is valid UTF-8: the bytes
    equal and a quote after them, :func:`_key_text` and :func:`_key` would have read the
    same key and found the same child. The name and the quote that follows it in ``keys``
    are compared at once, eight bytes at a time (``keys`` ends in eight spare bytes)."""
    if child < 0:
        return -1
    n = klen[child] + 1  # and the closing quote
    if p + n > end:
        return -1
    o = koff[child]
    if p + 8 > buf.size:  # the last line's bytes: one at a time
        for t in range(n):
            if buf[_u(p + t)] != keys[_u(o + t)]:
                return -1
        return p + n
    if n <= 8:  # one word, the bytes past the quote left out
        x = _word(buf, p) ^ _word(keys, o)
        drop = np.uint64(64 - 8 * n)
        return -1 if (x << drop if _LITTLE else x >> drop) != 0 else p + n
    t = 0
    while t < n - 8:
        if _word(buf, p + t) != _word(keys, o + t):
            return -1
        t += 8
    return -1 if _word(buf, p + n - 8) != _word(keys, o + n - 8) else p + n  # overlapping


@_jit
def _key(buf, ks, kl, h, node, hoff, hmask, htab, koff, klen, keys):  # type: ignore[no-untyped-def]
    """The child of tree ``node`` named by ``buf[ks:ks+kl]`` (of FNV-1a hash ``h``), or -1:
    linear probing in the node's slice of ``htab`` (a power of two, at most half full), so
    an object of hundreds of mapped keys costs no more per key than one of few."""
    mask = hmask[node]
    slot = np.int64(h & np.uint64(mask))
    base = hoff[node]
    while True:
        ch = htab[base + slot]
        if ch < 0:
            return -1
        if klen[ch] == kl:
            o = koff[ch]
            same = True
            for t in range(kl):
                if keys[_u(o + t)] != buf[_u(ks + t)]:
                    same = False
                    break
            if same:
                return ch
        slot = (slot + 1) & mask


@_jit
def _row(buf, p, end, k, mark, tree, kinds, slots, fv, iv, s0, s1, valid, seen, st_node,  # type: ignore[no-untyped-def]
         st_arr, st_last, after):
    """Parse one line at ``buf[p:end]`` into row ``k``: True when taken.

    In a mapped object ``st_last`` holds the last mapped child read (or, before the first,
    the number of children plus the node), and ``after[that]`` the child that came next
    last time: its name is compared first (see :func:`_predicted`)."""
    hoff, hmask, htab, koff, klen, keys, cnode, ccol = tree
    p = _ws(buf, p, end)
    if p >= end or buf[_u(p)] != 123:
        return False
    p += 1
    depth = 0
    st_node[0] = 0
    st_arr[0] = 0
    st_last[0] = klen.size
    state = 0  # 0 key or "}", 1 key, 2 value or "]", 3 value, 4 after a value
    while True:
        p = _ws(buf, p, end)
        if p >= end:
            return False
        c = buf[_u(p)]
        if state == 4:
            if st_arr[depth] == 0:
                if c == 44:
                    state = 1
                    p += 1
                    continue
                if c != 125:
                    return False
            else:
                if c == 44:
                    state = 3
                    p += 1
                    continue
                if c != 93:
                    return False
            p += 1
            depth -= 1
            if depth < 0:
                return _ws(buf, p, end) == end
            continue
        node = -1
        if state <= 1:  # an object's key, then its value
            if c == 125 and state == 0:
                p += 1
                depth -= 1
                if depth < 0:
                    return _ws(buf, p, end) == end
                state = 4
                continue
            if c != 34:
                return False
            child = -1
            if st_node[depth] >= 0:  # a key that may name a mapped path
                prev = st_last[depth]
                child = after[prev]
                q = _predicted(buf, p + 1, end, child, koff, klen, keys)
                if q < 0:  # not the key that came next last time: hashed as read
                    q, h = _key_text(buf, p + 1, end)
                    if q < 0:
                        return False  # invalid, or an escape that might name a mapped path
                    child = _key(buf, p + 1, q - p - 2, h, st_node[depth], hoff, hmask, htab,
                                 koff, klen, keys)
                    if child >= 0:
                        after[prev] = child
                if child >= 0:
                    st_last[depth] = child
            else:
                q, _, fl = _text(buf, p + 1, end)
                if fl < 0:
                    return False
            p = _ws(buf, q, end)
            if p >= end or buf[_u(p)] != 58:
                return False
            p = _ws(buf, p + 1, end)
            if p >= end:
                return False
            c = buf[_u(p)]
            if child >= 0:
                if seen[child] == mark:
                    return False  # a mapped key twice (orjson keeps the last one)
                seen[child] = mark
                col = ccol[child]
                if col >= 0:
                    p = _leaf(buf, p, end, kinds[col], col, slots[col], k, fv, iv, s0, s1, valid)
                    if p < 0:
                        return False
                    state = 4
                    continue
                if c == 110:
                    p = _lit(buf, p, end, _NULL)
                    if p < 0:
                        return False
                    state = 4
                    continue
                if c != 123:
                    return False
                node = cnode[child]
        elif c == 93 and state == 2:
            p += 1
            depth -= 1
            state = 4
            continue
        # a value: a container to enter, or an unmapped scalar
        if c == 123 or c == 91:
            depth += 1
            if depth >= MAX_DEPTH:
                return False
            st_node[depth] = node
            st_last[depth] = klen.size + node
            st_arr[depth] = 0 if c == 123 else 1
            state = 0 if c == 123 else 2
            p += 1
            continue
        p = _scalar(buf, p, end)
        if p < 0:
            return False
        state = 4


def scan(buf, starts, ends, tree, kinds, slots, fv, iv, s0, s1, valid, taken):  # type: ignore[no-untyped-def]
    """Scan the lines ``buf[starts[i]:ends[i]]``; the lines taken fill rows 0, 1, ... of the
    column arrays and ``taken`` holds their indices. Returns how many were taken.

    Column ``c`` (of kind ``kinds[c]``) is column ``slots[c]`` of ``fv`` (doubles and
    booleans), ``iv`` (integers) or ``s0``/``s1`` (a text's span in ``buf``); ``valid[:, c]``
    says which of its cells hold a value (the others are null or absent). Every array has
    a row per line, so a line's values are written close together."""
    seen = np.zeros(max(tree[3].size, 1), np.int64)
    st_node = np.empty(MAX_DEPTH + 1, np.int64)
    st_arr = np.empty(MAX_DEPTH + 1, np.uint8)
    st_last = np.empty(MAX_DEPTH + 1, np.int64)
    # lines of a stream repeat their keys' order: the child read after each child (and
    # first in each node, at the number of children plus the node) on the last line
    after = np.full(tree[3].size + tree[0].size, -1, np.int64)
    return _scan(buf, starts, ends, tree, kinds, slots, fv, iv, s0, s1, valid, taken, seen,
                 st_node, st_arr, st_last, after)


@compiled(refcounts=False)
def _scan(buf, starts, ends, tree, kinds, slots, fv, iv, s0, s1, valid, taken, seen,  # type: ignore[no-untyped-def]
          st_node, st_arr, st_last, after):
    """:func:`scan` with its scratch: ``seen`` (a mark per path node), the nesting stack
    (a node, object or array, and the last mapped child read), the predicted next keys."""
    n_cols = kinds.size
    k = 0
    for r in range(starts.size):
        for col in range(n_cols):
            valid[k, col] = 0
        if _row(buf, starts[r], ends[r], k, r + 1, tree, kinds, slots, fv, iv, s0, s1, valid, seen,
                st_node, st_arr, st_last, after):
            taken[k] = r
            k += 1
    return k


@compiled()
def gather_texts(buf, s0, s1, valid, cols, n, offsets):  # type: ignore[no-untyped-def]
    """Arrow's text layout for every text column at once, in one pass over the rows (a
    row's cells lie together in ``buf``, so each line is read from memory once, not once a
    column): text slot ``t`` is column ``cols[t]`` of ``valid``, its spans ``s0[:, t]`` to
    ``s1[:, t]``. Fills ``offsets[t]`` (n + 1 each, from 0) and returns the bytes, column
    after column, and where each column's bytes start in them (T + 1 entries)."""
    n_text = s0.shape[1]
    at = np.zeros(n_text + 1, np.int64)
    for t in range(n_text):
        c = cols[t]
        total = 0
        for i in range(n):
            if valid[i, c]:
                total += s1[i, t] - s0[i, t]
        at[t + 1] = at[t] + total
    data = np.empty(at[n_text], np.uint8)
    pos = at[:n_text].copy()
    for t in range(n_text):
        offsets[t, 0] = 0
    for i in range(n):
        for t in range(n_text):
            o = pos[t]
            if valid[i, cols[t]]:
                for x in range(s0[i, t], s1[i, t]):
                    data[o] = buf[x]
                    o += 1
                pos[t] = o
            offsets[t, i + 1] = o - at[t]
    return data, at
