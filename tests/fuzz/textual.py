"""Textual mutations: damage the bytes of a file, or add a file.

Each takes a random generator and a tree and returns the mutated tree with a one-line
description, or None where it does not apply.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tests.fuzz.corpus import KINDS, ODD_FILE_NAMES, YAML_SNIPPETS
from tests.fuzz.documents import Mutated, Mutation, dump
from tests.fuzz.seeds import PolicyTree
from tests.fuzz.values import value

Edit = Callable[[random.Random, bytes], tuple[bytes, str]]


def _on_a_file(edit: Edit) -> Mutation:
    """A mutation that applies `edit` to one random file of the tree."""

    def mutation(rng: random.Random, tree: PolicyTree) -> Mutated:
        file = rng.choice(sorted(tree))
        content, what = edit(rng, tree[file])
        return {**tree, file: content}, f"{file} {what}"

    mutation.__doc__ = edit.__doc__
    return mutation


def _position(rng: random.Random, content: bytes) -> int:
    return rng.choice([0, len(content), rng.randint(0, len(content))])


def flip_bytes(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Flip a bit in one to four bytes."""
    data = bytearray(content)
    if not data:
        return b"\x80", "flipped (empty file)"
    spots = [rng.randrange(len(data)) for _ in range(rng.randint(1, 4))]
    for spot in spots:
        data[spot] ^= 1 << rng.randrange(8)
    return bytes(data), f"bits flipped at {spots}"


def truncate(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Cut the file short (mid-line, mid-character)."""
    end = rng.randint(0, len(content))
    return content[:end], f"truncated at {end}"


def insert_bytes(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Insert random bytes."""
    at = _position(rng, content)
    noise = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return content[:at] + noise + content[at:], f"{noise!r} inserted at {at}"


def snippet(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Insert a YAML hazard (anchor, alias, tag, directive, indicator, escape)."""
    at = _position(rng, content)
    chosen = rng.choice(YAML_SNIPPETS)
    encoded = chosen.encode("utf-8", "surrogatepass")
    return content[:at] + encoded + content[at:], f"{chosen[:30]!r} inserted at {at}"


def splice_lines(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Drop, repeat, swap or reverse lines."""
    lines = content.split(b"\n")
    line = rng.randrange(len(lines))
    choice = rng.choice(["drop", "repeat", "swap", "reverse", "join"])
    if choice == "drop":
        del lines[line : line + rng.randint(1, 3)]
    elif choice == "repeat":
        lines[line:line] = lines[line : line + rng.randint(1, 3)]
    elif choice == "swap":
        other = rng.randrange(len(lines))
        lines[line], lines[other] = lines[other], lines[line]
    elif choice == "reverse":
        lines[line : line + 4] = lines[line : line + 4][::-1]
    elif line + 1 < len(lines):
        lines[line : line + 2] = [lines[line] + b" " + lines[line + 1].lstrip()]
    return b"\n".join(lines), f"line {line + 1}: {choice}"


def indent(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Change the indentation of a few lines (more, less, a tab)."""
    lines = content.split(b"\n")
    line = rng.randrange(len(lines))
    count = rng.randint(1, 4)
    choice = rng.choice(["more", "less", "tab", "odd"])
    for at in range(line, min(line + count, len(lines))):
        if choice == "more":
            lines[at] = b"  " + lines[at]
        elif choice == "less":
            lines[at] = lines[at][2:] if lines[at].startswith(b"  ") else lines[at].lstrip()
        elif choice == "tab":
            lines[at] = b"\t" + lines[at].lstrip(b" ")
        else:
            lines[at] = b" " + lines[at]
    return b"\n".join(lines), f"lines {line + 1}-{line + count}: indent {choice}"


def bom(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """A byte order mark: at the start, in the middle, twice, or the file in UTF-16."""
    choice = rng.choice(["start", "middle", "twice", "utf-16", "utf-32"])
    if choice == "start":
        return b"\xef\xbb\xbf" + content, "BOM at the start"
    if choice == "twice":
        return b"\xef\xbb\xbf\xef\xbb\xbf" + content, "two BOMs"
    if choice == "middle":
        at = content.find(b"\n", len(content) // 2) + 1
        return content[:at] + b"\xef\xbb\xbf" + content[at:], f"BOM at {at}"
    text = content.decode("utf-8", "surrogateescape")
    encoded = text.encode("utf-16" if choice == "utf-16" else "utf-32", "surrogatepass")
    return encoded, f"re-encoded in {choice}"


def line_endings(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """CRLF or CR line endings, everywhere or on one line."""
    choice = rng.choice(["crlf", "cr", "one-crlf", "one-cr", "mixed"])
    if choice == "crlf":
        return content.replace(b"\n", b"\r\n"), "CRLF line endings"
    if choice == "cr":
        return content.replace(b"\n", b"\r"), "CR line endings"
    lines = content.split(b"\n")
    line = rng.randrange(len(lines))
    ending = b"\r\r" if choice == "mixed" else b"\r"
    if choice == "one-cr":
        lines[line] += b"\r" + lines.pop(line + 1) if line + 1 < len(lines) else b"\r"
    else:
        lines[line] += ending
    return b"\n".join(lines), f"line {line + 1}: {choice}"


def nul(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """NUL bytes: one, or a run of them."""
    at = _position(rng, content)
    run = b"\x00" * rng.choice([1, 1, 2, 100])
    return content[:at] + run + content[at:], f"{len(run)} NUL at {at}"


def invalid_utf8(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Bytes that are no UTF-8: a lone continuation byte, a cut sequence, an overlong
    form, an encoded surrogate, a Latin-1 character."""
    at = _position(rng, content)
    chosen = rng.choice(
        [b"\x80", b"\xff", b"\xc3", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe9"]
    )
    return content[:at] + chosen + content[at:], f"{chosen!r} at {at}"


def control(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Terminal escapes and C0/C1 controls written raw into the text."""
    at = _position(rng, content)
    chosen = rng.choice(
        [b"\x1b[31m", b"\x1b]0;x\x07", b"\x07", b"\x08", b"\x0c", b"\xc2\x9b", b"\x7f"]
    )
    return content[:at] + chosen + content[at:], f"{chosen!r} at {at}"


def empty(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Nothing, or only blanks, a separator or a comment."""
    chosen = rng.choice(
        [b"", b"   \n\t \n", b"---\n", b"# only a comment\n", b"---\n---\n", b"~\n"]
    )
    return chosen, f"replaced by {chosen!r}"


def random_yaml(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Documents of random YAML values."""
    return dump([value(rng) for _ in range(rng.randint(1, 3))]), "replaced by random YAML"


def deep(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Deeply nested flow or block collections."""
    depth = rng.choice([63, 64, 65, 200, 1000, 10_000, 100_000])
    opener = rng.choice(["[", "{a: ", "- ", "? "])
    if opener == "- ":
        text = "".join("  " * level + "-\n" for level in range(min(depth, 2000)))
    else:
        text = "a: " + opener * depth
    return text.encode(), f"nested {depth} deep with {opener.strip()!r}"


def alias_bomb(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Billion laughs: each level's list repeats the one before `width` times."""
    width, levels = rng.randint(2, 10), rng.randint(2, 12)
    lines = ["a0: &a0 [x]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)
    ]
    return ("\n".join(lines) + "\n").encode(), f"alias bomb {width}^{levels}"


def merge_bomb(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Merge keys that multiply: each level merges the one before `width` times."""
    width, levels = rng.randint(2, 10), rng.randint(2, 12)
    lines = ["m0: &m0 {x: 1}"] + [
        f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * width) + f"], k{i}: 1}}"
        for i in range(1, levels)
    ]
    return ("\n".join(lines) + "\n").encode() + content, f"merge bomb {width}^{levels}"


def huge(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """A file past the size limit: long comments, or one enormous line."""
    size = rng.choice([512 * 1024 - 1, 512 * 1024 + 1, 2 << 20])
    if rng.random() < 0.5:
        return content + b"#" * size, f"{size} bytes of comment appended"
    return content + b"\nx: " + b"a" * size + b"\n", f"a line of {size} bytes appended"


def swap_kind(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """Change the kind of the file's first document."""
    kind = rng.choice([*KINDS, "Unknown", "cluster", ""])
    for known in KINDS:
        content = content.replace(b"kind: " + known.encode() + b"\n", f"kind: {kind}\n".encode(), 1)
    return content, f"kind -> {kind!r}"


def merge_pool(rng: random.Random, content: bytes) -> tuple[bytes, str]:
    """A merge key in a node pool (a base anchored at the top of the file)."""
    base = b"base: &base {nodes: 1, gpu: L40S, gpusPerNode: 4, hostMemory: 1Ti, cpu: 64}\n"
    return base + content.replace(b"    - {name: ", b"    - {<<: *base, name: ", 1), "merge in pool"


def new_file(rng: random.Random, tree: PolicyTree) -> Mutated:
    """A file with an odd name: a copy of another, or damaged text."""
    name = rng.choice(
        [
            *ODD_FILE_NAMES,
            "".join(chr(rng.randint(1, 0x2FF)) for _ in range(6)).replace("/", "") + ".yaml",
        ]
    )
    source = rng.choice(sorted(tree))
    content = (
        tree[source]
        if rng.random() < 0.5
        else rng.choice([b"", b"\xff", b"a: [", tree[source][:40]])
    )
    return {**tree, name: content}, f"new file {name!r} ({len(content)} bytes, from {source})"


def splice_files(rng: random.Random, tree: PolicyTree) -> Mutated:
    """Lines of one file pasted into another."""
    source, target = rng.choice(sorted(tree)), rng.choice(sorted(tree))
    lines, into = tree[source].split(b"\n"), tree[target].split(b"\n")
    start = rng.randrange(len(lines))
    piece = lines[start : start + rng.randint(1, 6)]
    at = rng.randint(0, len(into))
    into[at:at] = piece
    return {**tree, target: b"\n".join(into)}, f"{source} lines {start + 1}+ into {target}:{at + 1}"


TEXTUAL: dict[str, Mutation] = {
    "flip-bytes": _on_a_file(flip_bytes),
    "truncate": _on_a_file(truncate),
    "insert-bytes": _on_a_file(insert_bytes),
    "snippet": _on_a_file(snippet),
    "splice-lines": _on_a_file(splice_lines),
    "indent": _on_a_file(indent),
    "bom": _on_a_file(bom),
    "line-endings": _on_a_file(line_endings),
    "nul": _on_a_file(nul),
    "invalid-utf8": _on_a_file(invalid_utf8),
    "control": _on_a_file(control),
    "empty": _on_a_file(empty),
    "random-yaml": _on_a_file(random_yaml),
    "deep": _on_a_file(deep),
    "alias-bomb": _on_a_file(alias_bomb),
    "merge-bomb": _on_a_file(merge_bomb),
    "huge": _on_a_file(huge),
    "swap-kind": _on_a_file(swap_kind),
    "merge-pool": _on_a_file(merge_pool),
    "new-file": new_file,
    "splice-files": splice_files,
}
"""Every textual mutation, by the name a case's description and the summary use."""
