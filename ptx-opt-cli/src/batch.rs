//! Optimizing many files: each job on its own in parallel (rayon), its
//! diagnostics written as it finishes, a progress bar on a terminal only,
//! and a final summary line (files ok and failed, kernels, PTX
//! instructions before and after, wall time). Remarks are written with
//! each file's messages; statistics of every file that succeeded, in the
//! order of the inputs, before the summary line. A failing file never stops
//! the others; the exit status is 1 when any failed.

use crate::args::OptimizeArgs;
use crate::batch_inputs::Job;
use crate::diagnostics::{ErrorFormat, Reporter};
use crate::optimize_one::{optimize_text, Counts};
use crate::{EXIT_INVALID, EXIT_OK};
use indicatif::{ProgressBar, ProgressStyle};
use ptx_ir::source::Severity;
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// What one job gave.
struct JobReport {
    /// Its diagnostics and logs, rendered.
    messages: String,
    failed: bool,
    counts: Counts,
    stats: Option<crate::stats::FileStats>,
}

/// Reads, optimizes and writes one job.
fn process(job: &Job, o: &OptimizeArgs, reporter: &Reporter) -> JobReport {
    let name = job.input.display().to_string();
    let input = match crate::input::read(Some(&job.input), &mut std::io::empty()) {
        Ok(i) => i,
        Err(m) => return JobReport { messages: reporter.message(&name, Severity::Error, &m), failed: true, counts: Counts::default(), stats: None },
    };
    let out = optimize_text(&input.name, &input.bytes, o, false);
    let mut messages = reporter.diagnostics(&out.diagnostics, &input.bytes);
    if !out.log.is_empty() {
        messages.push_str(&format!("// ---- {name} ----\n"));
        for line in &out.log {
            messages.push_str(line);
            messages.push('\n');
        }
    }
    if let Some(f) = &out.validation_failure {
        messages.push_str(&reporter.message(&name, Severity::Error, &format!("{name}: {f}")));
    }
    messages.push_str(&crate::optimize_cmd::render_remarks(&out.remarks, &input.name, reporter));
    let mut failed = out.failed;
    if let (false, Some(output), Some(path)) = (failed, &out.output, &job.output) {
        let write = || crate::output_file::write_atomically_with(path, |w| output.write_to(w));
        let written = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) => std::fs::create_dir_all(dir).and_then(|_| write()),
            None => write(),
        };
        if let Err(e) = written {
            messages.push_str(&reporter.message(&name, Severity::Error, &format!("cannot write `{}`: {e}", path.display())));
            failed = true;
        }
    }
    let stats = if failed { None } else { out.stats };
    JobReport { messages, failed, counts: if failed { Counts::default() } else { out.counts }, stats }
}

/// Totals of a batch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub ok: usize,
    pub failed: usize,
    pub counts: Counts,
    pub wall: Duration,
    /// `--verify`: nothing was optimized.
    pub verify_only: bool,
}

impl Summary {
    /// The summary line (without a newline): `ptx-opt: 3 files ok, 1
    /// failed; 5 kernels; 1234 -> 987 PTX instructions (-20.0%); 0.42 s`,
    /// or one JSON object with `--error-format=json`.
    pub fn line(&self, format: ErrorFormat) -> String {
        let c = &self.counts;
        let secs = self.wall.as_secs_f64();
        if format == ErrorFormat::Json {
            return serde_json::json!({"summary": {"files_ok": self.ok, "files_failed": self.failed, "kernels": c.kernels, "instructions_before": c.instrs_before, "instructions_after": c.instrs_after, "seconds": secs}}).to_string();
        }
        let files = |n: usize| if n == 1 { "1 file".to_string() } else { format!("{n} files") };
        let instrs = if self.verify_only {
            format!("{} PTX instructions", c.instrs_before)
        } else {
            let change = if c.instrs_before == 0 { 0.0 } else { 100.0 * (c.instrs_after as f64 - c.instrs_before as f64) / c.instrs_before as f64 };
            format!("{} -> {} PTX instructions ({change:+.1}%)", c.instrs_before, c.instrs_after)
        };
        let what = if self.verify_only { "verified" } else { "ok" };
        format!("ptx-opt: {} {what}, {} failed; {} kernel{}; {instrs}; {secs:.2} s", files(self.ok), self.failed, c.kernels, if c.kernels == 1 { "" } else { "s" })
    }
}

/// Runs every job; writes each one's messages as it finishes, then the
/// summary line; returns the exit status.
pub fn run(jobs: &[Job], o: &OptimizeArgs, reporter: &Reporter, stderr: &mut dyn Write) -> i32 {
    let start = Instant::now();
    let bar = if std::io::stderr().is_terminal() {
        let style = ProgressStyle::with_template("{bar:30} {pos}/{len} files  {wide_msg}").unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(jobs.len() as u64).with_style(style)
    } else {
        ProgressBar::hidden()
    };
    let mut summary = Summary { verify_only: o.verify, ..Summary::default() };
    let mut stats: Vec<(usize, crate::stats::FileStats)> = Vec::new();
    let (tx, rx) = std::sync::mpsc::channel::<(usize, JobReport)>();
    std::thread::scope(|s| {
        s.spawn(move || {
            jobs.par_iter().enumerate().for_each_with(tx, |tx, (k, job)| {
                let _ = tx.send((k, process(job, o, reporter)));
            })
        });
        // The main thread alone writes: messages never interleave.
        for (k, r) in rx {
            if !r.messages.is_empty() {
                bar.suspend(|| {
                    let _ = stderr.write_all(r.messages.as_bytes());
                });
            }
            if r.failed {
                summary.failed += 1;
            } else {
                summary.ok += 1;
            }
            summary.counts += r.counts;
            stats.extend(r.stats.map(|s| (k, s)));
            bar.set_message(jobs[k].input.display().to_string());
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    let mut stats_unwritten = false;
    if o.stats.is_some() || o.stats_file.is_some() {
        stats.sort_by_key(|(k, _)| *k);
        let stats: Vec<crate::stats::FileStats> = stats.into_iter().map(|(_, s)| s).collect();
        if let Err(m) = crate::optimize_cmd::write_stats(&stats, o, stderr) {
            let _ = stderr.write_all(reporter.message("", Severity::Error, &m).as_bytes());
            stats_unwritten = true;
        }
    }
    summary.wall = start.elapsed();
    let _ = writeln!(stderr, "{}", summary.line(reporter.format));
    if summary.failed > 0 || stats_unwritten { EXIT_INVALID } else { EXIT_OK }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines() {
        let s = Summary { ok: 3, failed: 1, counts: Counts { kernels: 5, instrs_before: 200, instrs_after: 150 }, wall: Duration::from_millis(420), verify_only: false };
        assert_eq!(s.line(ErrorFormat::Human), "ptx-opt: 3 files ok, 1 failed; 5 kernels; 200 -> 150 PTX instructions (-25.0%); 0.42 s");
        let v = Summary { ok: 1, failed: 0, counts: Counts { kernels: 1, instrs_before: 7, instrs_after: 7 }, wall: Duration::ZERO, verify_only: true };
        assert_eq!(v.line(ErrorFormat::Short), "ptx-opt: 1 file verified, 0 failed; 1 kernel; 7 PTX instructions; 0.00 s");
        let j: serde_json::Value = serde_json::from_str(&s.line(ErrorFormat::Json)).unwrap();
        assert_eq!(j["summary"]["files_failed"], 1);
        assert_eq!(j["summary"]["instructions_after"], 150);
    }
}
