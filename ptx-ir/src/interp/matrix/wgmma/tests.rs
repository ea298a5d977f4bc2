//! Kernels through the interpreter (to come).
