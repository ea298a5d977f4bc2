//! The hunt's output: the ranked findings as text (pattern, occurrences,
//! cost before and after, the cheaper candidate) or as JSON.

use crate::dag::{imm_text, Dag, Node};
use crate::{Finding, Outcome};
use std::fmt::Write;

/// The candidate's instructions, or `= %aK` / `= CONST` when it has none.
pub fn candidate_text(d: &Dag) -> String {
    if d.insns() == 0 {
        return match &d.nodes[d.root()] {
            Node::Input { index, .. } => format!("= %a{index}\n"),
            Node::Const { width, bits } => format!("= {} (.b{width})\n", imm_text(*bits, *width)),
            Node::Op { .. } => unreachable!("a DAG without instructions has no op node"),
        };
    }
    d.text().lines().skip(1).map(|l| format!("{l}\n")).collect()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

/// The summary line of a hunt.
pub fn summary(o: &Outcome) -> String {
    format!(
        "{} files ({} skipped), {} functions, {} roots, {} patterns, {} eligible, {} searched; {} findings; harvest {:.1}s, search {:.1}s",
        o.files,
        o.skipped.len(),
        o.kernels,
        o.roots,
        o.patterns,
        o.eligible,
        o.searched,
        o.findings.len(),
        o.harvest_time.as_secs_f64(),
        o.search_time.as_secs_f64()
    )
}

/// The first `limit` findings as text.
pub fn text(o: &Outcome, limit: usize) -> String {
    let mut out = String::new();
    for (k, f) in o.findings.iter().take(limit).enumerate() {
        let _ = writeln!(
            out,
            "#{} score {} = {} x {}: {} occurrences in {} files, {} functions ({} in all); cost {} -> {}",
            k + 1,
            f.score(),
            f.count,
            f.saving(),
            f.count,
            f.files,
            f.kernels,
            f.total,
            f.found.cost_before,
            f.found.cost_after
        );
        if !f.unmeasured.is_empty() {
            let _ = writeln!(out, "  note: no cell in the cost table: {}", f.unmeasured.join(", "));
        }
        out.push_str("  pattern:\n");
        out.push_str(&indent(&f.pattern));
        out.push_str("  cheaper:\n");
        out.push_str(&indent(&candidate_text(&f.found.candidate)));
        out.push('\n');
    }
    out
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_finding(f: &Finding) -> String {
    format!(
        "{{\"score\":{},\"occurrences\":{},\"files\":{},\"functions\":{},\"total\":{},\"cost_before\":{},\"cost_after\":{},\"unmeasured\":[{}],\"pattern\":{},\"candidate\":{}}}",
        f.score(),
        f.count,
        f.files,
        f.kernels,
        f.total,
        f.found.cost_before,
        f.found.cost_after,
        f.unmeasured.iter().map(|h| json_str(h)).collect::<Vec<_>>().join(","),
        json_str(&f.pattern),
        json_str(&candidate_text(&f.found.candidate))
    )
}

/// The first `limit` findings and the summary as JSON.
pub fn json(o: &Outcome, limit: usize) -> String {
    let findings: Vec<String> = o.findings.iter().take(limit).map(json_finding).collect();
    let skipped: Vec<String> = o.skipped.iter().map(|s| json_str(s)).collect();
    format!(
        "{{\"files\":{},\"skipped\":[{}],\"functions\":{},\"roots\":{},\"patterns\":{},\"eligible\":{},\"searched\":{},\"harvest_seconds\":{:.3},\"search_seconds\":{:.3},\"findings\":[{}]}}\n",
        o.files,
        skipped.join(","),
        o.kernels,
        o.roots,
        o.patterns,
        o.eligible,
        o.searched,
        o.harvest_time.as_secs_f64(),
        o.search_time.as_secs_f64(),
        findings.join(",")
    )
}
