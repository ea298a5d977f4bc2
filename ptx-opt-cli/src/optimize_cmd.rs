//! The optimize command (`ptx-opt [opt]`): one input to `-o` or standard
//! output, or many to `--out-dir` ([`crate::batch`]); `--list-passes`.
//! Output is written only when everything succeeded, atomically
//! ([`crate::output_file`]). Remarks go to stderr after the diagnostics;
//! statistics to stderr or `--stats-file`, after a successful run.

use crate::args::{OptimizeArgs, StatsFormat};
use crate::batch_inputs::{plan, Plan, PlanError};
use crate::command::Threads;
use crate::diagnostics::Reporter;
use crate::input::Input;
use crate::optimize_one::{optimize_verified, pipeline, verify_text, Outcome, Output};
use crate::usage_error::usage_line;
use crate::{EXIT_INVALID, EXIT_OK, EXIT_USAGE};
use ptx_ir::source::Severity;
use ptx_opt::OptLevel;
use std::io::{Read, Write};
use std::path::PathBuf;

/// Whether optimizing one input can use more than one thread: a text
/// large enough to be parsed, verified and printed a run of items per
/// thread ([`ptx_ir::threads::PARALLEL_MIN_BYTES`]), or passes to run over
/// enough statements to optimize functions in parallel
/// ([`ptx_opt::passes::PARALLEL_MIN_STATEMENTS`], counted here as lines: a
/// statement is most often a line of its own). Otherwise the work runs on
/// one thread, and no other is started (about 1 ms of a small kernel's
/// run; see the binary's `start_pool`).
pub fn threads_for(text: &[u8], o: &OptimizeArgs) -> Threads {
    if text.len() >= ptx_ir::threads::PARALLEL_MIN_BYTES {
        return Threads::All;
    }
    let passes = !o.verify && pipeline(o).is_ok_and(|p| !p.passes.is_empty());
    // (Lines found with `memchr`: a count of bytes went byte by byte, 4 host
    // instructions a byte, 2 % of a 20 KB kernel's -O2 run.)
    if passes && memchr::memchr_iter(b'\n', text).count() >= ptx_opt::passes::PARALLEL_MIN_STATEMENTS {
        return Threads::All;
    }
    Threads::One
}

/// Every pass, one line each, and the pipeline of each level.
pub fn pass_list() -> String {
    let mut out = String::from("passes (--passes=a,b,c):\n");
    for p in ptx_opt::passes::PASSES {
        out.push_str(&format!("  {:<15}{}\n", p.name, p.description));
    }
    out.push_str("\npipelines:\n");
    for (flag, level) in [("-O1", OptLevel::O1), ("-O2", OptLevel::O2), ("-O3", OptLevel::O3)] {
        out.push_str(&format!("  {flag}  {}\n", ptx_opt::passes::pipeline(level).join(",")));
    }
    out
}

/// Runs the optimize command; returns the exit status.
pub fn run(o: &OptimizeArgs, start_pool: &dyn Fn(Threads), stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    if o.list_passes {
        let _ = stdout.write_all(pass_list().as_bytes());
        return EXIT_OK;
    }
    if let Err(m) = pipeline(o) {
        let _ = stderr.write_all(usage_line("ptx-opt", &m).as_bytes());
        return EXIT_USAGE;
    }
    if let Err(m) = crate::remarks::Filter::new(o.remarks.as_deref().unwrap_or("")) {
        let _ = stderr.write_all(usage_line("ptx-opt", &m).as_bytes());
        return EXIT_USAGE;
    }
    let reporter = Reporter::new(&o.report, "ptx-opt");
    match plan(o) {
        Err(PlanError::Usage(m)) => {
            let _ = stderr.write_all(usage_line("ptx-opt", &m).as_bytes());
            EXIT_USAGE
        }
        Err(PlanError::Input(m)) => {
            let _ = stderr.write_all(reporter.message("", Severity::Error, &m).as_bytes());
            EXIT_INVALID
        }
        Ok(Plan::Single(path)) => single(path, o, start_pool, &reporter, stdin, stdout, stderr),
        Ok(Plan::Batch(jobs)) => {
            start_pool(Threads::All);
            crate::batch::run(&jobs, o, &reporter, stderr)
        }
    }
}

/// The statistics as `--stats` asks, to stderr or `--stats-file` (JSON
/// there unless `--stats=text`): one input's document, or with many
/// `{"files": [...]}`.
pub fn write_stats(stats: &[crate::stats::FileStats], o: &OptimizeArgs, stderr: &mut dyn Write) -> Result<(), String> {
    let json = match (o.stats, &o.stats_file) {
        (Some(f), _) => f == StatsFormat::Json,
        (None, file) => file.is_some(),
    };
    let text = if !json {
        stats.iter().map(crate::stats::FileStats::text).collect::<Vec<_>>().join("\n")
    } else {
        let doc = match stats {
            [one] => one.json(),
            many => serde_json::json!({"files": many.iter().map(crate::stats::FileStats::json).collect::<Vec<_>>()}),
        };
        format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
    };
    match &o.stats_file {
        Some(p) => crate::output_file::write_atomically(p, text.as_bytes()).map_err(|e| format!("cannot write `{}`: {e}", p.display())),
        None => stderr.write_all(text.as_bytes()).map_err(|e| format!("cannot write standard error: {e}")),
    }
}

/// The remarks of one input, as `--error-format` says (JSON lines, or text).
pub fn render_remarks(remarks: &[crate::remarks::Remark], file: &str, reporter: &Reporter) -> String {
    remarks.iter().map(|r| if reporter.format == crate::diagnostics::ErrorFormat::Json { format!("{}\n", r.json(file)) } else { r.text(file) }).collect()
}

/// One input to `-o` or standard output.
fn single(path: Option<PathBuf>, o: &OptimizeArgs, start_pool: &dyn Fn(Threads), reporter: &Reporter, stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let input = match crate::input::read(path.as_deref(), stdin) {
        Ok(i) => i,
        Err(m) => {
            let name = path.map_or("<stdin>".to_string(), |p| p.display().to_string());
            let _ = stderr.write_all(reporter.message(&name, Severity::Error, &m).as_bytes());
            return EXIT_INVALID;
        }
    };
    start_pool(threads_for(&input.bytes, o));
    // On a worker of rayon's pool (`scope` runs its body there), where the
    // passes run on the functions: what the parser allocates is then
    // mostly freed on the thread that allocated it (a free from another
    // thread is mimalloc's slow path: 1.9 % of a -O2 run on one thread).
    let mut out = Outcome::default();
    let verified = rayon::scope(|_| verify_text(&input.name, &input.bytes, o, &mut out));
    let diagnostics = reporter.diagnostics(&out.diagnostics, &input.bytes);
    // The passes need no source text: it is freed before they run, so
    // that peak memory holds the text or the passes' work, not both.
    let Input { name, bytes } = input;
    drop(bytes);
    if let Some(v) = verified {
        // The process ends right after this: the modules are not freed.
        rayon::scope(|_| optimize_verified(&name, v, o, true, &mut out));
    }
    let _ = stderr.write_all(diagnostics.as_bytes());
    for line in &out.log {
        let _ = writeln!(stderr, "{line}");
    }
    if let Some(f) = &out.validation_failure {
        let _ = stderr.write_all(reporter.message(&name, Severity::Error, &format!("{name}: {f}")).as_bytes());
    }
    let _ = stderr.write_all(render_remarks(&out.remarks, &name, reporter).as_bytes());
    if out.failed {
        return EXIT_INVALID;
    }
    if let Some(stats) = &out.stats {
        if let Err(m) = write_stats(std::slice::from_ref(stats), o, stderr) {
            let _ = stderr.write_all(reporter.message("", Severity::Error, &m).as_bytes());
            return EXIT_INVALID;
        }
    }
    // `--verify` writes nothing.
    let Some(output) = out.output else { return EXIT_OK };
    let status = write_output(&output, o, reporter, stdout, stderr);
    // The process ends right after this: the module is not freed.
    std::mem::forget(output);
    status
}

/// Writes one input's output to `-o` or standard output, printing the
/// module as it goes.
fn write_output(output: &Output, o: &OptimizeArgs, reporter: &Reporter, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    match &o.output {
        None => {
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, stdout);
            if let Err(e) = output.write_to(&mut buffered).and_then(|_| buffered.flush()) {
                let _ = stderr.write_all(reporter.message("", Severity::Error, &format!("cannot write standard output: {e}")).as_bytes());
                return EXIT_INVALID;
            }
        }
        Some(p) => {
            if let Err(e) = crate::output_file::write_atomically_with(p, |w| output.write_to(w)) {
                let name = p.display().to_string();
                let _ = stderr.write_all(reporter.message(&name, Severity::Error, &format!("cannot write `{name}`: {e}")).as_bytes());
                return EXIT_INVALID;
            }
        }
    }
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn opts(args: &[&str]) -> OptimizeArgs {
        crate::args::Cli::try_parse_from(std::iter::once("ptx-opt").chain(args.iter().copied())).unwrap().optimize
    }

    /// One thread for a small text, or one with few lines to optimize;
    /// all for a text split across threads, or enough lines whose
    /// functions a pipeline may optimize in parallel.
    #[test]
    fn threads_follow_what_can_run_in_parallel() {
        let lines = |n: usize| "\tadd.s32 %r1, %r1, 1;\n".repeat(n).into_bytes();
        let few = lines(ptx_opt::passes::PARALLEL_MIN_STATEMENTS - 1);
        let many = lines(ptx_opt::passes::PARALLEL_MIN_STATEMENTS);
        assert!(many.len() < ptx_ir::threads::PARALLEL_MIN_BYTES);
        let large = vec![b' '; ptx_ir::threads::PARALLEL_MIN_BYTES];
        assert_eq!(threads_for(&few, &opts(&["-O2"])), Threads::One);
        assert_eq!(threads_for(&many, &opts(&["-O2"])), Threads::All);
        assert_eq!(threads_for(&many, &opts(&["--passes", "dce"])), Threads::All);
        // No pass runs, or none over the functions.
        assert_eq!(threads_for(&many, &opts(&["-O0"])), Threads::One);
        assert_eq!(threads_for(&many, &opts(&["--verify"])), Threads::One);
        for level in ["-O0", "-O2"] {
            assert_eq!(threads_for(&large, &opts(&[level])), Threads::All, "{level}");
        }
    }
}
