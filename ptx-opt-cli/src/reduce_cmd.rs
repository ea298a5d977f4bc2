//! `ptx-opt reduce`: the library's test-case reducer ([`ptx_opt::reduce`])
//! as a command. Owns how the `--test` command line becomes a shell
//! command ([`shell_command`]), the refusal to overwrite the input, the
//! progress line on a terminal, the summary line, and the exit status.
//!
//! The test runs as `sh -c SCRIPT FILE` in the current directory, FILE
//! holding the candidate, so inside SCRIPT the file is `$0`. When the
//! test text does not mention `$0`, SCRIPT is the text followed by
//! ` "$0"`: the path becomes the last argument (`grep -q mul.wide` runs
//! `grep -q mul.wide FILE`).

use crate::args::ReduceArgs;
use crate::diagnostics::Reporter;
use crate::usage_error::usage_line;
use crate::{EXIT_INVALID, EXIT_OK, EXIT_USAGE};
use ptx_ir::source::Severity;
use crate::reduce_test_cmd::command_test_with_timeout;
use ptx_opt::reduce::{reduce_source, Progress, ReduceError, ReduceOptions, Reduced};
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

const COMMAND: &str = "ptx-opt reduce";

/// The program and arguments that run `test` on a candidate once the
/// candidate's path is appended (`sh -c SCRIPT FILE`).
pub fn shell_command(test: &str) -> Vec<String> {
    let test = test.trim();
    let script = if names_the_file(test) { test.to_string() } else { format!("{test} \"$0\"") };
    vec!["sh".to_string(), "-c".to_string(), script]
}

/// Does the test text use the candidate's path itself (`$0` or `${0}`)?
fn names_the_file(test: &str) -> bool {
    test.contains("$0") || test.contains("${0}")
}

/// Runs `ptx-opt reduce`; returns the exit status.
pub fn run(o: &ReduceArgs, stdin: &mut dyn Read, stderr: &mut dyn Write) -> i32 {
    let reporter = Reporter::new(&o.report, COMMAND);
    if o.test.trim().is_empty() {
        let _ = stderr.write_all(usage_line(COMMAND, "--test is empty: give the command that says whether a file is still interesting").as_bytes());
        return EXIT_USAGE;
    }
    if o.input.as_os_str() != "-" && same_file(&o.input, &o.output) {
        let _ = stderr.write_all(usage_line(COMMAND, &format!("-o `{}` is the input: the reduced file must go elsewhere", o.output.display())).as_bytes());
        return EXIT_USAGE;
    }
    let input = match crate::input::read(Some(&o.input), stdin) {
        Ok(i) => i,
        Err(m) => return fail(stderr, &reporter, &o.input.display().to_string(), &m),
    };
    let workdir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return fail(stderr, &reporter, "", &format!("cannot find the current directory (where the test runs): {e}")),
    };
    // Every candidate is written there: a directory that takes no file
    // would make every test fail, and the input look uninteresting.
    let probe = workdir.join(format!("ptx-opt-reduce-{}-probe.ptx", std::process::id()));
    if let Err(e) = std::fs::write(&probe, b"") {
        return fail(stderr, &reporter, "", &format!("cannot write candidate files in the current directory `{}`: {e}", workdir.display()));
    }
    let _ = std::fs::remove_file(&probe);
    let command = shell_command(&o.test);
    let mut test = command_test_with_timeout(&command, &workdir, o.timeout);
    let options = ReduceOptions { max_tests: o.max_tests, ..ReduceOptions::default() };
    let started = Instant::now();
    let mut status = StatusLine::new(std::io::stderr().is_terminal());
    let result = reduce_source(&input.name, &input.bytes, &mut test, &options, &mut |p| status.show(stderr, p));
    status.clear(stderr);
    let reduced = match result {
        Ok(r) => r,
        Err(ReduceError::InvalidInput(diags)) => {
            let _ = stderr.write_all(reporter.diagnostics(&diags, &input.bytes).as_bytes());
            return fail(stderr, &reporter, &input.name, &format!("`{}` is not valid PTX: nothing to reduce", input.name));
        }
        Err(ReduceError::NotInteresting) => {
            let limit = o.timeout.map_or(String::new(), |t| format!(" within {} s", t.as_secs_f64()));
            let message = format!("the test does not hold on the input: `sh -c '{}' {}` did not exit with status 0{limit}", command[2], input.name);
            return fail(stderr, &reporter, &input.name, &message);
        }
    };
    if let Err(e) = crate::output_file::write_atomically(&o.output, reduced.text.as_bytes()) {
        let name = o.output.display().to_string();
        return fail(stderr, &reporter, &name, &format!("cannot write `{name}`: {e}"));
    }
    let _ = writeln!(stderr, "{}", summary(&reduced, started.elapsed(), o.max_tests));
    EXIT_OK
}

fn fail(stderr: &mut dyn Write, reporter: &Reporter, file: &str, message: &str) -> i32 {
    let _ = stderr.write_all(reporter.message(file, Severity::Error, message).as_bytes());
    EXIT_INVALID
}

/// Whether `output` names the file `input` names (the output need not exist).
fn same_file(input: &Path, output: &Path) -> bool {
    let canonical = |p: &Path| -> Option<std::path::PathBuf> {
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some(parent.canonicalize().ok()?.join(p.file_name()?))
    };
    match (canonical(input), canonical(output)) {
        (Some(a), Some(b)) => a == b,
        _ => input == output,
    }
}

/// The last line: sizes before and after, tests, rounds, time.
pub fn summary(r: &Reduced, elapsed: Duration, max_tests: Option<u64>) -> String {
    let (b, a) = (&r.before, &r.after);
    let shrink = if b.bytes == 0 { 0.0 } else { 100.0 * (b.bytes as f64 - a.bytes as f64) / b.bytes as f64 };
    let mut s = format!(
        "{COMMAND}: {} -> {} bytes (-{shrink:.1}%), {} -> {} lines, {} -> {} instructions; {} tests, {} rounds; {:.2} s",
        b.bytes, a.bytes, b.lines, a.lines, b.instructions, a.instructions, r.tests_run, r.rounds, elapsed.as_secs_f64()
    );
    if r.invalid_candidates > 0 {
        s.push_str(&format!(" ({} candidates were not valid PTX and were skipped)", r.invalid_candidates));
    }
    if r.stopped_early {
        s.push_str(&format!("; stopped at --max-tests {} before a fixed point", max_tests.unwrap_or(r.tests_run)));
    }
    s
}

/// The one-line progress display: rewritten in place with `\r` on a
/// terminal, at most every 50 ms; nothing otherwise.
struct StatusLine {
    on: bool,
    last: Option<Instant>,
    width: usize,
}

impl StatusLine {
    fn new(on: bool) -> StatusLine {
        StatusLine { on, last: None, width: 0 }
    }

    fn show(&mut self, out: &mut dyn Write, p: &Progress) {
        if !self.on || self.last.is_some_and(|t| t.elapsed() < Duration::from_millis(50)) {
            return;
        }
        self.last = Some(Instant::now());
        let line = format!("{COMMAND}: round {} {}: {} bytes, {} instructions, {} tests", p.round, p.step, p.size.bytes, p.size.instructions, p.tests_run);
        let pad = self.width.saturating_sub(line.len());
        self.width = line.len();
        let _ = write!(out, "\r{line}{}", " ".repeat(pad));
        let _ = out.flush();
    }

    fn clear(&mut self, out: &mut dyn Write) {
        if self.on && self.width > 0 {
            let _ = write!(out, "\r{}\r", " ".repeat(self.width));
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidate_is_the_last_argument_unless_the_test_names_it() {
        assert_eq!(shell_command("grep -q mul.wide ")[2], "grep -q mul.wide \"$0\"");
        assert_eq!(shell_command("ptxas \"$0\" 2>&1 | grep -q error")[2], "ptxas \"$0\" 2>&1 | grep -q error");
        assert_eq!(shell_command("wc -c < ${0}")[2], "wc -c < ${0}");
    }

    #[test]
    fn the_status_line_is_rewritten_in_place_and_cleared() {
        let p = |tests_run| Progress { round: 2, step: "drop-instructions", size: ptx_opt::reduce::Size { bytes: 1234, lines: 40, instructions: 17 }, tests_run, accepted: 3 };
        let mut out = Vec::new();
        let mut line = StatusLine::new(true);
        line.show(&mut out, &p(99));
        line.clear(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("\rptx-opt reduce: round 2 drop-instructions: 1234 bytes, 17 instructions, 99 tests"), "{text:?}");
        assert!(text.ends_with('\r') && !text.contains('\n'), "{text:?}");
        let mut off = Vec::new();
        let mut quiet = StatusLine::new(false);
        quiet.show(&mut off, &p(1));
        quiet.clear(&mut off);
        assert!(off.is_empty());
    }

    #[test]
    fn the_output_is_refused_when_it_is_the_input() {
        let d = std::env::temp_dir().join(format!("ptx-opt-reduce-same-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("a.ptx");
        std::fs::write(&f, "x").unwrap();
        assert!(same_file(&f, &d.join(".").join("a.ptx")));
        assert!(!same_file(&f, &d.join("b.ptx")));
        let _ = std::fs::remove_dir_all(&d);
    }
}
