"""The log's Merkle tree against RFC 9162's construction: trees computed by hand here, the test
vectors published with Certificate Transparency's reference implementation (RFC 6962's tree, which
RFC 9162 keeps), and the RFC's recursive definitions of the tree hash, the audit path and the
consistency proof, written out below and compared with what the stored nodes give for every
small tree. Pure functions: no database."""

from __future__ import annotations

import hashlib

import pytest

from casefile.audit import merkle

# Leaf data of the reference implementation's tests, and the roots of its first 1 to 8 leaves.
DATA = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43", bytes(range(0x50, 0x58))]
DATA.append(bytes(range(0x60, 0x70)))
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
INCLUSION = {  # (leaf index, tree size): audit path
    (0, 8): [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ],
    (5, 8): [
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ],
    (2, 3): ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
    (1, 5): [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    ],
}
CONSISTENCY = {  # (first, second): consistency path
    (1, 8): INCLUSION[(0, 8)],
    (6, 8): [
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ],
    (2, 5): [
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    ],
}


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


# --- the RFC's definitions, written out (section 2.1) -------------------------------------------


def mth(leaves: list[bytes]) -> bytes:
    """MTH over leaf *data*."""
    if not leaves:
        return sha(b"")
    if len(leaves) == 1:
        return sha(b"\x00" + leaves[0])
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return sha(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def path(m: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if m < k:
        return [*path(m, leaves[:k]), mth(leaves[k:])]
    return [*path(m - k, leaves[k:]), mth(leaves[:k])]


def subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [mth(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*subproof(m, leaves[:k], whole), mth(leaves[k:])]
    return [*subproof(m - k, leaves[k:], False), mth(leaves[:k])]


def stored(data: list[bytes]) -> dict[merkle.NodeKey, bytes]:
    """The nodes the sequencer stores for a log of `data`, appended one at a time."""
    frontier, nodes = merkle.Frontier(), {}
    for item in data:
        nodes.update(frontier.append(merkle.leaf_hash(item)))
    return nodes


def many(n: int) -> list[bytes]:
    return [f"entry {i}".encode() for i in range(n)]


# --- the tests ------------------------------------------------------------------------------------


def test_small_trees_by_hand() -> None:
    a = b"a"
    la, lb, lc = sha(b"\x00a"), sha(b"\x00b"), sha(b"\x00c")
    assert merkle.leaf_hash(a) == la and sha(b"") == merkle.EMPTY_ROOT
    assert merkle.root_of([la]) == la
    assert merkle.root_of([la, lb]) == sha(b"\x01" + la + lb)
    # Three leaves: the first two (the largest power of two below 3) left, the third right.
    assert merkle.root_of([la, lb, lc]) == sha(b"\x01" + sha(b"\x01" + la + lb) + lc)
    frontier = merkle.Frontier()
    made = [frontier.append(leaf) for leaf in (la, lb, lc)]
    assert made[1] == [((0, 1), lb), ((1, 0), sha(b"\x01" + la + lb))]  # the pair completed
    assert frontier.root() == merkle.root_of([la, lb, lc])
    nodes = {key: value for step in made for key, value in step}
    assert [merkle.range_hash(s, e, nodes) for s, e in merkle.inclusion_ranges(2, 3)] == [
        sha(b"\x01" + la + lb)
    ]
    assert [merkle.range_hash(s, e, nodes) for s, e in merkle.inclusion_ranges(0, 3)] == [lb, lc]


def test_the_published_roots_and_proofs() -> None:
    nodes = stored(DATA)
    leaves = [merkle.leaf_hash(d) for d in DATA]
    for n, expected in enumerate(ROOTS, start=1):
        frontier = merkle.Frontier.of(n, nodes)
        assert frontier.root().hex() == expected == merkle.root_of(leaves[:n]).hex()
    for (m, n), expected in INCLUSION.items():
        got = [merkle.range_hash(s, e, nodes).hex() for s, e in merkle.inclusion_ranges(m, n)]
        assert got == expected
        assert merkle.root_from_inclusion(m, n, leaves[m], [bytes.fromhex(p) for p in got]) == bytes.fromhex(
            ROOTS[n - 1]
        )
    for (m, n), expected in CONSISTENCY.items():
        got = [merkle.range_hash(s, e, nodes).hex() for s, e in merkle.consistency_ranges(m, n)]
        assert got == expected
        proof = [bytes.fromhex(p) for p in got]
        assert merkle.consistent(m, n, bytes.fromhex(ROOTS[m - 1]), bytes.fromhex(ROOTS[n - 1]), proof)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33])
def test_every_proof_of_a_small_tree_is_the_rfcs(n: int) -> None:
    data = many(n)
    nodes = stored(data)
    root = mth(data)
    assert merkle.Frontier.of(n, nodes).root() == root
    for m in range(n):
        proof = [merkle.range_hash(s, e, nodes) for s, e in merkle.inclusion_ranges(m, n)]
        assert proof == path(m, data)
        leaf = merkle.leaf_hash(data[m])
        assert merkle.root_from_inclusion(m, n, leaf, proof) == root
        assert merkle.root_from_inclusion(m, n, merkle.leaf_hash(b"forged"), proof) != root
        if proof:
            bent = [proof[0][:-1] + bytes([proof[0][-1] ^ 1]), *proof[1:]]
            assert merkle.root_from_inclusion(m, n, leaf, bent) != root
    for first in range(1, n + 1):
        proof = [merkle.range_hash(s, e, nodes) for s, e in merkle.consistency_ranges(first, n)]
        assert proof == subproof(first, data, True)
        old = mth(data[:first])
        assert merkle.consistent(first, n, old, root, proof)
        if first < n:
            assert not merkle.consistent(first, n, mth([b"rewritten", *data[1:first]]), root, proof)
            assert not merkle.consistent(first, n, old, mth([*data[:-1], b"changed"]), proof)


def test_perfect_parts_are_aligned_subtrees() -> None:
    assert merkle.perfect_parts(0, 13) == [(3, 0), (2, 2), (0, 12)]
    assert merkle.perfect_parts(8, 13) == [(2, 2), (0, 12)]
    assert merkle.perfect_parts(12, 14) == [(1, 6)]
