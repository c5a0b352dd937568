"""Rows: the cut of the training rows into fixed blocks and lanes, the threads that run
over them, and the compiled kernels that sum in a fixed order (the lowest layer of the
package but for its small helpers)."""
