"""The order in which TensorFlow's CheckpointReader lists keys.

`get_variable_to_shape_map` / `get_variable_to_dtype_map` are a C++
`std::unordered_map<std::string, ...>` filled in the bundle's (sorted) key order and turned
into a Python dict by iterating it, so TF prints checkpoint keys in libstdc++'s hash-table
order (three keys come out reversed; more get shuffled by buckets). This replays that table:
`std::hash<std::string>` (libstdc++'s `_Hash_bytes`, a 64-bit Murmur2 variant), the prime
bucket counts of `_Prime_rehash_policy` (max load factor 1, growth x2), and where insertion
and rehashing link nodes into the table's single list.
"""

from __future__ import annotations

import bisect

_MASK = (1 << 64) - 1
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_SEED = 0xC70F6907
# libstdc++'s table for bucket counts under 14, then (a prefix of) its prime list.
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def string_hash(data: bytes) -> int:
    """libstdc++ `std::hash<std::string>` on 64-bit Linux."""
    n = len(data)
    aligned = n & ~7
    h = (_SEED ^ (n * _MUL)) & _MASK
    for i in range(0, aligned, 8):
        word = int.from_bytes(data[i:i + 8], "little")
        h ^= (_shift_mix((word * _MUL) & _MASK) * _MUL) & _MASK
        h = (h * _MUL) & _MASK
    if n & 7:
        h ^= int.from_bytes(data[aligned:], "little")
        h = (h * _MUL) & _MASK
    h = (_shift_mix(h) * _MUL) & _MASK
    return _shift_mix(h)


# libstdc++'s __prime_list (hashtable-aux.cc): the bucket counts from 14 on (to ~1e6 keys).
_PRIME_LIST = (
    17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113,
    127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359,
    383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193,
    1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739,
    4027, 4349, 4703, 5087, 5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113,
    12011, 12983, 14033, 15173, 16411, 17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727,
    33223, 35933, 38873, 42043, 45481, 49201, 53201, 57557, 62233, 67307, 72817, 78779, 85229,
    92203, 99733, 107897, 116731, 126271, 136607, 147793, 159871, 172933, 187091, 202409,
    218971, 236897, 256279, 277261, 299951, 324503, 351061, 379787, 410857, 444487, 480881,
    520241, 562841, 608903, 658753, 712697, 771049, 834181, 902483, 976369, 1056323, 1142821,
    1236397, 1337629, 1447153, 1565659, 1693859, 1832561, 1982627, 2144977)


def _next_bucket_count(n: int) -> int:
    """`_Prime_rehash_policy::_M_next_bkt(n)` (its next resize is the count: load 1)."""
    if n < len(_FAST_BUCKETS):
        return _FAST_BUCKETS[n]
    index = bisect.bisect_left(_PRIME_LIST, n)
    return _PRIME_LIST[index] if index < len(_PRIME_LIST) else n | 1


def unordered_map_order(keys) -> list:
    """`keys` inserted in this order into an empty unordered_map, in its iteration order."""
    head = object()             # the table's before-begin node
    nxt = {head: None}          # the singly linked node list
    before: dict = {}           # bucket -> the node before its first node
    hashes, bucket_of = {}, {}
    buckets, next_resize = 1, 0
    for count, key in enumerate(dict.fromkeys(keys)):
        hashes[key] = string_hash(key.encode() if isinstance(key, str) else key)
        if count + 1 > next_resize:   # _M_need_rehash(buckets, count, 1)
            # (a table's first insertion sizes it for 11 elements)
            wanted = max(count + 1, 11 if next_resize == 0 else 0)
            if wanted >= buckets:
                buckets = next_resize = _next_bucket_count(max(wanted + 1, buckets * 2))
                # _M_rehash_aux: walk the list, relinking each node into the new buckets
                node, nxt[head], before, front_bucket = nxt[head], None, {}, None
                while node is not None:
                    following = nxt[node]
                    b = bucket_of[node] = hashes[node] % buckets
                    if b in before:
                        nxt[node], nxt[before[b]] = nxt[before[b]], node
                    else:
                        nxt[node], nxt[head] = nxt[head], node
                        before[b] = head
                        if nxt[node] is not None:
                            before[front_bucket] = node
                        front_bucket = b
                    node = following
            else:
                next_resize = buckets
        # _M_insert_bucket_begin: first of its bucket, or the list's new front
        b = bucket_of[key] = hashes[key] % buckets
        if b in before:
            nxt[key], nxt[before[b]] = nxt[before[b]], key
        else:
            nxt[key], nxt[head] = nxt[head], key
            if nxt[key] is not None:
                before[bucket_of[nxt[key]]] = key
            before[b] = head
    order, node = [], nxt[head]
    while node is not None:
        order.append(node)
        node = nxt[node]
    return order
