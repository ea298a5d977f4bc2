//! When whole-module work (parsing, verifying, printing) is split across
//! rayon's threads: for texts large enough that starting the threads costs
//! less than it saves, and only when there are several threads. The split
//! never changes a result, only how long it takes.

/// Modules of at least this many bytes of text are worth splitting.
pub const PARALLEL_MIN_BYTES: usize = 128 * 1024;

/// Should work over a module of `bytes` bytes of text run on all threads?
pub fn worth_splitting(bytes: usize) -> bool {
    bytes >= PARALLEL_MIN_BYTES && rayon::current_num_threads() > 1
}
