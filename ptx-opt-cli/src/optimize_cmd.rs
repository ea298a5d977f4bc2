//! The `ptx-opt` command line: argument parsing, reading the input, and
//! writing the output atomically (a temporary file renamed into place, and
//! only when everything succeeded).

use ptx_opt::OptLevel;
use crate::{EXIT_INVALID, EXIT_OK, EXIT_USAGE};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};


pub const USAGE: &str = "\
usage: ptx-opt [OPTIONS] [INPUT]
       ptx-opt run INPUT --kernel NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
                   (runs a kernel on the reference interpreter; `ptx-opt run --help`)

Reads PTX from INPUT (a path, or `-` or nothing for standard input),
optimizes it and writes PTX.

options:
  -o PATH        write the output to PATH (default: standard output);
                 written only on success, through a temporary file
  -O0            no optimization: parse, verify and print back
  -O1            cheap clean-up: stack slots to registers, the e-graph
                 engine with small limits, dead code, branches, declarations
  -O2            every pass that never made a corpus kernel worse in SASS
                 instructions or registers (the default)
  -O3            -O2 with the largest limits and -O3-only rules, a 32-bit
                 fast path for 64-bit division, ptxas free to unroll loops
                 of promoted slots, passes to a fixed point (faster code,
                 possibly more static instructions or registers)
  --passes=LIST  run these passes, in order, instead of a level's pipeline
                 (comma-separated; limits of the -O level given); see
                 --list-passes
  --list-passes  print every pass with a one-line description
  --print-after-all     print each function after each pass (stderr)
  --validate-after-all  verify and re-parse each function after each pass;
                 a failure names the pass and the function (exit 1)
  --time-passes  print time per pass, summed over functions (stderr)
  --opt-bisect-limit=N  run only the first N pass×function steps (each
                 step is logged on stderr: `BISECT: running pass (3) ...`)
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
    /// `--passes`: these passes instead of the level's pipeline.
    pub passes: Option<Vec<String>>,
    pub print_after_all: bool,
    pub validate_after_all: bool,
    pub time_passes: bool,
    pub bisect_limit: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options { input: None, output: None, level: OptLevel::O2, verify: false, no_verify: false, emit: Emit::Ptx, passes: None, print_after_all: false, validate_after_all: false, time_passes: false, bisect_limit: None }
    }
}

/// Every pass, one line each, and the pipeline of each level.
pub fn pass_list() -> String {
    let mut out = String::from("\npasses (--passes=a,b,c):\n");
    for p in ptx_opt::passes::PASSES {
        out.push_str(&format!("  {:<15}{}\n", p.name, p.description));
    }
    out.push_str("\npipelines:\n");
    for (flag, level) in [("-O1", OptLevel::O1), ("-O2", OptLevel::O2), ("-O3", OptLevel::O3)] {
        out.push_str(&format!("  {flag}  {}\n", ptx_opt::passes::pipeline(level).join(",")));
    }
    out
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
    ListPasses,
    Version,
}

/// Parses arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut opts = Options::default();
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
        // `--flag=value` and `--flag value`.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            let v = args.get(i).cloned().ok_or_else(|| format!("`{flag}` needs {what}"))?;
            i += 1;
            Ok(v)
        };
        match flag {
            "--passes" => {
                let list = value("a comma-separated list of passes")?;
                opts.passes = Some(list.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect());
                continue;
            }
            "--opt-bisect-limit" => {
                let n = value("a number of steps")?;
                opts.bisect_limit = Some(n.parse().map_err(|_| format!("`--opt-bisect-limit`: `{n}` is not a number of steps"))?);
                continue;
            }
            _ => {}
        }
        match a {
            "--" => only_files = true,
            "--list-passes" => return Ok(Command::ListPasses),
            "--print-after-all" => opts.print_after_all = true,
            "--validate-after-all" => opts.validate_after_all = true,
            "--time-passes" => opts.time_passes = true,
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
            let _ = stdout.write_all(pass_list().as_bytes());
            return EXIT_OK;
        }
        Ok(Command::ListPasses) => {
            let _ = stdout.write_all(pass_list().as_bytes());
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
    let pipeline = match &opts.passes {
        Some(names) => match ptx_opt::passes::Pipeline::named(&names.iter().map(String::as_str).collect::<Vec<_>>(), opts.level) {
            Ok(p) => p,
            Err(m) => {
                let _ = writeln!(stderr, "ptx-opt: {m}");
                return EXIT_USAGE;
            }
        },
        None => ptx_opt::passes::Pipeline::of_level(opts.level),
    };
    let mut obs = ptx_opt::passes::Observer::default();
    obs.bisect_limit = opts.bisect_limit;
    obs.print_after_all = opts.print_after_all;
    obs.validate_after_all = opts.validate_after_all;
    obs.time_passes = opts.time_passes;
    let module = pipeline.run_module(parsed.module, &mut obs);
    for line in &obs.log {
        let _ = writeln!(stderr, "{line}");
    }
    if opts.time_passes {
        let _ = write!(stderr, "{}", obs.timing_table());
    }
    if let Some(failure) = &obs.failure {
        let _ = writeln!(stderr, "{name}: error: validation failed {failure}");
        return EXIT_INVALID;
    }
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
            Ok(Command::Run(Options { input: Some("in.ptx".into()), output: Some("out.ptx".into()), level: OptLevel::O0, ..Options::default() }))
        );
        assert_eq!(parse_args(&args(&["-"])), Ok(Command::Run(Options::default())));
        assert!(matches!(parse_args(&args(&["--verify", "x.ptx"])), Ok(Command::Run(Options { verify: true, .. }))));
        assert!(matches!(parse_args(&args(&["--no-verify", "x.ptx"])), Ok(Command::Run(Options { no_verify: true, .. }))));
        assert!(parse_args(&args(&["--verify", "--no-verify"])).is_err());
        assert!(matches!(parse_args(&args(&["--emit=cfg-dot"])), Ok(Command::Run(Options { emit: Emit::CfgDot, .. }))));
        assert!(parse_args(&args(&["--emit=svg"])).is_err());
        assert!(parse_args(&args(&["a", "b"])).is_err());
        assert!(parse_args(&args(&["-o"])).is_err());
        assert!(parse_args(&args(&["--frobnicate"])).is_err());
        assert_eq!(parse_args(&args(&["--help"])), Ok(Command::Help));
        // Optimizing is the command's job: -O2 unless told otherwise.
        assert!(matches!(parse_args(&args(&["x.ptx"])), Ok(Command::Run(Options { level: OptLevel::O2, .. }))));
        let both = [args(&["--passes=dce,egraph", "--opt-bisect-limit=3"]), args(&["--passes", "dce,egraph", "--opt-bisect-limit", "3"])];
        for a in &both {
            let Ok(Command::Run(o)) = parse_args(a) else { panic!("{a:?}") };
            assert_eq!(o.passes, Some(vec!["dce".to_string(), "egraph".to_string()]));
            assert_eq!(o.bisect_limit, Some(3));
        }
        assert!(parse_args(&args(&["--opt-bisect-limit=x"])).is_err());
        assert!(parse_args(&args(&["--passes"])).is_err());
        assert_eq!(parse_args(&args(&["--list-passes"])), Ok(Command::ListPasses));
        assert!(matches!(parse_args(&args(&["--print-after-all", "--validate-after-all", "--time-passes"])), Ok(Command::Run(Options { print_after_all: true, validate_after_all: true, time_passes: true, .. }))));
    }
}
