//! Specification tests: one file per case, the PTX input first, then a
//! separator line, then the expected outcome (printed PTX or a diagnostic).
//! Run with `PTX_BLESS=1` to rewrite the expected parts from what the code
//! does now; review the diff before committing.

use std::path::{Path, PathBuf};

/// The line between the input and the expected outcome.
pub const SEPARATOR: &str = "// ---- expected ----";

/// The name diagnostics use for a case's input.
pub const INPUT_NAME: &str = "input.ptx";

/// Runs `outcome` over every `*.ptx` case in `dir` and compares with the
/// expected part (or rewrites it when `PTX_BLESS` is set). Panics listing
/// every case that differs.
pub fn check_dir(dir: &Path, outcome: impl Fn(&str) -> String) {
    let bless = std::env::var_os("PTX_BLESS").is_some();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let mut failures = Vec::new();
    for path in &cases {
        let text = std::fs::read_to_string(path).unwrap();
        let (input, expected) = match text.split_once(&format!("\n{SEPARATOR}\n")) {
            Some((i, e)) => (format!("{i}\n"), Some(e.to_string())),
            None => (text.clone(), None),
        };
        let actual = outcome(&input);
        let actual = format!("{}\n", actual.trim_end());
        // An unexpected outcome is a failure, and never blessed.
        if actual.starts_with("UNEXPECTED") {
            failures.push(format!("{}: {actual}", path.display()));
            continue;
        }
        if bless {
            std::fs::write(path, format!("{input}{SEPARATOR}\n{actual}")).unwrap();
            continue;
        }
        match expected {
            Some(e) if e == actual => {}
            Some(e) => failures.push(format!("{}:\n--- expected\n{e}--- actual\n{actual}", path.display())),
            None => failures.push(format!("{}: no `{SEPARATOR}` section (run with PTX_BLESS=1)", path.display())),
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// The outcome of parsing: the diagnostic, or the printed module.
pub fn parse_outcome(input: &str) -> String {
    match ptx_ir::parse(INPUT_NAME, input.as_bytes()) {
        Err(d) => d.to_string(),
        Ok(p) => ptx_print::print_module(&p.module),
    }
}

/// The outcome of running a kernel on the reference interpreter: the
/// buffers as JSON, or the error. The launch is the input's `// RUN:` line,
/// written as the arguments of `ptx-opt run` (`--kernel k --grid 1 --block
/// 32 --arg buf:u32:32=zeros`).
pub fn run_outcome(input: &str) -> String {
    let Some(line) = input.lines().find_map(|l| l.trim().strip_prefix("// RUN:")) else {
        return "UNEXPECTED: no `// RUN:` line".into();
    };
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let options = match ptx_opt_cli::run_cmd::parse_run_args(&args) {
        Ok(o) => o,
        Err(e) => return format!("UNEXPECTED: bad RUN line: {e}"),
    };
    match ptx_opt_cli::run_cmd::run_text(INPUT_NAME, input.as_bytes(), &options) {
        Ok((json, None)) => json,
        Ok((json, Some(warning))) => format!("{warning}\n{json}"),
        Err(e) => e,
    }
}

/// The outcome of optimizing: the first line names the passes
/// (`// PASSES: egraph, dce`, run at `-O2`'s settings, or at another level's
/// with the level last: `// PASSES: address-space, -O3`) or a level alone
/// (`// PASSES: -O2`, the whole pipeline); the printed
/// module. When the input has a `// RUN:` line, the original and the
/// optimized module also run on the reference interpreter with that launch
/// and must leave the same buffers (a differential check of the case).
pub fn opt_outcome(input: &str) -> String {
    let Some(line) = input.lines().next().and_then(|l| l.trim().strip_prefix("// PASSES:")) else {
        return "UNEXPECTED: the first line must be `// PASSES: name, ...` or `// PASSES: -O2`".into();
    };
    let parsed = match ptx_ir::parse(INPUT_NAME, input.as_bytes()) {
        Ok(p) => p,
        Err(d) => return format!("UNEXPECTED ERROR: {d}"),
    };
    let names: Vec<&str> = line.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let out = match names.as_slice() {
        [level] if level.starts_with("-O") => {
            let level = match *level {
                "-O1" => ptx_opt::OptLevel::O1,
                "-O2" => ptx_opt::OptLevel::O2,
                "-O3" => ptx_opt::OptLevel::O3,
                _ => return format!("UNEXPECTED: unknown level {level}"),
            };
            ptx_opt::optimize(parsed.module, level)
        }
        [passes @ .., last] => {
            let (passes, level) = match *last {
                "-O1" => (passes, ptx_opt::OptLevel::O1),
                "-O2" => (passes, ptx_opt::OptLevel::O2),
                "-O3" => (passes, ptx_opt::OptLevel::O3),
                _ => (names.as_slice(), ptx_opt::OptLevel::O2),
            };
            match ptx_opt::passes::run_named(parsed.module, passes, level) {
                Ok(m) => m,
                Err(e) => return format!("UNEXPECTED: {e}"),
            }
        }
        [] => return "UNEXPECTED: no pass named".into(),
    };
    let printed = ptx_print::print_module(&out);
    if input.lines().any(|l| l.trim().starts_with("// RUN:")) {
        let before = run_outcome(input);
        // The optimized text has no comments: carry the RUN line over.
        let run_line = input.lines().find(|l| l.trim().starts_with("// RUN:")).unwrap();
        let after = run_outcome(&format!("{run_line}\n{printed}"));
        if before != after {
            return format!("UNEXPECTED: the optimized module computes something else\n--- input\n{before}\n--- optimized\n{after}\n{printed}");
        }
        if before.starts_with("input.ptx:") || before.starts_with("UNEXPECTED") {
            return format!("UNEXPECTED: the RUN line does not run: {before}");
        }
    }
    printed
}

/// The directory of a spec suite: `tests/spec/NAME`.
pub fn spec_dir(name: &str) -> PathBuf {
    crate::corpus::repo_root().join("tests").join("spec").join(name)
}
