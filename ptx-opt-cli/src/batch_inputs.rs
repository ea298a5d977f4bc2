//! Which inputs the optimize command reads and where each output goes:
//! one input (a file or standard input) to `-o` or standard output, or
//! many (files, and directories searched for `*.ptx`) each to its own path
//! under `--out-dir`. The combinations that cannot work are usage errors
//! that say what to do instead.

use crate::args::{Emit, OptimizeArgs};
use std::path::{Path, PathBuf};

/// One input of a batch and where its output goes (`None`: `--verify`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
}

/// What the command does with its inputs.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// One input (`None`: standard input) to `-o` or standard output.
    Single(Option<PathBuf>),
    /// Every input on its own, in parallel, with a summary.
    Batch(Vec<Job>),
}

/// Why there is no plan.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The arguments do not fit together (exit 2).
    Usage(String),
    /// A directory cannot be read, or holds no PTX file (exit 1).
    Input(String),
}

fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// The plan for the optimize options `o`.
pub fn plan(o: &OptimizeArgs) -> Result<Plan, PlanError> {
    let inputs = &o.inputs;
    if inputs.is_empty() || (inputs.len() == 1 && is_stdin(&inputs[0])) {
        if o.out_dir.is_some() {
            return Err(PlanError::Usage("--out-dir needs input files or directories: standard input has no path to mirror under it".into()));
        }
        return Ok(Plan::Single(None));
    }
    if inputs.iter().any(|p| is_stdin(p)) {
        return Err(PlanError::Usage("`-` (standard input) cannot be one of several inputs".into()));
    }
    let one_file = inputs.len() == 1 && !inputs[0].is_dir();
    // Without --out-dir: one file (many only to --verify them).
    if o.out_dir.is_none() && (one_file || !o.verify) {
        if inputs.len() > 1 && o.output.is_some() {
            return Err(PlanError::Usage(format!("-o names one output file, but {} inputs were given: use --out-dir DIR", inputs.len())));
        }
        if inputs.len() > 1 {
            return Err(PlanError::Usage(format!("{} inputs need --out-dir DIR (each output goes to its input's path under DIR)", inputs.len())));
        }
        if inputs[0].is_dir() {
            return Err(PlanError::Usage(format!("`{}` is a directory: give --out-dir DIR to optimize every .ptx file under it", inputs[0].display())));
        }
        return Ok(Plan::Single(Some(inputs[0].clone())));
    }
    let skip = o.out_dir.as_deref().and_then(|d| d.canonicalize().ok());
    let mut jobs = Vec::new();
    for input in inputs {
        let found: Vec<(PathBuf, PathBuf)> = if input.is_dir() {
            let mut files = Vec::new();
            walk(input, skip.as_deref(), &mut files)?;
            if files.is_empty() {
                return Err(PlanError::Input(format!("no .ptx file under `{}`", input.display())));
            }
            files.into_iter().map(|f| (f.strip_prefix(input).unwrap_or(&f).to_path_buf(), f)).collect()
        } else {
            let name = input.file_name().ok_or_else(|| PlanError::Usage(format!("`{}` names no file", input.display())))?;
            vec![(PathBuf::from(name), input.clone())]
        };
        for (relative, file) in found {
            let output = o.out_dir.as_ref().map(|d| {
                let p = d.join(&relative);
                if o.emit == Emit::CfgDot { p.with_extension("dot") } else { p }
            });
            jobs.push(Job { input: file, output });
        }
    }
    let mut seen: std::collections::HashMap<&Path, &Path> = std::collections::HashMap::new();
    for j in &jobs {
        let Some(out) = &j.output else { continue };
        if let Some(other) = seen.insert(out, &j.input) {
            return Err(PlanError::Usage(format!("`{}` and `{}` would both be written to `{}`: give them separately or from their common directory", other.display(), j.input.display(), out.display())));
        }
    }
    Ok(Plan::Batch(jobs))
}

/// Every `*.ptx` file under `dir`, in name order (not entering `skip`, the
/// output directory, nor following links to directories).
fn walk(dir: &Path, skip: Option<&Path>, out: &mut Vec<PathBuf>) -> Result<(), PlanError> {
    let cannot = |e: std::io::Error| PlanError::Input(format!("cannot read directory `{}`: {e}", dir.display()));
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir).map_err(cannot)?.collect::<Result<_, _>>().map_err(cannot)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let ty = e.file_type().map_err(cannot)?;
        if ty.is_dir() {
            if skip.is_some() && path.canonicalize().ok().as_deref() == skip {
                continue;
            }
            walk(&path, skip, out)?;
        } else if path.extension().is_some_and(|x| x == "ptx") && path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn opts(args: &[&str]) -> OptimizeArgs {
        crate::args::Cli::try_parse_from(std::iter::once("ptx-opt").chain(args.iter().copied())).unwrap().optimize
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ptx-opt-plan-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub/deeper")).unwrap();
        for f in ["a.ptx", "notes.txt", "sub/b.ptx", "sub/deeper/c.ptx"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        d
    }

    #[test]
    fn one_input_or_standard_input() {
        assert_eq!(plan(&opts(&[])), Ok(Plan::Single(None)));
        assert_eq!(plan(&opts(&["-"])), Ok(Plan::Single(None)));
        assert_eq!(plan(&opts(&["k.ptx", "-o", "out.ptx"])), Ok(Plan::Single(Some("k.ptx".into()))));
        assert_eq!(plan(&opts(&["--verify", "k.ptx"])), Ok(Plan::Single(Some("k.ptx".into()))));
    }

    #[test]
    fn directories_mirror_their_relative_paths() {
        let d = scratch("mirror");
        let out = d.join("out");
        let Ok(Plan::Batch(jobs)) = plan(&opts(&[d.to_str().unwrap(), "--out-dir", out.to_str().unwrap()])) else { panic!() };
        let pairs: Vec<(PathBuf, PathBuf)> = jobs.into_iter().map(|j| (j.input, j.output.unwrap())).collect();
        assert_eq!(pairs, vec![(d.join("a.ptx"), out.join("a.ptx")), (d.join("sub/b.ptx"), out.join("sub/b.ptx")), (d.join("sub/deeper/c.ptx"), out.join("sub/deeper/c.ptx"))]);
        // A second run does not read its own outputs; cfg-dot outputs are .dot files.
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("a.ptx"), "").unwrap();
        let Ok(Plan::Batch(jobs)) = plan(&opts(&[d.to_str().unwrap(), "--out-dir", out.to_str().unwrap(), "--emit=cfg-dot"])) else { panic!() };
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].output, Some(out.join("a.dot")));
        // Files given by name go to their name; --verify reads many without --out-dir.
        let Ok(Plan::Batch(jobs)) = plan(&opts(&["--verify", d.join("a.ptx").to_str().unwrap(), d.join("sub").to_str().unwrap()])) else { panic!() };
        assert_eq!(jobs, vec![Job { input: d.join("a.ptx"), output: None }, Job { input: d.join("sub/b.ptx"), output: None }, Job { input: d.join("sub/deeper/c.ptx"), output: None }]);
    }

    #[test]
    fn combinations_that_cannot_work_say_why() {
        let d = scratch("errors");
        let usage = |args: &[&str]| match plan(&opts(args)) {
            Err(PlanError::Usage(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        };
        assert!(usage(&["a.ptx", "b.ptx"]).contains("2 inputs need --out-dir DIR"));
        assert!(usage(&["a.ptx", "b.ptx", "-o", "x.ptx"]).contains("-o names one output file, but 2 inputs were given"));
        assert!(usage(&[d.to_str().unwrap()]).contains("is a directory: give --out-dir DIR"));
        assert!(usage(&["-", "--out-dir", "o"]).contains("standard input has no path"));
        assert!(usage(&["-", "a.ptx", "--out-dir", "o"]).contains("cannot be one of several inputs"));
        let clash = usage(&[d.join("sub/b.ptx").to_str().unwrap(), d.join("sub/deeper/c.ptx").to_str().unwrap(), d.join("sub/b.ptx").to_str().unwrap(), "--out-dir", "o"]);
        assert!(clash.contains("would both be written to `o/b.ptx`"), "{clash}");
        std::fs::create_dir_all(d.join("empty")).unwrap();
        assert!(matches!(plan(&opts(&[d.join("empty").to_str().unwrap(), "--out-dir", "o"])), Err(PlanError::Input(m)) if m.contains("no .ptx file under")));
    }
}
