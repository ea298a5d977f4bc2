//! The `ptx-opt` command; see [`ptx_opt::cli`].

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = ptx_opt::cli::run(&args, &mut std::io::stdin().lock(), &mut std::io::stdout().lock(), &mut std::io::stderr().lock());
    std::process::exit(code);
}

/// The IR is many small allocations; mimalloc makes parse+print about a third faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
