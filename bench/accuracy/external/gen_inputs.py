#!/usr/bin/env python3
"""Generate the input files of the external set (README.md, "Inputs").

usage: gen_inputs.py DATA_DIR [APP...]

The Rodinia applications of GPA-Benchmark read data files that the
repository's scripts download from the Rodinia site (data/b+tree/mil.txt,
data/cfd/fvcorr.domn.097K, ...). Those are not reachable from the machines
that run this bench, so this script writes files of the same format with
synthetic, deterministic content (fixed seeds; Python standard library
only), sized for an H200: see the SIZES below and README.md for how each
differs from the original. Apps: b+tree cfd heartwall huffman kmeans
myocyte srad (nw, pathfinder and streamcluster take only arguments). With
no APP, all; a file that already exists is left alone unless --force.
"""
import argparse
import math
import os
import random
import struct
import sys

# Sizes (README.md gives the originals').
BTREE_KEYS = 250_000          # mil.txt: keys 1..N in random order
BTREE_COMMANDS = "j 30000 3000\nk 10000\n"
CFD_NX, CFD_NY = 768, 512     # 393,216 elements (a multiple of the 192-thread block)
CFD_WINDOW = 1024             # elements are numbered at random inside windows of this size
HW_WIDTH, HW_HEIGHT, HW_FRAMES = 609, 590, 20
HUFF_BYTES = 16 << 20         # 16 MiB
KMEANS_POINTS, KMEANS_FEATURES, KMEANS_CLUSTERS = 204_800, 34, 5
KMEANS_VARIANTS = 1024         # distinct noisy copies of each centre
SRAD_ROWS, SRAD_COLS = 502, 458  # image.pgm; the app resizes it (its arguments)

SEED = 38


def rng(app):
    """A generator of its own per app, so one app's size never changes another's data."""
    return random.Random("%d/%s" % (SEED, app))


def write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_bytes(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def gen_btree(d):
    """mil.txt: the key count, then one key a line; command.txt: the queries."""
    r = rng("b+tree")
    keys = list(range(1, BTREE_KEYS + 1))
    r.shuffle(keys)
    write_text(os.path.join(d, "mil.txt"), "%d\n%s\n" % (BTREE_KEYS, "\n".join(map(str, keys))))
    write_text(os.path.join(d, "command.txt"), BTREE_COMMANDS)


def gen_cfd(d):
    """fvcorr-format domain: the element count, then per element its volume
    and, for each of its 4 faces, the neighbour (1-based; 0 = wing wall,
    negative = far field) and the face's normal (3 floats).

    The elements are the cells of a CFD_NX x CFD_NY grid (faces east, west,
    north, south, whose normals cancel), numbered at random inside windows
    of CFD_WINDOW consecutive cells so that neighbour gathers are scattered
    as in an unstructured mesh, but stay local. Row y = 0 is the wing (wall)
    boundary, the other edges far field."""
    r = rng("cfd")
    n = CFD_NX * CFD_NY
    perm = list(range(n))
    for s in range(0, n, CFD_WINDOW):
        w = perm[s:s + CFD_WINDOW]
        r.shuffle(w)
        perm[s:s + CFD_WINDOW] = w
    # perm[cell] = element number (0-based) of the grid cell
    h = 1.0 / CFD_NX
    # Volumes 100 h^2 (+0-10 %): the face length over the volume's square
    # root, which sets the update's step in euler3d.cu (0.5 / sqrt(volume)
    # a step), is then about 0.1, as for a tetrahedral mesh of edge 0.01.
    vols = ["%.6g" % (100.0 * h * h * (1.0 + 0.1 * i / 63.0)) for i in range(64)]
    dirs = [(1, 0, " %.6g 0 0" % h), (-1, 0, " %.6g 0 0" % -h),
            (0, 1, " 0 %.6g 0" % h), (0, -1, " 0 %.6g 0" % -h)]
    elems = [None] * n
    bits = r.getrandbits
    for y in range(CFD_NY):
        for x in range(CFD_NX):
            faces = [vols[bits(6)]]
            for dx, dy, normal in dirs:
                nx, ny = x + dx, y + dy
                if 0 <= nx < CFD_NX and 0 <= ny < CFD_NY:
                    nb = perm[ny * CFD_NX + nx] + 1
                elif ny < 0:
                    nb = 0
                else:
                    nb = -1
                faces.append(str(nb) + normal)
            elems[perm[y * CFD_NX + x]] = "\n".join(faces)
    write_text(os.path.join(d, "fvcorr.domn.synthetic"), "%d\n%s\n" % (n, "\n".join(elems)))


def avi(width, height, frames):
    """An uncompressed 8-bit AVI (RIFF, hdrl, movi with one 00db chunk per
    frame, idx1) of the kind avilib reads: width x height bytes a frame."""
    size = width * height

    def chunk(tag, data):
        pad = b"\0" if len(data) % 2 else b""
        return tag + struct.pack("<I", len(data)) + data + pad

    def lst(kind, data):
        return b"LIST" + struct.pack("<I", len(data) + 4) + kind + data

    avih = struct.pack("<IIIIIIIIIIIIII", 40000, size * 25, 0, 0x10, len(frames), 0, 1,
                       size, width, height, 0, 0, 0, 0)
    strh = struct.pack("<4s4sIHHIIIIIIIIhhhh", b"vids", b"DIB ", 0, 0, 0, 0, 1, 25, 0,
                       len(frames), size, 0xFFFFFFFF, 0, 0, 0, width, height)
    strf = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 0, size, 0, 0, 256, 0)
    strf += bytes(b for i in range(256) for b in (i, i, i, 0))  # grey palette
    hdrl = lst(b"hdrl", chunk(b"avih", avih) + lst(b"strl", chunk(b"strh", strh) + chunk(b"strf", strf)))
    movi_data = b""
    idx = b""
    for fr in frames:
        off = 4 + len(movi_data)  # from the 'movi' tag, as idx1 counts
        movi_data += chunk(b"00db", fr)
        idx += b"00db" + struct.pack("<III", 0x10, off, len(fr))
    body = b"AVI " + hdrl + lst(b"movi", movi_data) + chunk(b"idx1", idx)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def gen_heartwall(d):
    """test.avi: HW_FRAMES grey frames of HW_WIDTH x HW_HEIGHT, two bright
    elliptic rings (the inner and outer heart wall, around the points the
    program tracks) that breathe from frame to frame, over speckle noise."""
    r = rng("heartwall")
    # Centre of the tracked points (main.cu's endo/epi rows and columns:
    # row 390 from the top of the image, column 320). AVI frames are stored
    # bottom row first and the program flips them, so in file order the
    # centre's row is counted from the bottom.
    cy, cx = HW_HEIGHT - 1 - 390.0, 320.0
    # Distance from the centre in 1/2 pixel steps, one byte a pixel.
    dist = bytearray(HW_WIDTH * HW_HEIGHT)
    for y in range(HW_HEIGHT):
        ry = (y - cy) / 1.15
        row = y * HW_WIDTH
        for x in range(HW_WIDTH):
            v = int(2.0 * math.hypot(x - cx, ry))
            dist[row + x] = v if v < 255 else 255
    dist = bytes(dist)
    low5 = bytes(i & 31 for i in range(256))
    frames = []
    for f in range(HW_FRAMES):
        beat = math.sin(2.0 * math.pi * f / 12.0)
        inner, outer = 2.0 * (110 + 8 * beat), 2.0 * (190 + 6 * beat)
        table = bytearray(256)
        for k in range(256):
            level = 40
            for rad, width, amp in ((inner, 16.0, 150), (outer, 22.0, 170)):
                level += amp * math.exp(-((k - rad) / width) ** 2)
            table[k] = min(255, int(level)) & 0xE0  # the low 5 bits take the noise
        base = dist.translate(bytes(table))
        noise = r.randbytes(len(dist)).translate(low5)
        frame = (int.from_bytes(base, "little") | int.from_bytes(noise, "little")).to_bytes(len(dist), "little")
        frames.append(frame)
    write_bytes(os.path.join(d, "test.avi"), avi(HW_WIDTH, HW_HEIGHT, frames))


# huffman: symbol counts out of 256 (entropy 2.19 bits a byte; the
# original's file name says 2.2066); every code stays below 16 bits.
HUFF_COUNTS = [116, 64, 34, 18, 10, 6, 4, 2, 1, 1]


def huff_entropy():
    t = float(sum(HUFF_COUNTS))
    return -sum(c / t * math.log2(c / t) for c in HUFF_COUNTS)


def gen_huffman(d):
    """HUFF_BYTES bytes drawn from HUFF_COUNTS (symbols 'a', 'b', ...)."""
    assert sum(HUFF_COUNTS) == 256
    r = rng("huffman")
    table = bytearray()
    for i, c in enumerate(HUFF_COUNTS):
        table += bytes([ord("a") + i]) * c
    data = r.randbytes(HUFF_BYTES).translate(bytes(table))
    write_bytes(os.path.join(d, "synthetic_16MiB.in"), data)


def gen_kmeans(d):
    """kdd_cup format: one point a line, an id then KMEANS_FEATURES integer
    features: each point is one of KMEANS_VARIANTS noisy copies (Gaussian,
    a spread per cluster) of one of KMEANS_CLUSTERS random centres."""
    r = rng("kmeans")
    variants = []
    for _ in range(KMEANS_CLUSTERS):
        centre = [r.randrange(0, 1000) for _ in range(KMEANS_FEATURES)]
        s = r.randrange(20, 80)
        variants.append([" ".join([str(int(v + r.gauss(0.0, s))) for v in centre])
                         for _ in range(KMEANS_VARIANTS)])
    lines = []
    pick, k = r.randrange, KMEANS_CLUSTERS
    for i in range(KMEANS_POINTS):
        lines.append("%d %s" % (i, variants[pick(k)][pick(KMEANS_VARIANTS)]))
    write_text(os.path.join(d, "kdd_cup.synthetic"), "\n".join(lines) + "\n")


# myocyte: 91 state values (ECC model 0-45, CaM modules Dyad 46-60, SL
# 61-75, Cyt 76-90) and 18 parameters, of the magnitudes the model's
# comments give (gates in 0-1, concentrations in mM, the membrane potential
# at rest in mV, CaM species in uM). Not the Rodinia file's values.
MYO_ECC = [
    1.4e-3, 0.987, 0.992, 7.2e-6, 1.0, 2.4e-2, 1.5e-2, 4.1e-3, 0.995, 4.1e-3,  # 0-9 gates
    0.995, 8.6e-3, 5.4e-3, 0.888, 8.2e-7, 1.0e-7, 3.54, 0.772, 8.8e-3, 0.108,  # 10-19
    1.5e-2, 2.9e-4, 1.3e-3, 0.138, 2.1e-3, 9.6e-3, 0.111, 7.3e-3, 7.3e-2, 1.24,  # 20-29 buffers
    0.555, 8.80, 8.81, 8.81, 135.0, 1.7e-4, 1.0e-4, 8.6e-5, -85.6, 0.99,  # 30-39 ions, Vm
    1.0e-3, 0.0, 0.0, 0.0, 0.0, 0.0,  # 40-45
]
MYO_CAM = [  # one module: CaM, Ca2CaM, Ca4CaM, CaMB, Ca2CaMB, Ca4CaMB, Pb2, Pb, Pt, Pt2, Pa, Ca4CaN, CaMCa4CaN, Ca2CaMCa4CaN, Ca4CaMCa4CaN
    0.3, 1.0e-3, 1.0e-6, 4.0, 1.0e-2, 1.0e-5, 1.0e-5, 1.0e-5, 1.0e-6, 1.0e-7, 1.0e-4, 1.0e-3, 1.0e-4, 1.0e-5, 1.0e-6,
]
MYO_PARAMS = [
    400.0, 0.0, 120.0, 3.0e-3, 96.5,   # Dyad: CaMtot, Btot, CaMKIItot, CaNtot, PP1tot
    5.6, 24.2, 120.0, 3.0e-3, 0.57,    # SL
    24.0, 24.2, 120.0, 3.0e-3, 0.57,   # Cyt
    1000.0, 135.0, 1.0,                # cycle length (ms), K (mM), Mg (mM)
]


def gen_myocyte(d):
    """y.txt (91 values) and params.txt (18 values), one value a line."""
    y = MYO_ECC + MYO_CAM * 3
    assert len(y) == 91 and len(MYO_PARAMS) == 18
    write_text(os.path.join(d, "y.txt"), "".join("%.9g\n" % v for v in y))
    write_text(os.path.join(d, "params.txt"), "".join("%.9g\n" % v for v in MYO_PARAMS))


def gen_srad(d):
    """image.pgm: ASCII PGM (P2) of SRAD_COLS x SRAD_ROWS, a bright ellipse
    on a darker field, both with multiplicative speckle (what SRAD removes)."""
    r = rng("srad")
    out = ["P2", "%d %d" % (SRAD_COLS, SRAD_ROWS), "255"]
    cy, cx = SRAD_ROWS / 2.0, SRAD_COLS / 2.0
    for y in range(SRAD_ROWS):
        row = []
        for x in range(SRAD_COLS):
            inside = ((y - cy) / (0.35 * SRAD_ROWS)) ** 2 + ((x - cx) / (0.3 * SRAD_COLS)) ** 2 < 1.0
            level = 170.0 if inside else 70.0
            v = level * r.expovariate(1.0) ** 0.5
            row.append(str(max(0, min(255, int(v)))))
        out.append(" ".join(row))
    write_text(os.path.join(d, "image.pgm"), "\n".join(out) + "\n")


GENERATORS = {
    "b+tree": (gen_btree, ["mil.txt", "command.txt"]),
    "cfd": (gen_cfd, ["fvcorr.domn.synthetic"]),
    "heartwall": (gen_heartwall, ["test.avi"]),
    "huffman": (gen_huffman, ["synthetic_16MiB.in"]),
    "kmeans": (gen_kmeans, ["kdd_cup.synthetic"]),
    "myocyte": (gen_myocyte, ["y.txt", "params.txt"]),
    "srad": (gen_srad, ["image.pgm"]),
}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("apps", nargs="*", help="apps to generate (default: all)")
    ap.add_argument("--force", action="store_true", help="write files that exist already")
    a = ap.parse_args(argv)
    apps = a.apps or list(GENERATORS)
    for app in apps:
        if app not in GENERATORS:
            if app in ("nw", "pathfinder", "streamcluster"):
                continue  # arguments only
            ap.error("no generator for %s (have: %s)" % (app, ", ".join(GENERATORS)))
        gen, files = GENERATORS[app]
        d = os.path.join(a.data_dir, app)
        os.makedirs(d, exist_ok=True)
        if not a.force and all(os.path.exists(os.path.join(d, f)) for f in files):
            continue
        gen(d)
        print("%s: %s" % (app, ", ".join(files)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
