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

/// Groups consecutive elements of the given sizes into runs (index ranges,
/// in order, covering them all): a run takes elements until its size
/// reaches `target`.
pub fn runs(sizes: impl IntoIterator<Item = usize>, target: usize) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut size = 0;
    for (k, n) in sizes.into_iter().enumerate() {
        match out.last_mut() {
            Some(run) if size < target => run.end = k + 1,
            _ => {
                out.push(k..k + 1);
                size = 0;
            }
        }
        size += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_cover_the_elements_in_order_and_balance_them() {
        let sizes = [10, 5, 35, 1, 39];
        assert_eq!(runs(sizes, 30), vec![0..3, 3..5]);
        assert_eq!(runs(sizes, 1).len(), sizes.len());
        assert_eq!(runs(sizes, 1000), vec![0..5]);
        assert!(runs([], 4).is_empty());
    }
}
