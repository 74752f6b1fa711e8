#!/usr/bin/env python3
"""
ref.py - independent reference for the layouts of common/cry.h.

Pure Python 3, standard library only.  Nothing here calls libsodium or reads
the C code's output: BLAKE2b (RFC 7693), ChaCha20 / Poly1305 (RFC 8439),
HChaCha20 and XChaCha20-Poly1305-IETF (draft-irtf-cfrg-xchacha-03) are written
out from their specifications and checked against the published test vectors
before any LWC vector is produced.  The pure-Python BLAKE2b is additionally
cross-checked against hashlib.blake2b (CPython's own copy of the BLAKE2
reference code) on every call.

The LWC layouts (DESIGN.md section 2, cry.h):

  kdf(master, id, ctx)      libsodium crypto_kdf_derive_from_key, 32-byte out:
                            BLAKE2b(key = master, digest 32, empty message,
                                    salt = LE64(id) || 0^8,
                                    person = ctx(8) || 0^8)
  token                     BLAKE2b-256(key = token key,
                                    table \\0 column \\0 type-tag value)[:16]
  record seal               nonce(24) || XChaCha20-Poly1305(rec key, rec,
                                                             AAD = table)
  block seal                BE64(version) || nonce(24) ||
                            XChaCha20-Poly1305(seal key, block,
                                    AAD = BE64(id) || BE64(version))
  perm seed                 BLAKE2b-256(key = perm key, BE64(id) || BE64(version))
  DRG stream                randombytes_buf_deterministic(seed) =
                            ChaCha20-IETF keystream, key = seed,
                            nonce = "LibsodiumDRG", block counter 0
  uniform(upper)            little-endian u32 words r from the stream;
                            min = 2**32 % upper; reject r < min; r % upper
  permutation               Fisher-Yates over n = len/cell cells:
                            for i = n-1 .. 1: j = uniform(i+1); swap(i, j)
  block format 2 draws      uniform2(upper) for upper <= 2**16: little-endian
                            u16 words x from the stream; m = x * upper;
                            t = (2**16 - upper) % upper; reject m % 2**16 < t;
                            m >> 16 (Lemire).  Above 2**16 the same over u32
                            words (m = x * upper, t = (2**32 - upper) % upper,
                            m >> 32).  Format 1 is uniform() above.

Usage:
  python3 tests/kat/ref.py                 print the C header on stdout
  python3 tests/kat/ref.py --out FILE      write it to FILE
  (the checked-in copy is tests/unit/kat_vectors.h)
"""

import argparse
import hashlib
import struct
import sys

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF

# --------------------------------------------------------------------------
# BLAKE2b (RFC 7693), with key, salt and personalisation (BLAKE2 paper 2.8)
# --------------------------------------------------------------------------

B2B_IV = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B,
    0xA54FF53A5F1D36F1, 0x510E527FADE682D1, 0x9B05688C2B3E6C1F,
    0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)

B2B_SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)


def _b2b_compress(h, block, t, last):
    m = struct.unpack("<16Q", block)
    v = list(h) + list(B2B_IV)
    v[12] ^= t & MASK64
    v[13] ^= (t >> 64) & MASK64
    if last:
        v[14] ^= MASK64

    def g(a, b, c, d, x, y):
        va, vb, vc, vd = v[a], v[b], v[c], v[d]
        va = (va + vb + x) & MASK64
        vd ^= va
        vd = ((vd >> 32) | (vd << 32)) & MASK64
        vc = (vc + vd) & MASK64
        vb ^= vc
        vb = ((vb >> 24) | (vb << 40)) & MASK64
        va = (va + vb + y) & MASK64
        vd ^= va
        vd = ((vd >> 16) | (vd << 48)) & MASK64
        vc = (vc + vd) & MASK64
        vb ^= vc
        vb = ((vb >> 63) | (vb << 1)) & MASK64
        v[a], v[b], v[c], v[d] = va, vb, vc, vd

    for r in range(12):
        s = B2B_SIGMA[r % 10]
        g(0, 4, 8, 12, m[s[0]], m[s[1]])
        g(1, 5, 9, 13, m[s[2]], m[s[3]])
        g(2, 6, 10, 14, m[s[4]], m[s[5]])
        g(3, 7, 11, 15, m[s[6]], m[s[7]])
        g(0, 5, 10, 15, m[s[8]], m[s[9]])
        g(1, 6, 11, 12, m[s[10]], m[s[11]])
        g(2, 7, 8, 13, m[s[12]], m[s[13]])
        g(3, 4, 9, 14, m[s[14]], m[s[15]])
    return [h[i] ^ v[i] ^ v[i + 8] for i in range(8)]


def blake2b_pure(msg, digest_size=64, key=b"", salt=b"", person=b""):
    assert 1 <= digest_size <= 64 and len(key) <= 64
    assert len(salt) <= 16 and len(person) <= 16
    param = bytearray(64)
    param[0] = digest_size
    param[1] = len(key)
    param[2] = 1            # fanout
    param[3] = 1            # depth
    param[32:32 + len(salt)] = salt
    param[48:48 + len(person)] = person
    pw = struct.unpack("<8Q", bytes(param))
    h = [B2B_IV[i] ^ pw[i] for i in range(8)]

    data = bytes(msg)
    if key:
        data = key + bytes(128 - len(key)) + data
    t = 0
    if not data:
        h = _b2b_compress(h, bytes(128), 0, True)
    else:
        off = 0
        while len(data) - off > 128:
            t += 128
            h = _b2b_compress(h, data[off:off + 128], t, False)
            off += 128
        rest = data[off:]
        t += len(rest)
        h = _b2b_compress(h, rest + bytes(128 - len(rest)), t, True)
    return struct.pack("<8Q", *h)[:digest_size]


def blake2b(msg, digest_size=64, key=b"", salt=b"", person=b""):
    """Pure-Python BLAKE2b, asserted equal to hashlib's on every call."""
    mine = blake2b_pure(msg, digest_size, key, salt, person)
    theirs = hashlib.blake2b(bytes(msg), digest_size=digest_size, key=key,
                             salt=salt, person=person).digest()
    assert mine == theirs, "pure BLAKE2b disagrees with hashlib"
    return mine


# --------------------------------------------------------------------------
# ChaCha20 / HChaCha20 / Poly1305 (RFC 8439, draft-irtf-cfrg-xchacha-03)
# --------------------------------------------------------------------------

CHACHA_CONST = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)


def _chacha_rounds(x):
    def qr(a, b, c, d):
        xa, xb, xc, xd = x[a], x[b], x[c], x[d]
        xa = (xa + xb) & MASK32; xd ^= xa; xd = ((xd << 16) | (xd >> 16)) & MASK32
        xc = (xc + xd) & MASK32; xb ^= xc; xb = ((xb << 12) | (xb >> 20)) & MASK32
        xa = (xa + xb) & MASK32; xd ^= xa; xd = ((xd << 8) | (xd >> 24)) & MASK32
        xc = (xc + xd) & MASK32; xb ^= xc; xb = ((xb << 7) | (xb >> 25)) & MASK32
        x[a], x[b], x[c], x[d] = xa, xb, xc, xd

    for _ in range(10):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)


def chacha20_block(key, counter, nonce12):
    assert len(key) == 32 and len(nonce12) == 12 and 0 <= counter <= MASK32
    init = list(CHACHA_CONST) + list(struct.unpack("<8I", key)) + [counter] + \
        list(struct.unpack("<3I", nonce12))
    x = list(init)
    _chacha_rounds(x)
    return struct.pack("<16I", *[(x[i] + init[i]) & MASK32 for i in range(16)])


def chacha20_keystream(key, nonce12, length, counter=0):
    out = bytearray()
    while len(out) < length:
        out += chacha20_block(key, counter, nonce12)
        counter += 1
    return bytes(out[:length])


def chacha20_xor(key, nonce12, data, counter=0):
    ks = chacha20_keystream(key, nonce12, len(data), counter)
    return bytes(a ^ b for a, b in zip(data, ks))


def hchacha20(key, nonce16):
    assert len(key) == 32 and len(nonce16) == 16
    x = list(CHACHA_CONST) + list(struct.unpack("<8I", key)) + \
        list(struct.unpack("<4I", nonce16))
    _chacha_rounds(x)
    return struct.pack("<8I", *(x[0:4] + x[12:16]))


def poly1305(key32, msg):
    r = int.from_bytes(key32[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key32[16:32], "little")
    p = (1 << 130) - 5
    acc = 0
    for i in range(0, len(msg), 16):
        n = int.from_bytes(msg[i:i + 16] + b"\x01", "little")
        acc = (acc + n) * r % p
    return ((acc + s) & ((1 << 128) - 1)).to_bytes(16, "little")


def _pad16(b):
    return bytes((16 - len(b) % 16) % 16)


def chacha20poly1305_ietf_encrypt(key, nonce12, pt, aad):
    """RFC 8439 section 2.8: returns ct || tag."""
    otk = chacha20_block(key, 0, nonce12)[:32]
    ct = chacha20_xor(key, nonce12, pt, 1)
    mac = aad + _pad16(aad) + ct + _pad16(ct) + \
        struct.pack("<QQ", len(aad), len(ct))
    return ct + poly1305(otk, mac)


def xchacha20poly1305_ietf_encrypt(key, nonce24, pt, aad):
    """draft-irtf-cfrg-xchacha-03 section 2.3 (libsodium's _ietf variant)."""
    assert len(nonce24) == 24
    subkey = hchacha20(key, nonce24[:16])
    return chacha20poly1305_ietf_encrypt(subkey, b"\0\0\0\0" + nonce24[16:],
                                         pt, aad)


# --------------------------------------------------------------------------
# Self-tests against published vectors (run before anything is emitted)
# --------------------------------------------------------------------------

SUNSCREEN = (b"Ladies and Gentlemen of the class of '99: If I could offer you "
             b"only one tip for the future, sunscreen would be it.")


def self_test():
    h = bytes.fromhex
    # RFC 7693 appendix A: BLAKE2b-512("abc").
    assert blake2b_pure(b"abc") == h(
        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
        "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    # BLAKE2 reference blake2b-kat.txt, keyed, key 00..3f, empty input.
    assert blake2b_pure(b"", key=bytes(range(64))) == h(
        "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
        "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568")
    # Multi-block, keyed, salted, personalised: pure vs hashlib.
    for n in (0, 1, 127, 128, 129, 255, 256, 257, 1000):
        blake2b(bytes(i & 0xFF for i in range(n)), 32, bytes(range(32)),
                b"salt-salt-salt-s", b"person")

    # RFC 8439 2.3.2: ChaCha20 block function.
    k = bytes(range(32))
    assert chacha20_block(k, 1, h("000000090000004a00000000")) == h(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    # RFC 8439 2.4.2: ChaCha20 encryption, counter 1.
    assert chacha20_xor(k, h("000000000000004a00000000"), SUNSCREEN, 1) == h(
        "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
        "5af90bbf74a35be6b40b8eedf2785e42874d")
    # RFC 8439 2.5.2: Poly1305.
    assert poly1305(
        h("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b"),
        b"Cryptographic Forum Research Group") == h(
        "a8061dc1305136c6c22b8baf0c0127a9")
    # RFC 8439 2.8.2: ChaCha20-Poly1305 AEAD.
    aead_key = bytes(range(0x80, 0xA0))
    out = chacha20poly1305_ietf_encrypt(
        aead_key, h("070000004041424344454647"), SUNSCREEN,
        h("50515253c0c1c2c3c4c5c6c7"))
    assert out[-16:] == h("1ae10b594f09e26a7e902ecbd0600691"), out[-16:].hex()
    assert out[:16] == h("d31a8d34648e60db7b86afbc53ef7ec2")
    # draft-irtf-cfrg-xchacha-03 2.2.1: HChaCha20.
    assert hchacha20(k, h("000000090000004a0000000031415927")) == h(
        "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc")
    # draft-irtf-cfrg-xchacha-03 A.3.1: AEAD_XChaCha20_Poly1305, verbatim.
    a31_pt = h(
        "4c616469657320616e642047656e746c656d656e206f662074686520636c6173"
        "73206f66202739393a204966204920636f756c64206f6666657220796f75206f"
        "6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73"
        "637265656e20776f756c642062652069742e")
    assert a31_pt == SUNSCREEN
    a31_aad = h("50515253c0c1c2c3c4c5c6c7")
    a31_key = h("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    a31_iv = h("404142434445464748494a4b4c4d4e4f5051525354555657")
    a31_ct = h(
        "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
        "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
        "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
        "21f9664c97637da9768812f615c68b13b52e")
    a31_tag = h("c0875924c1c7987947deafd8780acf49")
    # The draft's intermediate Poly1305 key for A.3.1.
    assert chacha20_block(hchacha20(a31_key, a31_iv[:16]), 0,
                          b"\0\0\0\0" + a31_iv[16:])[:32] == h(
        "7b191f80f361f099094f6f4b8fb97df847cc6873a8f2b190dd73807183f907d5")
    assert xchacha20poly1305_ietf_encrypt(a31_key, a31_iv, a31_pt, a31_aad) \
        == a31_ct + a31_tag
    return {"key": a31_key, "nonce": a31_iv, "aad": a31_aad,
            "pt": a31_pt, "ct": a31_ct + a31_tag}


# --------------------------------------------------------------------------
# LWC layouts
# --------------------------------------------------------------------------

def be64(v):
    return struct.pack(">Q", v & MASK64)


def kdf(master, subkey_id, ctx):
    assert len(master) == 32 and len(ctx) == 8
    return blake2b(b"", 32, key=master,
                   salt=struct.pack("<Q", subkey_id) + bytes(8),
                   person=ctx + bytes(8))


def token(key, table, column, tag, value):
    return blake2b(table + b"\0" + column + b"\0" + bytes([tag]) + value,
                   32, key=key)[:16]


def record_seal(key, rec, table, nonce):
    return nonce + xchacha20poly1305_ietf_encrypt(key, nonce, rec, table)


def block_seal(key, block_id, version, block, nonce):
    aad = be64(block_id) + be64(version)
    return be64(version) + nonce + \
        xchacha20poly1305_ietf_encrypt(key, nonce, block, aad)


def perm_seed(key, block_id, version):
    return blake2b(be64(block_id) + be64(version), 32, key=key)


DRG_NONCE = b"LibsodiumDRG"


def drg_stream(seed, length):
    return chacha20_keystream(seed, DRG_NONCE, length, 0)


class Drg:
    """Reads randombytes_buf_deterministic(seed)'s stream word by word."""

    CHUNK = 64 * 64

    def __init__(self, seed):
        self.seed = seed
        self.counter = 0
        self.buf = b""
        self.pos = 0
        self.rejections = []      # (upper, r) of every rejected draw

    def u32(self):
        if self.pos + 4 > len(self.buf):
            n = self.CHUNK // 64
            self.buf = b"".join(chacha20_block(self.seed, self.counter + k,
                                               DRG_NONCE) for k in range(n))
            self.counter += n
            self.pos = 0
        (v,) = struct.unpack_from("<I", self.buf, self.pos)
        self.pos += 4
        return v

    def u16(self):
        if self.pos + 2 > len(self.buf):
            n = self.CHUNK // 64
            self.buf = b"".join(chacha20_block(self.seed, self.counter + k,
                                               DRG_NONCE) for k in range(n))
            self.counter += n
            self.pos = 0
        (v,) = struct.unpack_from("<H", self.buf, self.pos)
        self.pos += 2
        return v

    def uniform2(self, upper):
        """Block format 2: Lemire's multiply-and-shift with rejection."""
        if upper < 2:
            return 0
        bits = 16 if upper <= (1 << 16) else 32
        word = self.u16 if bits == 16 else self.u32
        t = ((1 << bits) - upper) % upper
        while True:
            m = word() * upper
            if m % (1 << bits) >= t:
                return m >> bits
            self.rejections.append((upper, m % (1 << bits)))

    def uniform(self, upper, reject=True):
        if upper < 2:
            return 0
        lo = (1 << 32) % upper if reject else 0
        while True:
            r = self.u32()
            if r >= lo:
                return r % upper
            self.rejections.append((upper, r))


def permute(buf, cell, seed, reject=True):
    """Returns (permuted bytes, list of rejected draws).

    reject=False is the biased sampler (plain r % upper), only used to show
    that the rejection vector really depends on rejection sampling."""
    assert cell in (1, 2, 4, 8) and len(buf) % cell == 0
    n = len(buf) // cell
    cells = [buf[i * cell:(i + 1) * cell] for i in range(n)]
    g = Drg(seed)
    for i in range(n - 1, 0, -1):
        j = g.uniform(i + 1, reject)
        cells[i], cells[j] = cells[j], cells[i]
    return b"".join(cells), g.rejections


def permute2(buf, cell, seed):
    """Block format 2; returns (permuted bytes, list of rejected draws)."""
    assert cell in (1, 2, 4, 8) and len(buf) % cell == 0
    n = len(buf) // cell
    cells = [buf[i * cell:(i + 1) * cell] for i in range(n)]
    g = Drg(seed)
    for i in range(n - 1, 0, -1):
        j = g.uniform2(i + 1)
        cells[i], cells[j] = cells[j], cells[i]
    return b"".join(cells), g.rejections


def pattern(n):
    """Block contents; must equal KAT_PATTERN(i) in the emitted header."""
    return bytes(((i * 167) + (i >> 8) * 13 + 5) & 0xFF for i in range(n))


def digest(b):
    """Unkeyed BLAKE2b-256: what the C test computes with crypto_generichash."""
    return blake2b(b, 32)


# --------------------------------------------------------------------------
# C emission
# --------------------------------------------------------------------------

class Emitter:
    def __init__(self):
        self.lines = []

    def __call__(self, s=""):
        self.lines.append(s)

    def arr(self, name, data, comment=None):
        if comment:
            self("/* %s */" % comment)
        self("static const uint8_t %s[%d] KAT_UNUSED = {" % (name, max(len(data), 1)))
        if not data:
            self("\t0 /* empty; length 0 */")
        for i in range(0, len(data), 12):
            self("\t" + ", ".join("0x%02x" % b for b in data[i:i + 12]) + ",")
        self("};")
        self("#define %s_LEN %du" % (name.upper(), len(data)))
        self()


def cbytes(b):
    """Inline initializer list for a fixed-size member."""
    return "{ " + ", ".join("0x%02x" % x for x in b) + " }"


def cstr(b):
    """C string literal: every byte as \\xNN, so no escape runs on."""
    return '"' + "".join("\\x%02x" % x for x in b) + '"'


def cname(b):
    """C string literal for a plain ASCII identifier."""
    s = b.decode("ascii")
    assert all(c.isalnum() or c == "_" for c in s)
    return '"%s"' % s


def generate():
    a31 = self_test()
    e = Emitter()
    e("/*")
    e(" * kat_vectors.h - known-answer vectors for common/cry.c.")
    e(" *")
    e(" * GENERATED by tests/kat/ref.py (python3 tests/kat/ref.py --out")
    e(" * tests/unit/kat_vectors.h); do not edit.  ref.py is an independent")
    e(" * pure-Python implementation of BLAKE2b, ChaCha20, HChaCha20, Poly1305")
    e(" * and XChaCha20-Poly1305-IETF, checked against RFC 7693, RFC 8439 and")
    e(" * draft-irtf-cfrg-xchacha-03 vectors, plus the LWC layouts of cry.h.")
    e(" * Digests are unkeyed BLAKE2b-256 (crypto_generichash, 32 bytes).")
    e(" */")
    e("#ifndef LWC_KAT_VECTORS_H")
    e("#define LWC_KAT_VECTORS_H")
    e()
    e("#include <stddef.h>")
    e("#include <stdint.h>")
    e()
    e("#define KAT_UNUSED __attribute__((unused))")
    e()
    e("/* Contents of the pattern blocks: byte i of a block of any length. */")
    e("#define KAT_PATTERN(i) \\")
    e("\t((uint8_t)((((size_t)(i)) * 167u + (((size_t)(i)) >> 8) * 13u + 5u) & 0xffu))")
    e()

    # ---- draft A.3.1 itself (so the C side also checks libsodium) --------
    e("/* ---- draft-irtf-cfrg-xchacha-03 A.3.1 (asserted in ref.py) ---- */")
    e.arr("kat_a31_key", a31["key"])
    e.arr("kat_a31_nonce", a31["nonce"])
    e.arr("kat_a31_aad", a31["aad"])
    e.arr("kat_a31_pt", a31["pt"])
    e.arr("kat_a31_ct", a31["ct"], "ciphertext || tag")

    # ---- KDF -------------------------------------------------------------
    user_master = bytes(range(32))
    ops_master = bytes(range(0xA0, 0xC0))
    e("/* ---- crypto_kdf_derive_from_key ---- */")
    e.arr("kat_user_master", user_master, "K_U = 00 01 .. 1f")
    e.arr("kat_ops_master", ops_master, "K_OPS = a0 a1 .. bf")
    kdf_cases = [
        (user_master, "user", 1, b"LWCUSER1"),
        (user_master, "user", 2, b"LWCUSER1"),
        (user_master, "user", 0, b"LWCUSER1"),
        (user_master, "user", 0x0123456789ABCDEF, b"LWCUSER1"),
        (user_master, "user", 0xFFFFFFFFFFFFFFFF, b"LWCUSER1"),
        (user_master, "user", 1, b"LWCPROX1"),
        (ops_master, "ops", 1, b"LWCPROX1"),
        (ops_master, "ops", 2, b"LWCPROX1"),
        (ops_master, "ops", 1, b"ABCDEFGH"),
    ]
    e("struct kat_kdf {")
    e("\tint ops;                /* 0: kat_user_master, 1: kat_ops_master */")
    e("\tuint64_t id;")
    e("\tconst char *ctx;        /* 8 bytes */")
    e("\tuint8_t out[32];")
    e("};")
    e("static const struct kat_kdf kat_kdf[] KAT_UNUSED = {")
    for master, which, sid, ctx in kdf_cases:
        e("\t{ %d, UINT64_C(0x%016x), %s, %s }," %
          (1 if which == "ops" else 0, sid, cname(ctx), cbytes(kdf(master, sid, ctx))))
    e("};")
    e()

    token_key = kdf(user_master, 1, b"LWCUSER1")
    rec_key = kdf(user_master, 2, b"LWCUSER1")
    seal_key = kdf(ops_master, 1, b"LWCPROX1")
    perm_key = kdf(ops_master, 2, b"LWCPROX1")
    e("/* The keys below are the subkeys above: token = (K_U, 1, LWCUSER1),")
    e(" * record = (K_U, 2, LWCUSER1), seal = (K_OPS, 1, LWCPROX1),")
    e(" * perm = (K_OPS, 2, LWCPROX1). */")
    e.arr("kat_token_key", token_key)
    e.arr("kat_rec_key", rec_key)
    e.arr("kat_seal_key", seal_key)
    e.arr("kat_perm_key", perm_key)

    # ---- tokens ----------------------------------------------------------
    tok_cases = [
        (b"users", b"name", 0x03, b"alice"),
        (b"users", b"name", 0x03, b""),
        (b"users", b"name", 0x00, b""),
        (b"users", b"name", 0x03, "Zo\u00eb \u2603".encode("utf-8")),
        (b"users", b"age", 0x01, struct.pack(">q", 42)),
        (b"users", b"age", 0x01, struct.pack(">q", -1)),
        (b"users", b"age", 0x01, struct.pack(">q", -(2 ** 63))),
        (b"users", b"score", 0x02, struct.pack(">d", 3.5)),
        (b"users", b"score", 0x02, struct.pack(">d", -0.0)),
        (b"orders", b"name", 0x03, b"alice"),
        (b"users", b"nick", 0x03, b"alice"),
        (b"ab", b"c", 0x03, b"x"),
        (b"a", b"bc", 0x03, b"x"),
        (b"t", b"c", 0x03, b"a\0b"),
        (b"t", b"c", 0x03, bytes(range(256)) * 2),
    ]
    e("/* ---- keyword tokens (key kat_token_key) ---- */")
    e("struct kat_token {")
    e("\tconst char *table;")
    e("\tconst char *column;")
    e("\tuint8_t tag;")
    e("\tconst char *value;")
    e("\tsize_t value_len;")
    e("\tuint8_t out[16];")
    e("};")
    e("static const struct kat_token kat_token[] KAT_UNUSED = {")
    for tb, col, tag, val in tok_cases:
        vlit = cstr(val)
        e("\t{ %s, %s, 0x%02x, %s, %du,\n\t  %s }," %
          (cname(tb), cname(col), tag, vlit, len(val),
           cbytes(token(token_key, tb, col, tag, val))))
    e("};")
    e()

    # ---- records ---------------------------------------------------------
    e("/* ---- record seal (key kat_rec_key) ---- */")
    e("/* rec[i] = KAT_PATTERN(i); out = nonce || ct || tag */")
    rec_cases = [
        ("kat_rec1", 128, b"users", bytes(range(0x40, 0x58))),
        ("kat_rec2", 128, b"orders", bytes(range(0x60, 0x78))),
        ("kat_rec3", 200, b"users", bytes(24)),
        ("kat_rec4", 0, b"users", bytes([0xFF] * 24)),
    ]
    for name, n, table, nonce in rec_cases:
        e("#define %s_TABLE %s" % (name.upper(), cname(table)))
        e.arr(name + "_nonce", nonce)
        e.arr(name + "_out", record_seal(rec_key, pattern(n), table, nonce),
              "%d-byte record, table \"%s\"" % (n, table.decode()))

    # ---- blocks ----------------------------------------------------------
    e("/* ---- block seal (key kat_seal_key); block[i] = KAT_PATTERN(i) ---- */")
    blk_nonce = bytes(range(0x10, 0x28))
    e.arr("kat_blk_nonce", blk_nonce)
    small = block_seal(seal_key, 7, 1, pattern(64), blk_nonce)
    e("#define KAT_BLK_SMALL_ID UINT64_C(7)")
    e("#define KAT_BLK_SMALL_VERSION UINT64_C(1)")
    e.arr("kat_blk_small_out", small, "64-byte block, id 7, version 1")
    big_id, big_ver = 0x0102030405060708, 0xFFFFFFFFFFFFFFFE
    big = block_seal(seal_key, big_id, big_ver, pattern(10752), blk_nonce)
    e("#define KAT_BLK_BIG_ID UINT64_C(0x%016x)" % big_id)
    e("#define KAT_BLK_BIG_VERSION UINT64_C(0x%016x)" % big_ver)
    e("#define KAT_BLK_BIG_LEN 10752u")
    e.arr("kat_blk_big_head", big[:48], "first 48 bytes of the sealed 10752-byte block")
    e.arr("kat_blk_big_tail", big[-32:], "last 32 bytes (end of ct, tag)")
    e.arr("kat_blk_big_digest", digest(big), "BLAKE2b-256 of all %d sealed bytes" % len(big))

    # ---- permutation seeds -----------------------------------------------
    e("/* ---- permutation seeds (key kat_perm_key) ---- */")
    seed_cases = [(0, 0), (1, 1), (7, 1), (7, 2),
                  (0x0102030405060708, 0x1112131415161718)]
    e("struct kat_seed {")
    e("\tuint64_t id;")
    e("\tuint64_t version;")
    e("\tuint8_t seed[32];")
    e("};")
    e("static const struct kat_seed kat_seed[] KAT_UNUSED = {")
    for bid, ver in seed_cases:
        e("\t{ UINT64_C(0x%016x), UINT64_C(0x%016x),\n\t  %s }," %
          (bid, ver, cbytes(perm_seed(perm_key, bid, ver))))
    e("};")
    e()

    # ---- DRG stream --------------------------------------------------------
    seed71 = perm_seed(perm_key, 7, 1)
    e("/* ---- randombytes_buf_deterministic stream ---- */")
    e("/* seed = perm seed of (id 7, version 1) = kat_seed[2].seed */")
    e.arr("kat_drg_seed", seed71)
    stream = drg_stream(seed71, 65536)
    e.arr("kat_drg_1024", stream[:1024], "first 1024 bytes")
    e.arr("kat_drg_65536_digest", digest(stream), "BLAKE2b-256 of the first 65536 bytes")

    # ---- permutations ------------------------------------------------------
    e("/* ---- permutations, seed kat_drg_seed ---- */")
    e("/* 64-byte block with bytes 0..63 (NOT the pattern) */")
    for c in (1, 2, 4, 8):
        out, _ = permute(bytes(range(64)), c, seed71)
        e.arr("kat_perm64_c%d" % c, out, "cell %d" % c)
    e("/* 10752-byte pattern block, digests of the permuted block */")
    for c in (1, 2, 4, 8):
        out, rej = permute(pattern(10752), c, seed71)
        e.arr("kat_perm10752_c%d_digest" % c, digest(out),
              "cell %d, %d rejected draws" % (c, len(rej)))

    e("/* Block format 2 (Lemire draws), the same blocks and seed */")
    for c in (1, 2, 4, 8):
        out, _ = permute2(bytes(range(64)), c, seed71)
        e.arr("kat_perm2_64_c%d" % c, out, "cell %d" % c)
    for c in (1, 2, 4, 8):
        out, rej = permute2(pattern(10752), c, seed71)
        e.arr("kat_perm2_10752_c%d_digest" % c, digest(out),
              "cell %d, %d rejected draws" % (c, len(rej)))
    # above 2**16 cells the draws are 32-bit words first, then 16-bit ones
    out, rej = permute2(pattern(262144), 2, seed71)
    e("#define KAT_PERM2_BIG_LEN 262144u")
    e.arr("kat_perm2_262144_c2_digest", digest(out),
          "cell 2 (131072 cells: 32-bit and 16-bit draws), %d rejected draws" % len(rej))

    # Rejection sampling: a draw is rejected with probability
    # (2**32 mod upper) / 2**32 < upper / 2**32, so small blocks practically
    # never reject.  A 262144-cell permutation expects ~4 rejections; the
    # vector below is only emitted if at least one really happened, and the
    # rejected (upper, r) pairs are listed in the header.
    rid, rver = 9, 3
    rseed = perm_seed(perm_key, rid, rver)
    rout, rrej = permute(pattern(262144), 1, rseed)
    assert rrej, "pick another (id, version): no rejection happened"
    assert permute(pattern(262144), 1, rseed, reject=False)[0] != rout
    e("/* Rejection sampling path: 262144-byte pattern block, cell 1, seed =")
    e(" * perm seed of (id %d, version %d).  uniform() rejected %d draws here:" %
      (rid, rver, len(rrej)))
    for upper, r in rrej:
        e(" *   upper %u: r = 0x%08x < min = 2^32 mod upper = 0x%08x" %
          (upper, r, (1 << 32) % upper))
    e(" * A sampler without rejection (plain r %% upper) gives a different order. */")
    e("#define KAT_REJ_ID UINT64_C(%d)" % rid)
    e("#define KAT_REJ_VERSION UINT64_C(%d)" % rver)
    e("#define KAT_REJ_LEN 262144u")
    e("#define KAT_REJ_COUNT %du" % len(rrej))
    e.arr("kat_rej_seed", rseed)
    e.arr("kat_rej_digest", digest(rout), "BLAKE2b-256 of the permuted block")
    e.arr("kat_rej_head", rout[:32], "first 32 bytes of the permuted block")

    e("#endif")
    return "\n".join(e.lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the header here instead of stdout")
    args = ap.parse_args()
    text = generate()
    if args.out:
        with open(args.out, "w", encoding="ascii") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
