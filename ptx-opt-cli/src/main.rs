//! The `ptx-opt` binary: the process around [`ptx_opt_cli::command`]
//! (arguments, standard streams, exit status), rayon's pool (how many
//! workers, their stack), and the allocator.

use ptx_opt_cli::command::Threads;

fn main() {
    return_freed_memory_sooner();
    // `args_os`: a path that is not UTF-8 is still a path (`args` would panic).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr());
    let cli = match ptx_opt_cli::command::parse(&args, &mut stdout, &mut stderr) {
        Ok(cli) => cli,
        Err(code) => std::process::exit(code),
    };
    // stderr stays unlocked: the progress bar of a batch writes to it too.
    let code = ptx_opt_cli::command::run(cli, &start_pool, &mut std::io::stdin().lock(), &mut stdout, &mut stderr);
    std::process::exit(code);
}

/// The stack of the main thread on Linux (8 MiB).
const MAIN_STACK_BYTES: usize = 8 << 20;

/// Builds rayon's global pool, for work that can use `threads`. The
/// command runs on rayon's workers (a single input too), which get the
/// main thread's stack. Work that runs on one thread anyway (a small
/// input, [`ptx_opt_cli::optimize_cmd::threads_for`]) runs on the main
/// thread, which becomes the pool's only worker: no thread is started.
/// Starting two workers and handing the work to one was about a fifth of
/// the CPU time of a 20 KB Triton kernel at -O2 (paired runs:
/// `farm-bench`, cpu 0.77, wall 0.85).
fn start_pool(threads: Threads) {
    let pool = rayon::ThreadPoolBuilder::new().stack_size(MAIN_STACK_BYTES);
    let pool = match threads {
        Threads::One => pool.num_threads(1).use_current_thread(),
        Threads::All => pool,
    };
    let _ = pool.build_global();
}

/// The IR is many small allocations; mimalloc makes parse+print about a third faster than the system allocator.
/// Built without transparent huge pages (`no_thp`, Cargo.toml): with them, every fresh 2 MiB page is zeroed
/// whole, which was most of the time of small runs and a third more peak memory on large ones.
/// (`--features system-alloc` keeps the system allocator, for heap profilers.)
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: WordAlignedMiMalloc = WordAlignedMiMalloc;

/// mimalloc, asked for the alignments every block of it has (a word)
/// through its plain entry points: `mimalloc::MiMalloc` calls the
/// aligned ones for every allocation, which check the alignment again
/// (renderer -O0: about 300,000 allocations, 53 host instructions each
/// in `mi_malloc_aligned`). Larger alignments go to `MiMalloc`.
#[cfg(not(feature = "system-alloc"))]
struct WordAlignedMiMalloc;

/// The alignment of every block mimalloc gives (`MI_INTPTR_SIZE`: its
/// block sizes are whole words, its pages aligned further).
#[cfg(not(feature = "system-alloc"))]
const MI_BLOCK_ALIGN: usize = std::mem::size_of::<usize>();

#[cfg(not(feature = "system-alloc"))]
// SAFETY: each call is mimalloc's for the layout (the plain entry points
// only for alignments every block has); `mi_free` frees either kind.
unsafe impl std::alloc::GlobalAlloc for WordAlignedMiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= MI_BLOCK_ALIGN {
            unsafe { mi_malloc(layout.size()).cast() }
        } else {
            unsafe { std::alloc::GlobalAlloc::alloc(&mimalloc::MiMalloc, layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= MI_BLOCK_ALIGN {
            unsafe { mi_zalloc(layout.size()).cast() }
        } else {
            unsafe { std::alloc::GlobalAlloc::alloc_zeroed(&mimalloc::MiMalloc, layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::GlobalAlloc::dealloc(&mimalloc::MiMalloc, ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MI_BLOCK_ALIGN {
            unsafe { mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            unsafe { std::alloc::GlobalAlloc::realloc(&mimalloc::MiMalloc, ptr, layout, new_size) }
        }
    }
}

#[cfg(not(feature = "system-alloc"))]
extern "C" {
    /// mimalloc's option setter (`mi_option_set` in `mimalloc.h`; linked
    /// in by `libmimalloc-sys`, which declares it only under a feature that
    /// needs another crate).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    /// mimalloc's plain allocation entry points (`mimalloc.h`), linked in
    /// by `libmimalloc-sys`.
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_zalloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(p: *mut std::ffi::c_void, new_size: usize) -> *mut std::ffi::c_void;
}

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (the version
/// `libmimalloc-sys` 0.1.49 builds by default; Cargo.lock pins it).
#[cfg(not(feature = "system-alloc"))]
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// mimalloc 3 keeps freed pages for 1 s before returning them to the
/// system; the passes free each function's analyses and e-graphs as they
/// go, so freed memory piles up. After 100 ms instead: peak memory on the
/// 3.8 MB renderer module at -O2 is 17 % lower, its time the same (paired
/// runs; after 10 ms, 21 % lower but 13 % more CPU).
fn return_freed_memory_sooner() {
    #[cfg(not(feature = "system-alloc"))]
    // SAFETY: sets an integer option; mimalloc reads it at each purge.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 100) }
}
