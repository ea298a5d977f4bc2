//! Which command runs: parses the command line with clap and hands the
//! options to the optimize command, `run`, `reduce`, `check` or
//! `completions`. Usage errors
//! are one line and a pointer to `--help` ([`crate::usage_error`]), exit 2.

use crate::args::{Cli, Sub, AFTER_HELP, CHECK_AFTER_HELP, REDUCE_AFTER_HELP, RUN_AFTER_HELP};
use crate::{EXIT_OK, EXIT_USAGE};
use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};
use std::io::{Read, Write};

/// How many threads a command's work can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// Nothing of it runs in parallel: one thread, the caller's.
    One,
    /// As many as rayon's pool has.
    All,
}

/// The clap command with the texts after each command's options.
pub fn cli_command() -> clap::Command {
    Cli::command().after_help(AFTER_HELP).mut_subcommand("opt", |c| c.after_help(AFTER_HELP)).mut_subcommand("run", |c| c.after_help(RUN_AFTER_HELP)).mut_subcommand("reduce", |c| c.after_help(REDUCE_AFTER_HELP)).mut_subcommand("check", |c| c.after_help(CHECK_AFTER_HELP))
}

/// Runs the command line `args` (without the program name); returns the
/// exit status. The work runs on rayon's global pool as it is: the binary
/// calls [`parse`] and [`run`] itself, to size the pool.
pub fn main_with(args: &[std::ffi::OsString], stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    match parse(args, stdout, stderr) {
        Ok(cli) => run(cli, &|_| {}, stdin, stdout, stderr),
        Err(code) => code,
    }
}

/// The command line `args` (without the program name) parsed; `Err` with
/// the exit status when there is nothing to run: help or the version was
/// printed to `stdout`, or a usage error to `stderr`.
pub fn parse(args: &[std::ffi::OsString], stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<Cli, i32> {
    let cli = cli_command().try_get_matches_from(std::iter::once(std::ffi::OsString::from("ptx-opt")).chain(args.iter().cloned())).and_then(|m| Cli::from_arg_matches(&m));
    match cli {
        Ok(c) => Ok(c),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = write!(stdout, "{}", e.render());
            Err(EXIT_OK)
        }
        Err(e) => {
            // A subcommand's errors name it.
            let command = match args.first().and_then(|a| a.to_str()) {
                Some("run") => "ptx-opt run",
                Some("reduce") => "ptx-opt reduce",
                Some("check") => "ptx-opt check",
                _ => "ptx-opt",
            };
            let _ = stderr.write_all(crate::usage_error::from_clap(command, &e).as_bytes());
            Err(EXIT_USAGE)
        }
    }
}

/// Runs a parsed command line; returns the exit status. `start_pool` is
/// called once before the work uses rayon, with [`Threads`]: the binary
/// builds rayon's global pool there.
pub fn run(cli: Cli, start_pool: &dyn Fn(Threads), stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    match cli.command {
        None => crate::optimize_cmd::run(&cli.optimize, start_pool, stdin, stdout, stderr),
        Some(Sub::Opt(o)) => crate::optimize_cmd::run(&o, start_pool, stdin, stdout, stderr),
        Some(Sub::Run(o)) => {
            start_pool(Threads::All);
            crate::run_cmd::run(&o, stdin, stdout, stderr)
        }
        Some(Sub::Reduce(o)) => {
            start_pool(Threads::All);
            crate::reduce_cmd::run(&o, stdin, stderr)
        }
        Some(Sub::Check(o)) => {
            start_pool(Threads::All);
            crate::check_cmd::run(&o, stdin, stdout, stderr)
        }
        Some(Sub::Completions(c)) => {
            clap_complete::generate(c.shell, &mut cli_command(), "ptx-opt", stdout);
            EXIT_OK
        }
    }
}
