//! `--remarks[=FILTER]` and `--remarks-missed`, as LLVM's `-Rpass=` and
//! `-Rpass-missed=`: a remark per pass×function step that changed the
//! function, listing the instructions it removed and added (a diff of the
//! printed instructions before and after the step), each removed one with
//! the input line of the same instruction text; a missed remark per e-graph
//! run whose rules fired while the engine kept the function as it was.
//!
//! The IR keeps no source positions, so the input line of an instruction
//! is found by its text: the k-th occurrence of a text in the function
//! before the step is the k-th occurrence in the input function, when there
//! is one (instructions a pass made have no input line).

use ptx_ir::ir::{Function, Item, Module, Stmt};
use ptx_ir::parse::SourceMap;
use ptx_ir::source::LineIndex;
use ptx_opt::passes::manager::{Change, Missed};
use std::collections::HashMap;

/// Statements listed in one remark at most; the rest are counted.
const MAX_LISTED: usize = 100;
/// The diff falls back to "all removed, all added" above this many cells.
const MAX_DIFF_CELLS: usize = 4_000_000;

/// The input's lines: per function, its header line and the line of each
/// instruction text (in order of occurrence).
pub struct InputLines {
    functions: HashMap<String, FunctionLines>,
}

struct FunctionLines {
    header: u32,
    by_text: HashMap<String, Vec<u32>>,
}

/// The instructions of a function, printed.
fn instruction_texts(f: &Function) -> Vec<String> {
    f.body
        .iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Instr(i) => {
                let mut t = String::new();
                ptx_print::write_instruction(&mut t, f, i);
                Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            _ => None,
        })
        .collect()
}

impl InputLines {
    pub fn new(m: &Module, map: &SourceMap, bytes: &[u8]) -> InputLines {
        let index = LineIndex::new(bytes);
        let mut functions = HashMap::new();
        for (k, item) in m.items.iter().enumerate() {
            let Item::Func(f) = item else { continue };
            let Some(body) = &f.body else { continue };
            let header = map.items.get(k).map_or(0, |s| index.line_col(s.start).0);
            let mut by_text: HashMap<String, Vec<u32>> = HashMap::new();
            let spans = map.stmts.get(k);
            for (i, s) in body.iter().enumerate() {
                let Stmt::Instr(ins) = s else { continue };
                let Some(span) = spans.and_then(|v| v.get(i)) else { continue };
                let mut t = String::new();
                ptx_print::write_instruction(&mut t, f, ins);
                by_text.entry(t.split_whitespace().collect::<Vec<_>>().join(" ")).or_default().push(index.line_col(span.start).0);
            }
            functions.insert(f.name.to_string(), FunctionLines { header, by_text });
        }
        InputLines { functions }
    }
}

/// Passed (the pass changed the function) or missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Passed,
    Missed,
}

/// One changed instruction: `-` removed, `+` added.
#[derive(Clone, Debug, PartialEq)]
pub struct Changed {
    pub removed: bool,
    /// The input line of a removed instruction, when the input has it.
    pub line: Option<u32>,
    pub text: String,
}

/// One remark.
#[derive(Clone, Debug, PartialEq)]
pub struct Remark {
    pub kind: Kind,
    pub step: u64,
    pub pass: &'static str,
    pub function: String,
    /// The first listed instruction's input line, else the function's.
    pub line: u32,
    pub message: String,
    pub changed: Vec<Changed>,
    /// Changed instructions not listed (beyond [`MAX_LISTED`]).
    pub unlisted: usize,
}

/// Which passes' remarks to give: a regular expression on the pass name
/// (a plain name matches itself and every name containing it).
pub struct Filter(Option<regex::Regex>);

impl Filter {
    /// `""` gives every pass; `Err` for a bad regular expression.
    pub fn new(pattern: &str) -> Result<Filter, String> {
        if pattern.is_empty() {
            return Ok(Filter(None));
        }
        regex::Regex::new(pattern).map(|r| Filter(Some(r))).map_err(|e| format!("--remarks: `{pattern}` is not a valid regular expression: {}", e.to_string().lines().last().unwrap_or_default().trim()))
    }

    pub fn matches(&self, pass: &str) -> bool {
        self.0.as_ref().is_none_or(|r| r.is_match(pass))
    }
}

fn rule_list(rules: &[(String, usize)]) -> String {
    rules.iter().map(|(r, n)| format!("{r} {n}")).collect::<Vec<_>>().join(", ")
}

/// The remarks of the recorded steps (which must hold the functions
/// before and after), in step order.
pub fn remarks(changes: &[Change], missed: &[Missed], input: &InputLines, filter: &Filter, with_missed: bool, with_passed: bool) -> Vec<Remark> {
    let mut out = Vec::new();
    for c in changes.iter().filter(|c| with_passed && filter.matches(c.pass)) {
        let Some(pair) = &c.before_after else { continue };
        out.push(passed(c, &pair.0, &pair.1, input));
    }
    for m in missed.iter().filter(|m| with_missed && filter.matches(m.pass)) {
        let line = input.functions.get(&m.function).map_or(0, |f| f.header);
        let message = format!("{} kept `{}` as it was: rules fired ({}) but {}", m.pass, m.function, rule_list(&m.rules), m.reason);
        out.push(Remark { kind: Kind::Missed, step: m.step, pass: m.pass, function: m.function.clone(), line, message, changed: Vec::new(), unlisted: 0 });
    }
    out.sort_by_key(|r| r.step);
    out
}

fn passed(c: &Change, before: &Function, after: &Function, input: &InputLines) -> Remark {
    let (old, new) = (instruction_texts(before), instruction_texts(after));
    let lines = input.functions.get(&c.function);
    // The k-th occurrence of each text in `before`.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let occurrence: Vec<usize> = old
        .iter()
        .map(|t| {
            let n = seen.entry(t.as_str()).or_default();
            *n += 1;
            *n - 1
        })
        .collect();
    let mut changed = Vec::new();
    for (removed, k) in diff(&old, &new) {
        if removed {
            let line = lines.and_then(|f| f.by_text.get(&old[k])).and_then(|v| v.get(occurrence[k])).copied();
            changed.push(Changed { removed: true, line, text: old[k].clone() });
        } else {
            changed.push(Changed { removed: false, line: None, text: new[k].clone() });
        }
    }
    let (removed, added) = (changed.iter().filter(|x| x.removed).count(), changed.iter().filter(|x| !x.removed).count());
    let mut message = format!("{} changed `{}`: {removed} instruction{} removed, {added} added", c.pass, c.function, if removed == 1 { "" } else { "s" });
    if changed.is_empty() {
        message = format!("{} changed `{}`: declarations or labels only", c.pass, c.function);
    }
    if !c.rules.is_empty() {
        message.push_str(&format!("; rules: {}", rule_list(&c.rules)));
    }
    let line = changed.iter().find_map(|x| x.line).or(lines.map(|f| f.header)).unwrap_or(0);
    let unlisted = changed.len().saturating_sub(MAX_LISTED);
    changed.truncate(MAX_LISTED);
    Remark { kind: Kind::Passed, step: c.step, pass: c.pass, function: c.function.clone(), line, message, changed, unlisted }
}

/// The edit from `a` to `b`: `(true, i)` removes `a[i]`, `(false, j)` adds
/// `b[j]`, in order (a longest common subsequence between the common
/// prefix and suffix; everything replaced when that would be too large).
pub fn diff(a: &[String], b: &[String]) -> Vec<(bool, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let (n, m) = (a_mid.len(), b_mid.len());
    let mut out = Vec::new();
    if n.saturating_mul(m) > MAX_DIFF_CELLS {
        out.extend((0..n).map(|i| (true, prefix + i)));
        out.extend((0..m).map(|j| (false, prefix + j)));
        return out;
    }
    // lcs[i][j]: the longest common subsequence of a_mid[i..] and b_mid[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a_mid[i] == b_mid[j] { lcs[at(i + 1, j + 1)] + 1 } else { lcs[at(i + 1, j)].max(lcs[at(i, j + 1)]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a_mid[i] == b_mid[j] {
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            out.push((true, prefix + i));
            i += 1;
        } else {
            out.push((false, prefix + j));
            j += 1;
        }
    }
    out
}

impl Remark {
    /// `file:line: remark: message`, then a line per changed instruction.
    pub fn text(&self, file: &str) -> String {
        let kind = match self.kind {
            Kind::Passed => "remark",
            Kind::Missed => "remark (missed)",
        };
        let mut s = format!("{file}:{}: {kind}: {} [step {}]\n", self.line, self.message, self.step);
        for c in &self.changed {
            let at = c.line.map_or(String::new(), |l| format!("{file}:{l}"));
            let at_w = file.len() + 7;
            s.push_str(&format!("    {at:<at_w$} {} {}\n", if c.removed { '-' } else { '+' }, c.text));
        }
        if self.unlisted > 0 {
            s.push_str(&format!("    ... {} more changed instructions (--print-after-all shows the whole function)\n", self.unlisted));
        }
        s
    }

    /// One JSON object (a line of `--error-format=json` output).
    pub fn json(&self, file: &str) -> String {
        serde_json::json!({
            "file": file,
            "line": self.line,
            "severity": "remark",
            "kind": match self.kind { Kind::Passed => "passed", Kind::Missed => "missed" },
            "pass": self.pass,
            "function": self.function,
            "step": self.step,
            "message": self.message,
            "changes": self.changed.iter().map(|c| serde_json::json!({"op": if c.removed { "-" } else { "+" }, "line": c.line, "text": c.text})).collect::<Vec<_>>(),
            "unlisted": self.unlisted,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_diff_keeps_a_longest_common_subsequence() {
        let a = v(&["a", "b", "c", "d", "e"]);
        let b = v(&["a", "x", "c", "e", "y"]);
        assert_eq!(diff(&a, &b), [(true, 1), (false, 1), (true, 3), (false, 4)]);
        assert!(diff(&a, &a).is_empty());
        assert_eq!(diff(&a, &[]).len(), 5);
    }

    #[test]
    fn filters_are_regular_expressions_on_pass_names() {
        let f = Filter::new("dce|egraph").unwrap();
        assert!(f.matches("dce") && f.matches("egraph") && !f.matches("copy-prop"));
        assert!(Filter::new("copy").unwrap().matches("copy-prop"));
        assert!(Filter::new("").unwrap().matches("anything"));
        assert!(Filter::new("(").is_err());
    }
}
