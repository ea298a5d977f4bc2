//! The `ptx-opt` command line: argument parsing, reading the input, and
//! writing the output atomically (a temporary file renamed into place, and
//! only when everything succeeded).

use crate::{optimize, OptLevel};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Exit status for success.
pub const EXIT_OK: i32 = 0;
/// Exit status for invalid input (diagnostics on stderr, nothing written).
pub const EXIT_INVALID: i32 = 1;
/// Exit status for usage errors.
pub const EXIT_USAGE: i32 = 2;

pub const USAGE: &str = "\
usage: ptx-opt [OPTIONS] [INPUT]
       ptx-opt run INPUT --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
                   (runs a kernel on the reference interpreter; `ptx-opt run --help`)

Reads PTX from INPUT (a path, or `-` or nothing for standard input),
optimizes it and writes PTX.

options:
  -o PATH        write the output to PATH (default: standard output);
                 written only on success, through a temporary file
  -O0            no optimization: parse, verify and print back (default,
                 as in compilers)
  -O1            the e-graph engine (algebra, constant folding, value
                 numbering, dead values, division by constants, lop3),
                 small limits
  -O2            the e-graph engine with larger limits
  -O3            -O2 with the largest limits, plus a 32-bit fast path for
                 64-bit division by a run-time value (faster when operands
                 fit 32 bits; may cost registers)
  --verify       parse and verify only (types, targets, versions ...);
                 diagnostics on stderr, nothing written
  --no-verify    skip the verifier (for input verified before); by default
                 a verifier error stops the command before anything is
                 written, and warnings are printed
  --emit=KIND    what to write: `ptx` (default) or `cfg-dot` (graphviz:
                 one subgraph per function, edges labeled taken/fall-through)
  -h, --help     print this help
  --version      print the version

exit status: 0 success, 1 invalid input, 2 usage error
";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    pub input: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub level: OptLevel,
    /// Parse and verify only.
    pub verify: bool,
    /// Do not verify before optimizing.
    pub no_verify: bool,
    pub emit: Emit,
}

/// The kind of output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Ptx,
    CfgDot,
}

/// The outcome of parsing the arguments.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Options),
    Help,
    Version,
}

/// Parses arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut opts = Options { input: None, output: None, level: OptLevel::O0, verify: false, no_verify: false, emit: Emit::Ptx };
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if only_files || a == "-" || !a.starts_with('-') {
            if opts.input.is_some() {
                return Err(format!("more than one input: `{}` and `{a}`", opts.input.as_ref().unwrap().display()));
            }
            opts.input = if a == "-" { None } else { Some(PathBuf::from(a)) };
            if a == "-" {
                opts.input = None;
            }
            continue;
        }
        match a {
            "--" => only_files = true,
            "-h" | "--help" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            "-o" => {
                let Some(p) = args.get(i) else { return Err("`-o` needs a path".into()) };
                i += 1;
                opts.output = Some(PathBuf::from(p));
            }
            "-O0" => opts.level = OptLevel::O0,
            "-O1" => opts.level = OptLevel::O1,
            "-O2" => opts.level = OptLevel::O2,
            "-O3" => opts.level = OptLevel::O3,
            "--verify" => opts.verify = true,
            "--no-verify" => opts.no_verify = true,
            "--emit=ptx" => opts.emit = Emit::Ptx,
            "--emit=cfg-dot" => opts.emit = Emit::CfgDot,
            _ if a.starts_with("--emit") => return Err(format!("`{a}`: --emit takes `ptx` or `cfg-dot` (--emit=cfg-dot)")),
            "-O" => return Err("`-O` needs a level: -O0, -O1, -O2 or -O3".to_string()),
            _ if a.starts_with("-o") && a.len() > 2 => opts.output = Some(PathBuf::from(&a[2..])),
            _ => return Err(format!("unknown option `{a}`")),
        }
    }
    if opts.verify && opts.no_verify {
        return Err("`--verify` and `--no-verify` exclude each other".into());
    }
    Ok(Command::Run(opts))
}

/// Runs the command; returns the exit status. `stdin`/`stdout`/`stderr` are injected for tests.
pub fn run(args: &[String], stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    if args.first().map(|s| s.as_str()) == Some("run") {
        if args.iter().any(|a| a == "-h" || a == "--help") {
            let _ = stdout.write_all(crate::run_cmd::USAGE.as_bytes());
            return EXIT_OK;
        }
        return crate::run_cmd::run(&args[1..], stdin, stdout, stderr);
    }
    let opts = match parse_args(args) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            let _ = stdout.write_all(USAGE.as_bytes());
            return EXIT_OK;
        }
        Ok(Command::Version) => {
            let _ = writeln!(stdout, "ptx-opt {}", env!("CARGO_PKG_VERSION"));
            return EXIT_OK;
        }
        Err(m) => {
            let _ = writeln!(stderr, "ptx-opt: {m}\n\n{USAGE}");
            return EXIT_USAGE;
        }
    };
    let (name, bytes) = match &opts.input {
        Some(p) => match std::fs::read(p) {
            Ok(b) => (p.display().to_string(), b),
            Err(e) => {
                let _ = writeln!(stderr, "ptx-opt: cannot read `{}`: {e}", p.display());
                return EXIT_INVALID;
            }
        },
        None => {
            let mut b = Vec::new();
            if let Err(e) = stdin.read_to_end(&mut b) {
                let _ = writeln!(stderr, "ptx-opt: cannot read standard input: {e}");
                return EXIT_INVALID;
            }
            ("<stdin>".to_string(), b)
        }
    };
    let parsed = match ptx_ir::parse(&name, &bytes) {
        Ok(p) => p,
        Err(d) => {
            let _ = writeln!(stderr, "{d}");
            return EXIT_INVALID;
        }
    };
    // The optimizer reasons only about verified input: an error stops here.
    if !opts.no_verify {
        let diags = ptx_ir::verify::verify(&parsed.module, &parsed.source_map, &name, &bytes);
        for d in &diags {
            let _ = writeln!(stderr, "{d}");
        }
        if diags.iter().any(|d| d.is_error()) {
            return EXIT_INVALID;
        }
    }
    if opts.verify {
        return EXIT_OK;
    }
    let module = optimize(parsed.module, opts.level);
    let text = match opts.emit {
        Emit::Ptx => ptx_print::print_module(&module),
        Emit::CfgDot => ptx_ir::cfg::module_dot(&module, &|f, s| match s {
            ptx_ir::ir::Stmt::Instr(i) => {
                let mut t = String::new();
                ptx_print::write_instruction(&mut t, f, i);
                t
            }
            _ => String::new(),
        }),
    };
    // The process ends right after this; freeing a large module piece by piece
    // is measurable time for nothing.
    std::mem::forget(module);
    std::mem::forget(parsed.source_map);
    match &opts.output {
        None => {
            if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
                let _ = writeln!(stderr, "ptx-opt: cannot write standard output: {e}");
                return EXIT_INVALID;
            }
        }
        Some(path) => {
            if let Err(e) = write_atomically(path, text.as_bytes()) {
                let _ = writeln!(stderr, "ptx-opt: cannot write `{}`: {e}", path.display());
                return EXIT_INVALID;
            }
        }
    }
    EXIT_OK
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name = path.file_name().ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    let tmp = dir.join(format!(".{}.ptx-opt-{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments() {
        assert_eq!(
            parse_args(&args(&["-O0", "in.ptx", "-o", "out.ptx"])),
            Ok(Command::Run(Options { input: Some("in.ptx".into()), output: Some("out.ptx".into()), level: OptLevel::O0, verify: false, no_verify: false, emit: Emit::Ptx }))
        );
        assert_eq!(parse_args(&args(&["-"])), Ok(Command::Run(Options { input: None, output: None, level: OptLevel::O0, verify: false, no_verify: false, emit: Emit::Ptx })));
        assert!(matches!(parse_args(&args(&["--verify", "x.ptx"])), Ok(Command::Run(Options { verify: true, .. }))));
        assert!(matches!(parse_args(&args(&["--no-verify", "x.ptx"])), Ok(Command::Run(Options { no_verify: true, .. }))));
        assert!(parse_args(&args(&["--verify", "--no-verify"])).is_err());
        assert!(matches!(parse_args(&args(&["--emit=cfg-dot"])), Ok(Command::Run(Options { emit: Emit::CfgDot, .. }))));
        assert!(parse_args(&args(&["--emit=svg"])).is_err());
        assert!(parse_args(&args(&["a", "b"])).is_err());
        assert!(parse_args(&args(&["-o"])).is_err());
        assert!(parse_args(&args(&["--frobnicate"])).is_err());
        assert_eq!(parse_args(&args(&["--help"])), Ok(Command::Help));
    }
}
