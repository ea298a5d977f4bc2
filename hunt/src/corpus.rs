//! The corpus side: which files to read (directories, `MANIFEST.tsv`
//! manifests, lists of paths), and each file parsed, verified, optimized at
//! `-O2` and harvested, with its DAGs grouped by canonical text into
//! patterns that count their occurrences, files and kernels.

use crate::dag::Dag;
use crate::harvest::{harvest_function, Limits};
use ptx_ir::ir::Item;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};

/// The files named by `arg`: a directory (its `.ptx` files, recursively,
/// sorted), a manifest (`*.tsv`: the first column of each row after the
/// header, relative to the manifest's directory), a list (`@FILE`: one path
/// a line) or a file.
pub fn files_of(arg: &str) -> Result<Vec<PathBuf>, String> {
    if let Some(list) = arg.strip_prefix('@') {
        let text = std::fs::read_to_string(list).map_err(|e| format!("{list}: {e}"))?;
        return Ok(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(PathBuf::from).collect());
    }
    let p = Path::new(arg);
    if p.is_dir() {
        let mut out = Vec::new();
        walk(p, &mut out).map_err(|e| format!("{arg}: {e}"))?;
        out.sort();
        return Ok(out);
    }
    if p.extension().is_some_and(|e| e == "tsv") {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{arg}: {e}"))?;
        let dir = p.parent().unwrap_or(Path::new("."));
        return Ok(text.lines().skip(1).filter_map(|l| l.split('\t').next()).filter(|f| !f.is_empty()).map(|f| dir.join(f)).collect());
    }
    if p.is_file() {
        return Ok(vec![p.to_path_buf()]);
    }
    Err(format!("{arg}: no such file or directory"))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
    Ok(())
}

/// One file's harvest: per function, per root, the growth stages (canonical
/// text and DAG).
pub struct FileHarvest {
    pub functions: Vec<Vec<Vec<(String, Dag)>>>,
}

/// Reads, verifies, optimizes at `-O2` and harvests one file; an error
/// message when it cannot be read or is not valid PTX (or is of a dialect
/// other than the modern one, whose semantics the search assumes).
pub fn harvest_file(path: &Path, limits: &Limits) -> Result<FileHarvest, String> {
    let name = path.display().to_string();
    let text = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let (parsed, _) = ptx_ir::verify::parse_and_verify(&name, &text).map_err(|d| d.first().map_or_else(|| format!("{name}: invalid"), |d| d.to_string()))?;
    let ctx = ptx_opt::ModuleContext::of_module(&parsed.module);
    if ctx.dialect != ptx_ir::eval::Dialect::MODERN {
        return Err(format!("{name}: sm_1x or PTX 1.4 dialect, skipped"));
    }
    let module = ptx_opt::optimize(parsed.module, ptx_opt::OptLevel::O2);
    let mut functions = Vec::new();
    for item in &module.items {
        if let Item::Func(f) = item {
            let roots = harvest_function(f, limits);
            functions.push(roots.into_iter().map(|stages| stages.into_iter().map(|d| (d.text(), d)).collect()).collect());
        }
    }
    Ok(FileHarvest { functions })
}

/// A pattern and where it occurs.
pub struct Pattern {
    pub text: String,
    pub dag: Dag,
    /// Occurrences (roots whose growth passes through this DAG).
    pub count: u64,
}

/// Every pattern of the corpus, and per root its stages as pattern ids.
#[derive(Default)]
pub struct Patterns {
    pub list: Vec<Pattern>,
    index: FxHashMap<String, u32>,
    /// Per root: (file, kernel) and its stages, smallest first.
    pub roots: Vec<((u32, u32), Vec<u32>)>,
    pub files: u32,
    pub kernels: u32,
}

impl Patterns {
    /// Adds one file's harvest.
    pub fn add(&mut self, h: FileHarvest) {
        let file = self.files;
        self.files += 1;
        for f in h.functions {
            let kernel = self.kernels;
            self.kernels += 1;
            for stages in f {
                let ids = stages
                    .into_iter()
                    .map(|(text, dag)| match self.index.get(&text) {
                        Some(&id) => {
                            self.list[id as usize].count += 1;
                            id
                        }
                        None => {
                            let id = self.list.len() as u32;
                            self.index.insert(text.clone(), id);
                            self.list.push(Pattern { text, dag, count: 1 });
                            id
                        }
                    })
                    .collect();
                self.roots.push(((file, kernel), ids));
            }
        }
    }
}

/// Where the roots that show a saving are attributed: per pattern, the
/// roots whose smallest saving stage it is (a larger stage only when it
/// saves more), and their distinct files and kernels.
#[derive(Clone, Debug, Default)]
pub struct Attributed {
    pub count: u64,
    pub files: u32,
    pub kernels: u32,
}

/// Attributes every root to the smallest of its stages with the best
/// saving so far (`saving[id]`, 0 when none): a root shows one rewrite
/// once, not once per stage that contains it.
pub fn attribute(p: &Patterns, saving: &[u32]) -> Vec<Attributed> {
    let mut out = vec![Attributed::default(); p.list.len()];
    let mut files: FxHashMap<u32, FxHashSet<u32>> = FxHashMap::default();
    let mut kernels: FxHashMap<u32, FxHashSet<u32>> = FxHashMap::default();
    for ((file, kernel), stages) in &p.roots {
        let mut best = 0;
        for &id in stages {
            let s = saving[id as usize];
            if s > best {
                best = s;
                out[id as usize].count += 1;
                files.entry(id).or_default().insert(*file);
                kernels.entry(id).or_default().insert(*kernel);
            }
        }
    }
    for (id, f) in files {
        out[id as usize].files = f.len() as u32;
    }
    for (id, k) in kernels {
        out[id as usize].kernels = k.len() as u32;
    }
    out
}
