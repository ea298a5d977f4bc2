//! The `ptx-opt` binary: the process around [`ptx_opt_cli::command`]
//! (arguments, standard streams, exit status) and the allocator.

fn main() {
    // `args_os`: a path that is not UTF-8 is still a path (`args` would panic).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // stderr stays unlocked: the progress bar of a batch writes to it too.
    let code = ptx_opt_cli::command::main_with(&args, &mut std::io::stdin().lock(), &mut std::io::stdout().lock(), &mut std::io::stderr());
    std::process::exit(code);
}

/// The IR is many small allocations; mimalloc makes parse+print about a third faster than the system allocator.
/// Built without transparent huge pages (`no_thp`, Cargo.toml): with them, every fresh 2 MiB page is zeroed
/// whole, which was most of the time of small runs and a third more peak memory on large ones.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
