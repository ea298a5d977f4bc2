//! The verifier agrees with ptxas on files made invalid on purpose
//! (`tests/verify/invalid/`, each with ptxas's verdict in `MANIFEST.tsv`):
//! it rejects every one, with a diagnostic on the line ptxas names; and it
//! accepts the mutants ptxas accepts (`tests/verify/valid-mutants/`).

use ptx_tests::corpus::repo_root;

struct Case {
    file: String,
    kind: String,
    line: u32,
    message: String,
}

fn cases(dir: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(repo_root().join("tests/verify").join(dir).join("MANIFEST.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (f, k, ln, m) = (col("file"), col("kind"), col("ptxas_error_line"), col("ptxas_message"));
    lines
        .filter(|row| !row.trim().is_empty())
        .map(|row| {
            let c: Vec<&str> = row.split('\t').collect();
            Case { file: c[f].to_string(), kind: c[k].to_string(), line: c[ln].parse().unwrap_or(0), message: c[m].to_string() }
        })
        .collect()
}

/// Errors (not warnings) from parsing and verifying a file.
fn errors(dir: &str, file: &str) -> Vec<ptx_ir::source::Diagnostic> {
    let path = repo_root().join("tests/verify").join(dir).join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match ptx_ir::parse(file, &bytes) {
        Err(d) => vec![d],
        Ok(p) => ptx_ir::verify::verify(&p.module, &p.source_map, file, &bytes).into_iter().filter(|d| d.is_error()).collect(),
    }
}

/// Defects the verifier does not detect yet, with the reason. Each must
/// still be accepted (so fixing one makes this test fail until it is
/// removed from the list).
const KNOWN_GAPS: &[(&str, &str)] = &[(
    "vector-mma-a-fragment-1-reg.ptx",
    "mma fragment sizes depend on shape and type together; the tables type fragments as .b32 only",
)];

#[test]
fn rejects_what_ptxas_rejects_at_the_same_line() {
    let cases = cases("invalid");
    assert!(cases.len() >= 60, "only {} invalid cases", cases.len());
    let mut missed = Vec::new();
    let mut other_line = Vec::new();
    for c in &cases {
        let errs = errors("invalid", &c.file);
        if let Some((_, why)) = KNOWN_GAPS.iter().find(|(f, _)| *f == c.file) {
            assert!(errs.is_empty(), "{} is listed as a known gap ({why}) but is now rejected: remove it from KNOWN_GAPS", c.file);
            continue;
        }
        if errs.is_empty() {
            missed.push(format!("{} ({}): accepted; ptxas says line {}: {}", c.file, c.kind, c.line, c.message));
        } else if !errs.iter().any(|d| d.line == c.line) {
            other_line.push(format!("{} ({}): we say {}; ptxas says line {}: {}", c.file, c.kind, errs[0], c.line, c.message));
        }
    }
    assert!(missed.is_empty() && other_line.is_empty(), "{} of {} invalid files accepted, {} rejected at another line:\n{}\n{}", missed.len(), cases.len(), other_line.len(), missed.join("\n"), other_line.join("\n"));
}

#[test]
fn accepts_what_ptxas_accepts() {
    let mut wrong = Vec::new();
    for c in cases("valid-mutants") {
        for d in errors("valid-mutants", &c.file) {
            wrong.push(d.to_string());
        }
    }
    assert!(wrong.is_empty(), "false errors:\n{}", wrong.join("\n"));
}

/// The token a ptxas message about the module header names: the target in
/// "Unsupported .target 'sm_200'" and "does not support .target sm_90", the
/// version in "Unsupported .version 99.9;", the option or directive in
/// "Conflicting .target option 'x'", "Directive map_f64_to_f32", "Feature
/// 'debug'", "Feature '.address_size directive'", "Parsing error near '.target'".
fn header_token(message: &str) -> Option<String> {
    let after = |prefix: &str| message.split_once(prefix).map(|(_, rest)| rest);
    let quoted = |rest: &str| rest.strip_prefix('\'').and_then(|r| r.split_once('\'')).map(|(t, _)| t.to_string());
    let word = |rest: &str| rest.split(|c: char| c.is_whitespace() || c == ';').next().map(str::to_string);
    if let Some(rest) = after("Unsupported .target ").or(after("Conflicting .target option ")).or(after("Parsing error near ")) {
        return quoted(rest);
    }
    if let Some(rest) = after("Unsupported .version ").or(after("does not support .target ")).or(after("Directive ")) {
        return word(rest);
    }
    match after("Feature ").and_then(quoted)?.as_str() {
        "debug" => Some("debug".into()),
        ".address_size directive" => Some(".address_size".into()),
        _ => None,
    }
}

#[test]
fn header_errors_point_at_the_token_ptxas_names() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for c in cases("invalid").into_iter().filter(|c| matches!(c.kind.as_str(), "target" | "version" | "target-version")) {
        let Some(token) = header_token(&c.message) else { continue };
        let text = std::fs::read_to_string(repo_root().join("tests/verify/invalid").join(&c.file)).unwrap();
        let line = text.lines().nth(c.line as usize - 1).unwrap_or("");
        let errs = errors("invalid", &c.file);
        checked += 1;
        if !errs.iter().any(|d| d.line == c.line && line.get(d.col as usize - 1..).is_some_and(|at| at.starts_with(&token))) {
            wrong.push(format!("{}: ptxas names `{token}` on line {}; we say {:?}", c.file, c.line, errs.iter().map(|d| d.to_string()).collect::<Vec<_>>()));
        }
    }
    assert!(checked >= 15, "only {checked} header cases");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
