//! An interestingness test that runs a command: `CMD ARGS... FILE`, where
//! `FILE` holds the candidate; interesting when the command exits with
//! status 0 (within the time limit, if there is one).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A test running `cmd` (program and arguments) in `workdir` with the path
/// of a file holding the candidate appended: interesting when it exits
/// with status 0. The file is `workdir/ptx-opt-reduce-PID-N.ptx` (`N` numbers the tests
/// a process makes), written
/// before and removed after each run. A command that cannot be started,
/// an empty `cmd`, or a file that cannot be written count as not
/// interesting. The command's standard streams are closed.
///
/// For a shell pipeline, `["sh", "-c", "grep -q mul.wide \"$0\""]`: the
/// appended path is the script's `$0`.
pub fn command_test(cmd: &[String], workdir: &Path) -> impl FnMut(&str) -> bool {
    command_test_with_timeout(cmd, workdir, None)
}

/// [`command_test`] with a time limit: a run taking longer is killed and
/// counts as not interesting. (Only the command is killed, not processes
/// it started.)
pub fn command_test_with_timeout(cmd: &[String], workdir: &Path, timeout: Option<Duration>) -> impl FnMut(&str) -> bool {
    let cmd = cmd.to_vec();
    let workdir = workdir.to_path_buf();
    static TESTS: AtomicU64 = AtomicU64::new(0);
    let n = TESTS.fetch_add(1, Ordering::Relaxed);
    let file = workdir.join(format!("ptx-opt-reduce-{}-{n}.ptx", std::process::id()));
    move |text| {
        let ok = run_once(&cmd, &workdir, &file, text, timeout);
        let _ = std::fs::remove_file(&file);
        ok
    }
}

fn run_once(cmd: &[String], workdir: &Path, file: &PathBuf, text: &str, timeout: Option<Duration>) -> bool {
    let Some((program, args)) = cmd.split_first() else { return false };
    if std::fs::write(file, text).is_err() {
        return false;
    }
    let child = Command::new(program).args(args).arg(file).current_dir(workdir).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let Ok(mut child) = child else { return false };
    match timeout {
        None => child.wait().is_ok_and(|s| s.success()),
        Some(limit) => wait_with_limit(&mut child, limit),
    }
}

/// Waits for `child` at most `limit`, polling; kills it when time is up.
fn wait_with_limit(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        std::env::temp_dir()
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".to_string(), "-c".to_string(), script.to_string()]
    }

    #[test]
    fn exit_status_zero_is_interesting() {
        let mut test = command_test(&sh("grep -q needle \"$0\""), &dir());
        assert!(test("hay needle hay"));
        assert!(!test("hay hay"));
    }

    #[test]
    fn a_command_that_cannot_start_is_not_interesting() {
        let mut missing = command_test(&["/nonexistent/ptx-opt-reduce-test".to_string()], &dir());
        assert!(!missing("x"));
        let mut empty = command_test(&[], &dir());
        assert!(!empty("x"));
    }

    #[test]
    fn a_command_past_its_time_limit_is_not_interesting() {
        let mut slow = command_test_with_timeout(&sh("sleep 5"), &dir(), Some(Duration::from_millis(100)));
        let start = Instant::now();
        assert!(!slow("x"));
        assert!(start.elapsed() < Duration::from_secs(4));
        let mut quick = command_test_with_timeout(&sh("true"), &dir(), Some(Duration::from_secs(10)));
        assert!(quick("x"));
    }
}
