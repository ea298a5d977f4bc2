//! Links the `ptx-opt` command as a position-dependent executable on
//! Linux (as ptxas itself is). A position-independent one has the loader
//! relocate about 26,000 pointers of the ISA tables at every start (0.63 MB
//! of relocation records read, 0.5 MB of tables written to private pages):
//! without that, a run starts in 0.34 M fewer instructions and peaks about
//! 1.3 MB lower (a 1 MB module at `-O0`: 17.0 → 15.7 MiB). The price is
//! that the command's own code is not at a random address.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=ptx-opt=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
