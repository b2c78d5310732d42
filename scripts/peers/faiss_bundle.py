"""Builds a FAISS GPU bundle small enough to carry to the GPU host (CUDA 13 only, no internet, 64 MiB).

No FAISS GPU wheel on PyPI runs there as it is (docs/batch-peers.md). This takes faiss-gpu 1.15.1
(CUDA 12, Hopper code inside, 135 MB), keeps only the sm_90 machine code of libfaiss.so (the other
architectures' code is zeroed in place, so it compresses to nothing), adds CUDA 12's libcudart.so.12
and a 12-to-13 forwarder for the 8 cuBLAS functions faiss calls (libcublas.so.12 that jumps into
the host's libcublas.so.13, plus an empty libcublasLt.so.12), and packs it all as one tar.xz.
Runs here (needs pip's network, gcc, readelf); peer_faiss.py --faiss-dir DIR uses the unpacked bundle.
Untested on a GPU when written: see docs/batch-peers.md for the one-command check.

    python3 -m scripts.peers.faiss_bundle --out .whl/faiss-gpu-1.15.1-sm90-bundle.tar.xz
"""
import argparse
import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

PROG = "faiss_bundle"
FAISS = ("faiss-gpu==1.15.1", "faiss_gpu-1.15.1-cp310-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
         "c9833c9b1c46d925edf6ee457a36869bbc444275984cf83a7d736e7f4a2f3439")
CUDART = ("nvidia-cuda-runtime-cu12==12.9.79",
          "nvidia_cuda_runtime_cu12-12.9.79-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
          "25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3")
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
KEEP_ARCH = 90
LIMIT_MIB = 56          # the bundle must leave room in the 64 MiB carried per call

# The cuBLAS symbols libfaiss.so of faiss-gpu 1.15.1 imports (readelf --dyn-syms, version libcublas.so.12).
CUBLAS_FUNCS = ["cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetMathMode",
                "cublasGetMathMode", "cublasSgemmEx", "cublasGemmEx", "cublasGemmStridedBatchedEx"]

SHIM_C = r"""
/* libcublas.so.12 for faiss-gpu on a CUDA 13 host: each function jumps to the same-named function
   of libcublas.so.13 (same C signatures and enum values in cuBLAS 12 and 13 for these 8). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
%(defs)s
__attribute__((constructor)) static void shim_init(void) {
    void *h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "libcublas.so.12 shim: cannot load libcublas.so.13 (%%s)\n", dlerror());
        abort();
    }
%(inits)s
}
"""
SHIM_DEF = ('__attribute__((visibility("hidden"))) void *p_%(f)s;\n'
            '__attribute__((naked)) void %(f)s(void) { __asm__ volatile("jmp *p_%(f)s(%%rip)"); }\n')
SHIM_INIT = ('    if (!(p_%(f)s = dlsym(h, "%(f)s"))) {\n'
             '        fprintf(stderr, "libcublas.so.12 shim: libcublas.so.13 has no %(f)s\\n"); abort();\n    }\n')


def fail(msg):
    raise SystemExit(f"{PROG}: error: {msg}")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(spec, tmp):
    name, fname, digest = spec
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp", "-d", tmp, name]
    for p in PLATFORMS:
        cmd[-3:-3] = ["--platform", p]
    p = subprocess.run(cmd, capture_output=True, text=True)
    path = os.path.join(tmp, fname)
    if p.returncode != 0 or not os.path.exists(path):
        fail(f"pip could not download {name}: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    got = sha256(path)
    if got != digest:
        fail(f"{fname} has SHA-256 {got}, expected {digest}")
    return path


def elf_sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = secs[shstrndx][4]
    names = {}
    for s in secs:
        end = data.index(b"\0", stroff + s[0])
        names[data[stroff + s[0]:end].decode()] = (s[4], s[5])     # file offset, size
    return names


def prune_fatbins(path, keep_arch=KEEP_ARCH):
    """Keeps, in every fatbin of .nv_fatbin, only the SASS (ELF) entry for sm_<keep_arch> (or, where a
    fatbin has none, leaves it whole); the freed bytes become zeros. Returns (kept, dropped) bytes."""
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF":
        fail(f"{path}: not an ELF file")
    secs = elf_sections(bytes(data))
    if ".nv_fatbin" not in secs:
        fail(f"{path}: no .nv_fatbin section")
    off, size = secs[".nv_fatbin"]
    pos, kept, dropped, fatbins = off, 0, 0, 0
    while pos + 16 <= off + size:
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        fatbins += 1
        start, end = pos + hsize, pos + hsize + fsize
        entries, e = [], start
        while e < end:
            kind, _, ehs, psize = struct.unpack_from("<HHIQ", data, e)
            arch = struct.unpack_from("<I", data, e + 28)[0]
            entries.append((kind, arch, e, ehs + psize))
            e += ehs + psize
        if e != end:
            fail(f"{path}: fatbin at offset {pos} does not parse (entries overrun it)")
        keep = [x for x in entries if x[0] == 2 and x[1] == keep_arch]
        if keep:
            blob = b"".join(bytes(data[x[2]:x[2] + x[3]]) for x in keep)
            data[start:start + len(blob)] = blob
            data[start + len(blob):end] = bytes(end - start - len(blob))
            struct.pack_into("<Q", data, pos + 8, len(blob))
            kept += len(blob)
            dropped += fsize - len(blob)
        else:
            kept += fsize
        pos = end
    if fatbins == 0:
        fail(f"{path}: no fatbin found in .nv_fatbin")
    with open(path, "wb") as f:
        f.write(data)
    return kept, dropped, fatbins


def build_shim(libdir, tmp):
    src = os.path.join(tmp, "cublas12_shim.c")
    with open(src, "w") as f:
        f.write(SHIM_C % {"defs": "".join(SHIM_DEF % {"f": fn} for fn in CUBLAS_FUNCS),
                          "inits": "".join(SHIM_INIT % {"f": fn} for fn in CUBLAS_FUNCS)})
    vmap = os.path.join(tmp, "cublas12.map")
    with open(vmap, "w") as f:
        f.write("libcublas.so.12 {\n  global:\n" + "".join(f"    {fn};\n" for fn in CUBLAS_FUNCS)
                + "  local: *;\n};\n")
    empty = os.path.join(tmp, "empty.c")
    with open(empty, "w") as f:
        f.write("/* libcublasLt.so.12: faiss names it but calls nothing in it */\n")
    for cmd in (["gcc", "-shared", "-fPIC", "-O2", "-o", os.path.join(libdir, "libcublas.so.12"),
                 "-Wl,-soname,libcublas.so.12", f"-Wl,--version-script={vmap}", src, "-ldl"],
                ["gcc", "-shared", "-fPIC", "-o", os.path.join(libdir, "libcublasLt.so.12"),
                 "-Wl,-soname,libcublasLt.so.12", empty]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"gcc failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else cmd}")
    shutil.copy(src, os.path.join(libdir, "cublas12_shim.c"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="tar.xz to write (e.g. .whl/faiss-gpu-1.15.1-sm90-bundle.tar.xz)")
    ap.add_argument("--keep-dir", help="also leave the unpacked bundle in this folder")
    args = ap.parse_args(argv)
    for tool in ("gcc",):
        if shutil.which(tool) is None:
            fail(f"{tool} not found")
    with tempfile.TemporaryDirectory() as tmp:
        fwheel, rwheel = download(FAISS, tmp), download(CUDART, tmp)
        root = os.path.join(tmp, "faiss-gpu-sm90")
        with zipfile.ZipFile(fwheel) as z:
            for n in z.namelist():
                if n.startswith(("faiss/", "faiss_gpu.libs/")):
                    z.extract(n, root)
        lib = os.path.join(root, "faiss", "libfaiss.so")
        before = os.path.getsize(lib)
        kept, dropped, fatbins = prune_fatbins(lib)
        print(f"{PROG}: libfaiss.so: {fatbins} fatbins, kept {kept / 2**20:.1f} MiB of sm_{KEEP_ARCH} code, "
              f"zeroed {dropped / 2**20:.1f} MiB of other architectures ({before / 2**20:.1f} MiB file)")
        init = os.path.join(root, "faiss", "__init__.py")
        text = open(init).read()
        if text.count("\n_preload_gpu_libs()\n") != 1:
            fail("faiss/__init__.py: the _preload_gpu_libs() call is not where 1.15.1 has it")
        with open(init, "w") as f:
            f.write(text.replace("\n_preload_gpu_libs()\n",
                                 "\n# distancies bundle: peer_faiss.py --faiss-dir preloads (preload.txt)\n"))
        libdir = os.path.join(root, "lib")
        os.makedirs(libdir)
        with zipfile.ZipFile(rwheel) as z:
            with z.open("nvidia/cuda_runtime/lib/libcudart.so.12") as s, \
                    open(os.path.join(libdir, "libcudart.so.12"), "wb") as d:
                shutil.copyfileobj(s, d)
        build_shim(libdir, tmp)
        with open(os.path.join(root, "preload.txt"), "w") as f:
            f.write("# loaded in order, RTLD_GLOBAL, by peer_faiss.py --faiss-dir before `import faiss`\n"
                    "lib/libcudart.so.12\nfind:libcublas.so.13\nlib/libcublasLt.so.12\nlib/libcublas.so.12\n")
        with open(os.path.join(root, "SOURCES.txt"), "w") as f:
            f.write(f"{FAISS[1]} sha256 {FAISS[2]} (libfaiss.so: sm_{KEEP_ARCH} SASS only; "
                    "faiss/__init__.py: no _preload_gpu_libs() call)\n"
                    f"{CUDART[1]} sha256 {CUDART[2]} (lib/libcudart.so.12)\n"
                    "lib/libcublas.so.12, lib/libcublasLt.so.12: built by scripts/peers/faiss_bundle.py "
                    "(lib/cublas12_shim.c)\n")
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:xz", preset=9) as t:
            t.add(root, arcname="faiss-gpu-sm90")
        size = buf.tell()
        if size > LIMIT_MIB * 2**20:
            fail(f"the bundle is {size / 2**20:.1f} MiB, over the {LIMIT_MIB} MiB it may take of a 64 MiB carry")
        with open(args.out, "wb") as f:
            f.write(buf.getvalue())
        if args.keep_dir:
            shutil.rmtree(args.keep_dir, ignore_errors=True)
            shutil.copytree(root, args.keep_dir, symlinks=True)
    print(f"{PROG}: wrote {args.out} ({size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
