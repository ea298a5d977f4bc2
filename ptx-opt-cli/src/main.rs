//! The `ptx-opt` binary: the process around [`ptx_opt_cli`] (arguments,
//! standard streams, exit status) and the allocator.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = ptx_opt_cli::optimize_cmd::run(&args, &mut std::io::stdin().lock(), &mut std::io::stdout().lock(), &mut std::io::stderr().lock());
    std::process::exit(code);
}

/// The IR is many small allocations; mimalloc makes parse+print about a third faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
