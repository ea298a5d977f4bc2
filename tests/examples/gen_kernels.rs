//! Writes generated kernels ([`ptx_tests::gen::kernel`]) to files, for
//! comparing two `ptx-opt` binaries on them (`DIR/SEED.ptx`):
//! `cargo run --release -p ptx-tests --example gen_kernels -- DIR FIRST COUNT`.
//! Seeds alternate between the default, small and straight-line options.

use ptx_tests::gen::{kernel, GenOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(first), Some(count)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()), args.get(3).and_then(|s| s.parse::<u64>().ok())) else {
        eprintln!("usage: gen_kernels DIR FIRST_SEED COUNT");
        std::process::exit(2);
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: {dir}: {e}");
        std::process::exit(1);
    }
    for seed in first..first + count {
        let opts = match seed % 3 {
            0 => GenOptions::default(),
            1 => GenOptions::small(),
            _ => GenOptions::straight_line(),
        };
        let k = kernel(seed, &opts);
        let path = format!("{dir}/{seed}.ptx");
        if let Err(e) = std::fs::write(&path, k.text) {
            eprintln!("error: {path}: {e}");
            std::process::exit(1);
        }
    }
}
