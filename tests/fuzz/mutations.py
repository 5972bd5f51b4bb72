"""Byte-level mutations shared by the fuzz suites (imported by them; pytest's ``pythonpath`` holds this folder)."""

from hypothesis import strategies as st

INSERTED_BYTES = [  # invalid UTF-8, NUL, a byte-order mark, separators, a number too long for int()
    b"\xff\xfe", b"\xc3", b"\x00", b"\xef\xbb\xbf", b"\r", b"\n", b"\t", b"|", b",", b'"', b"#", b"9" * 5000,
]
NESTINGS = [(b"(", b")"), (b"[", b"]"), (b"{", b"}"), (b"sin ", b"")]  # equations, JSON, prefix expressions


@st.composite
def mutated_bytes(draw, text: str) -> bytes:
    """``text`` encoded, then truncated at a random byte, with bytes flipped or inserted (invalid UTF-8, NUL, CR,
    separators, deeply nested brackets)."""
    data = bytearray(text.encode("utf-8", errors="surrogatepass"))  # a lone surrogate becomes invalid UTF-8
    for _ in range(draw(st.integers(0, 2))):
        position = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["truncate", "flip", "insert", "nest"]))
        if action == "truncate":
            del data[position:]
        elif action == "flip" and position < len(data):
            data[position] = draw(st.integers(0, 255))
        elif action == "insert":
            data[position:position] = draw(st.sampled_from(INSERTED_BYTES))
        else:
            depth = draw(st.sampled_from([10, 200, 5000]))
            opening, closing = draw(st.sampled_from(NESTINGS))
            data[position:position] = opening * depth + b"1" + closing * depth
    return bytes(data)
