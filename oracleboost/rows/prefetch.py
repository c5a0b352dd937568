"""A software prefetch for compiled loops over scattered rows.

A loop over a leaf's rows (a histogram, a partition) reads each row's codes at an
address that the previous rows do not predict once the leaf holds a small share of the
rows: every read waits for memory.  :func:`prefetch` asks for an element some rows
ahead, so that the read finds it in cache (LightGBM's histograms do the same with
``PREFETCH_T0``).  It is LLVM's ``llvm.prefetch`` (a read, kept in every cache level), a
hint that never changes a result: measured at 1,000,000 × 20 codes, a histogram of 5% of
the rows (in row order) takes half the time, one of every row the same.
"""

from __future__ import annotations

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["PREFETCH_ROWS", "prefetch"]

#: Rows ahead that a loop asks for: far enough that memory answers before the loop
#: gets there, near enough that the line is still in cache.
PREFETCH_ROWS = 16

# LLVM names the intrinsic by its pointer type: "p0" once pointers are opaque (LLVM 15
# and later), "p0i8" before.
_NAME = "llvm.prefetch.p0" if llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"


@intrinsic
def prefetch(typingctx, array, index):  # pragma: no cover - compiled
    """Hint that ``array[index]`` (a 1-D array) is read soon; returns nothing."""
    if not (isinstance(array, types.Array) and array.ndim == 1
            and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        data, at = args
        arrty = signature.args[0]
        arr = context.make_array(arrty)(context, builder, data)
        ptr = cgutils.get_item_pointer(context, builder, arrty, arr, [at], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _NAME)
        # (address, 0: a read, 3: keep in every level, 1: the data cache)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0),
                          ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
