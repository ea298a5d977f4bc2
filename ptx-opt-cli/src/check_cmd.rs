//! `ptx-opt check INPUT [-O LEVEL]`: optimizes the input in memory,
//! assembles the input and the output with ptxas ([`crate::sass`]) and
//! prints, per function, the SASS instructions and registers before and
//! after with the change. Exit 1 when the output does not assemble (with
//! ptxas's message), and when the input is invalid, ptxas rejects the input
//! itself, or ptxas is not installed ([`crate::ptx_tools`]).

use crate::args::CheckArgs;
use crate::diagnostics::Reporter;
use crate::sass::{assemble, FunctionSass, Setup};
use crate::{EXIT_INVALID, EXIT_OK};
use ptx_ir::source::Severity;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

const COMMAND: &str = "ptx-opt check";

/// Runs `ptx-opt check`; returns the exit status.
pub fn run(o: &CheckArgs, stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let reporter = Reporter::new(&o.report, COMMAND);
    let fail = |stderr: &mut dyn Write, file: &str, m: &str| {
        let _ = stderr.write_all(reporter.message(file, Severity::Error, m).as_bytes());
        EXIT_INVALID
    };
    let tools = match crate::ptx_tools::locate() {
        Ok(t) => t,
        Err(m) => return fail(stderr, "", &m),
    };
    let input = match crate::input::read(Some(&o.input), stdin) {
        Ok(i) => i,
        Err(m) => return fail(stderr, &o.input.display().to_string(), &m),
    };
    let checked = match ptx_opt::optimize_checked(&input.name, &input.bytes, o.level.opt_level()) {
        Ok(c) => c,
        Err(diags) => {
            let _ = stderr.write_all(reporter.diagnostics(&diags, &input.bytes).as_bytes());
            return EXIT_INVALID;
        }
    };
    let _ = stderr.write_all(reporter.diagnostics(&checked.warnings, &input.bytes).as_bytes());
    let output = ptx_print::print_module(&checked.module);
    let setup = Setup::for_target(&checked.module.target);
    let dir = match ScratchDir::new() {
        Ok(d) => d,
        Err(m) => return fail(stderr, "", &m),
    };
    let before = match assemble(&tools, &setup, &String::from_utf8_lossy(&input.bytes), &dir.0, "input") {
        Ok(b) => b,
        Err(m) => return fail(stderr, &input.name, &format!("ptxas {} rejects the input itself, so there is nothing to compare:\n{m}", setup.flags())),
    };
    let after = match assemble(&tools, &setup, &output, &dir.0, "output") {
        Ok(a) => a,
        Err(m) => return fail(stderr, &input.name, &format!("the -O{} output does not assemble (ptxas {}):\n{m}", level_digit(o), setup.flags())),
    };
    let _ = stdout.write_all(table(&input.name, o, &setup, &tools.ptxas.display().to_string(), &before, &after).as_bytes());
    EXIT_OK
}

fn level_digit(o: &CheckArgs) -> u8 {
    match o.level {
        crate::args::Level::O0 => 0,
        crate::args::Level::O1 => 1,
        crate::args::Level::O2 => 2,
        crate::args::Level::O3 => 3,
    }
}

/// A directory for the PTX and cubin files, removed when dropped.
struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    fn new() -> Result<ScratchDir, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let d = std::env::temp_dir().join(format!("ptx-opt-check-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&d).map_err(|e| format!("cannot create `{}`: {e}", d.display()))?;
        Ok(ScratchDir(d))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn change(before: Option<u64>, after: Option<u64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) if b == a => "0".to_string(),
        (Some(b), Some(a)) if b > 0 => format!("{:+} ({:+.1}%)", a as i64 - b as i64, 100.0 * (a as f64 - b as f64) / b as f64),
        (Some(b), Some(a)) => format!("{:+}", a as i64 - b as i64),
        _ => "-".to_string(),
    }
}

fn cell(v: Option<u64>) -> String {
    v.map_or("-".to_string(), |v| v.to_string())
}

/// The side-by-side table: a row per function ptxas placed in a section
/// of its own (kernels and the device functions it did not inline), then
/// the total.
pub fn table(file: &str, o: &CheckArgs, setup: &Setup, ptxas: &str, before: &BTreeMap<String, FunctionSass>, after: &BTreeMap<String, FunctionSass>) -> String {
    let mut names: Vec<&String> = before.keys().collect();
    names.extend(after.keys().filter(|k| !before.contains_key(*k)));
    let w = names.iter().map(|n| n.len()).max().unwrap_or(0).max(8);
    let promoted = if setup.promoted { " (its target is older than sm_75: assembled for sm_75)" } else { "" };
    let mut out = format!("{file} at -O{}, {ptxas} {}{promoted}\n", level_digit(o), setup.flags());
    out.push_str(&format!("{:<w$}  {:>11} {:>6}  {:<16}  {:>16} {:>6}  {}\n", "function", "SASS before", "after", "change", "registers before", "after", "change"));
    let (mut total_b, mut total_a) = (0u64, 0u64);
    for n in names {
        let (b, a) = (before.get(n), after.get(n));
        let (sb, sa) = (b.map(|x| x.instructions as u64), a.map(|x| x.instructions as u64));
        let (rb, ra) = (b.and_then(|x| x.registers).map(u64::from), a.and_then(|x| x.registers).map(u64::from));
        total_b += sb.unwrap_or(0);
        total_a += sa.unwrap_or(0);
        out.push_str(&format!("{n:<w$}  {:>11} {:>6}  {:<16}  {:>16} {:>6}  {}\n", cell(sb), cell(sa), change(sb, sa), cell(rb), cell(ra), change(rb, ra)));
    }
    out.push_str(&format!("{:<w$}  {total_b:>11} {total_a:>6}  {}\n", "total", change(Some(total_b), Some(total_a))));
    out
}
