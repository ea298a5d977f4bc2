//! The PTX corpora the suite runs over: the project's own (`tests/corpus/`)
//! and, when present, the shared one (`../shared/corpus/`, with its
//! `MANIFEST.tsv` of ptxas verdicts).

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `tests/corpus/` inside the repository.
pub fn own_corpus_dir() -> PathBuf {
    repo_root().join("tests").join("corpus")
}

/// The shared corpus, if this checkout has it (`PTX_SHARED_CORPUS` overrides the place).
pub fn shared_corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PTX_SHARED_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("..").join("shared").join("corpus"),
    };
    dir.join("MANIFEST.tsv").is_file().then_some(dir)
}

/// Every `.ptx` file below `dir`, sorted.
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                // `pending/` holds cases for known bugs that are not fixed yet.
                if p.file_name().is_some_and(|n| n != "pending") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One line of the shared corpus's `MANIFEST.tsv`.
#[derive(Clone, Debug)]
pub struct ManifestEntry {
    /// Relative to the corpus directory.
    pub file: String,
    pub arch_used: String,
    pub ptxas_ok: bool,
    pub note: String,
}

/// Reads `MANIFEST.tsv`.
pub fn manifest(dir: &Path) -> Vec<ManifestEntry> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("MANIFEST.tsv is readable");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("MANIFEST.tsv has no `{name}` column"));
    let (f, a, ok, note) = (col("file"), col("arch_used"), col("ptxas_ok"), col("note"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            ManifestEntry {
                file: c[f].to_string(),
                arch_used: c.get(a).unwrap_or(&"").to_string(),
                ptxas_ok: c.get(ok) == Some(&"yes"),
                note: c.get(note).unwrap_or(&"").to_string(),
            }
        })
        .collect()
}

/// The kernels of a module that have bodies: name and parameter declarations.
pub fn kernels(m: &ptx_ir::ir::Module) -> Vec<(String, Vec<ptx_ir::ir::VarDecl>)> {
    use ptx_ir::ir::{FuncKind, Item};
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Func(f) if f.kind == FuncKind::Entry && f.body.is_some() => Some((f.name.to_string(), f.params.clone().unwrap_or_default())),
            _ => None,
        })
        .collect()
}

use ptx_ir::interp::{KernelArg, Launch};
use ptx_ir::ir::VarDecl;
use ptx_ir::isa::{ScalarType, TypeClass};
use crate::gen::Choices;

/// Steps a generic launch may take.
pub const STEP_LIMIT: u64 = 2_000_000;
/// Bytes of each buffer a generic launch makes.
pub const BUFFER_BYTES: usize = 64 * 1024;

/// The ptxas-valid PTX files: the own corpus and the shared corpus's
/// files its manifest marks as assembling.
pub fn valid_files() -> Vec<PathBuf> {
    let mut files = ptx_files(&own_corpus_dir());
    if let Some(dir) = shared_corpus_dir() {
        files.extend(manifest(&dir).into_iter().filter(|e| e.ptxas_ok).map(|e| dir.join(e.file)));
    }
    files
}

/// Size in bytes of one declared parameter.
pub fn param_size(d: &VarDecl, dims: &[Option<u64>]) -> usize {
    let elem = (d.ty.bits().max(8) / 8) as usize * d.vector.unwrap_or(1) as usize;
    elem * dims.iter().map(|x| x.unwrap_or(0) as usize).product::<usize>()
}

/// The generic launch of kernel `name`: two CTAs of 32 threads, 64 KiB
/// buffers of random bytes for 64-bit parameters, 16 for 32-bit integers,
/// 1.0 for floats, zero bytes for structs and arrays.
pub fn generic_launch(name: &str, params: &[VarDecl]) -> Launch {
    let mut l = Launch::new(name, [2, 1, 1], [32, 1, 1]);
    l.max_steps = STEP_LIMIT;
    l.dynamic_shared = 16 * 1024;
    for d in params {
        for nm in &d.names {
            let size = param_size(d, &nm.dims);
            let arg = if !nm.dims.is_empty() || d.vector.is_some() {
                KernelArg::Bytes(vec![0; size])
            } else if size == 8 && d.ty.class() != TypeClass::Float {
                l.buffers.push(Choices::seeded(l.buffers.len() as u64).bytes(BUFFER_BYTES));
                KernelArg::Buffer(l.buffers.len() - 1)
            } else if d.ty.class() == TypeClass::Float {
                let bits = match d.ty {
                    ScalarType::F64 => 1f64.to_bits() as u128,
                    ScalarType::F32 => 1f32.to_bits() as u128,
                    _ => 0x3c00,
                };
                KernelArg::Scalar { ty: d.ty, bits }
            } else {
                KernelArg::Scalar { ty: d.ty, bits: 16 }
            };
            l.args.push(arg);
        }
    }
    l
}



/// Does kernel `name` execute warpgroup instructions (`wgmma.*`)?
fn uses_warpgroups(module: &ptx_ir::ir::Module, name: &str) -> bool {
    module.items.iter().any(|i| match i {
        ptx_ir::ir::Item::Func(f) if &*f.name == name => f.body.iter().flatten().any(|s| matches!(s, ptx_ir::ir::Stmt::Instr(ins) if ins.opcode.name().starts_with("wgmma"))),
        _ => false,
    })
}

/// [`generic_launch`] (with 128 threads per block for kernels using
/// `wgmma`) plus a default texture, sampler or surface for every one the
/// kernel uses ([`crate::corpus_textures`]) and a default tensor map for
/// every 128-byte parameter it uses as one ([`crate::corpus_tensor_maps`]);
/// defaults of this harness, not of `ptx-opt run`.
pub fn generic_launch_in(module: &ptx_ir::ir::Module, name: &str, params: &[VarDecl]) -> Launch {
    let mut l = generic_launch(name, params);
    if uses_warpgroups(module, name) {
        // `wgmma` is a collective of 128 threads: 32 could only be undefined.
        l.block = [128, 1, 1];
    }
    crate::corpus_textures::bind_default_textures(module, name, &mut l);
    crate::corpus_tensor_maps::bind_default_tensor_maps(module, name, &mut l);
    l
}
