//! Running z3: one `z3 -in -smt2` process per [`Z3`] session, fed SMT-LIB2
//! text on its standard input; each query is a `(check-sat)` answered
//! `sat`, `unsat` or `unknown` (a timeout included: `-t:` is z3's soft
//! limit per query). Callers scope their declarations with `(push)`/`(pop)`
//! so that one process serves thousands of queries.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A `(check-sat)` answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Sat,
    Unsat,
    /// z3 gave up (timeout, resource limit, incompleteness).
    Unknown,
}

/// A running z3.
pub struct Z3 {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// Is a `z3` binary on the PATH?
pub fn available() -> bool {
    Command::new("z3").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

impl Z3 {
    /// Starts z3 with a soft timeout of `timeout_ms` per query.
    pub fn start(timeout_ms: u32) -> Result<Z3, String> {
        let mut child = Command::new("z3")
            .args(["-in", "-smt2", &format!("-t:{timeout_ms}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run z3: {e}"))?;
        let stdin = child.stdin.take().ok_or("z3 without stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("z3 without stdout")?);
        let mut z = Z3 { child, stdin, stdout };
        z.send("(set-logic QF_BV)\n(set-option :produce-models true)\n")?;
        Ok(z)
    }

    /// Sends commands that print nothing (declarations, assertions, push/pop).
    pub fn send(&mut self, text: &str) -> Result<(), String> {
        self.stdin.write_all(text.as_bytes()).map_err(|e| format!("writing to z3: {e}"))
    }

    fn line(&mut self) -> Result<String, String> {
        let mut l = String::new();
        match self.stdout.read_line(&mut l) {
            Ok(0) => Err("z3 ended".into()),
            Ok(_) => Ok(l),
            Err(e) => Err(format!("reading from z3: {e}")),
        }
    }

    /// `(check-sat)`. An error z3 reported on anything sent before it is an `Err`.
    pub fn check(&mut self) -> Result<Answer, String> {
        self.send("(check-sat)\n")?;
        self.stdin.flush().map_err(|e| format!("writing to z3: {e}"))?;
        let mut errors = Vec::new();
        loop {
            let l = self.line()?;
            let answer = match l.trim() {
                "sat" => Answer::Sat,
                "unsat" => Answer::Unsat,
                "unknown" => Answer::Unknown,
                "" => continue,
                other => {
                    errors.push(other.to_string());
                    continue;
                }
            };
            if !errors.is_empty() {
                return Err(format!("z3: {}", errors.join("; ")));
            }
            return Ok(answer);
        }
    }

    /// `(get-value (t1 t2 ...))` after a `sat`: the values of bit-vector terms.
    pub fn values(&mut self, terms: &[String]) -> Result<Vec<u128>, String> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        self.send(&format!("(get-value ({}))\n", terms.join(" ")))?;
        self.stdin.flush().map_err(|e| format!("writing to z3: {e}"))?;
        let mut text = String::new();
        let mut depth = 0i64;
        loop {
            let l = self.line()?;
            if l.trim_start().starts_with("(error") {
                return Err(format!("z3: {}", l.trim()));
            }
            for ch in l.chars() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            text.push_str(&l);
            if depth <= 0 && text.contains('(') {
                break;
            }
        }
        let vals = parse_values(&text)?;
        if vals.len() != terms.len() {
            return Err(format!("z3 gave {} values for {} terms: {text}", vals.len(), terms.len()));
        }
        Ok(vals)
    }
}

impl Drop for Z3 {
    fn drop(&mut self) {
        let _ = self.stdin.write_all(b"(exit)\n");
        let _ = self.stdin.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bit-vector literals of a `get-value` answer, in order: `#x..`,
/// `#b..` and `(_ bvN w)`.
pub fn parse_values(text: &str) -> Result<Vec<u128>, String> {
    let spaced = text.replace('(', " ( ").replace(')', " ) ");
    let toks: Vec<&str> = spaced.split_whitespace().collect();
    let mut out = Vec::new();
    let mut k = 0;
    let bad = |t: &str| format!("bad literal `{t}` in z3's answer {text}");
    while k < toks.len() {
        let t = toks[k];
        if let Some(h) = t.strip_prefix("#x") {
            out.push(u128::from_str_radix(h, 16).map_err(|_| bad(t))?);
        } else if let Some(b) = t.strip_prefix("#b") {
            out.push(u128::from_str_radix(b, 2).map_err(|_| bad(t))?);
        } else if t == "_" && k + 1 < toks.len() && toks[k + 1].starts_with("bv") {
            out.push(toks[k + 1][2..].parse::<u128>().map_err(|_| bad(toks[k + 1]))?);
            k += 2;
        }
        k += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_literals() {
        assert_eq!(parse_values("((v0 #x0000000a)\n (n3 #b1) (r (_ bv17 8)))").unwrap(), vec![10, 1, 17]);
    }
}
