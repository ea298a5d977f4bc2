//! Bad input gets a positioned diagnostic, never a panic: mutated real files
//! (truncated, tokens dropped, swapped, duplicated, bytes flipped) and
//! pathological inputs (invalid UTF-8, NUL, a 10 MB line, 10,000-deep nesting).
//! Whatever parses must also round-trip.

use ptx_tests::corpus::{own_corpus_dir, ptx_files, shared_corpus_dir, manifest};
use ptx_tests::roundtrip::round_trip;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Parses; an error must be `NAME:LINE:COL: error: ...`; a success must round-trip.
fn check(name: &str, bytes: &[u8]) -> Result<(), String> {
    match ptx_ir::parse(name, bytes) {
        Err(d) => {
            let s = d.to_string();
            let ok = s.starts_with(&format!("{name}:")) && s.contains(": error: ") && d.line >= 1 && d.col >= 1;
            if ok { Ok(()) } else { Err(format!("badly formed diagnostic: {s}")) }
        }
        Ok(p) => {
            // What lets `verify_parsed` skip the scope check: the parser
            // never makes a function the check rejects.
            for item in &p.module.items {
                if let ptx_ir::ir::Item::Func(f) = item {
                    let errors = ptx_ir::ir::scopes::check(f);
                    if !errors.is_empty() {
                        return Err(format!("the scope check rejects parsed function `{}`: {errors:?}", f.name));
                    }
                }
            }
            round_trip(name, bytes).map(|_| ())
        }
    }
}

/// Token boundaries, roughly: starts of runs of word characters or single punctuation.
fn token_starts(b: &[u8]) -> Vec<usize> {
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.' | b':');
    let mut v = Vec::new();
    for i in 0..b.len() {
        if !b[i].is_ascii_whitespace() && (i == 0 || !word(b[i]) || !word(b[i - 1])) {
            v.push(i);
        }
    }
    v
}

fn token_at(b: &[u8], starts: &[usize], k: usize) -> std::ops::Range<usize> {
    let s = starts[k];
    let e = starts.get(k + 1).copied().unwrap_or(b.len());
    let mut e2 = s;
    while e2 < e && !b[e2].is_ascii_whitespace() {
        e2 += 1;
    }
    s..e2.max(s + 1).min(b.len())
}

fn mutate(rng: &mut Rng, b: &[u8]) -> Vec<u8> {
    let starts = token_starts(b);
    if starts.len() < 2 {
        return b.to_vec();
    }
    match rng.below(6) {
        0 => b[..rng.below(b.len())].to_vec(),
        1 => {
            let r = token_at(b, &starts, rng.below(starts.len()));
            [&b[..r.start], &b[r.end..]].concat()
        }
        2 => {
            let k = rng.below(starts.len() - 1);
            let (r1, r2) = (token_at(b, &starts, k), token_at(b, &starts, k + 1));
            if r1.end > r2.start {
                return b.to_vec();
            }
            [&b[..r1.start], &b[r2.clone()], &b[r1.end..r2.start], &b[r1.clone()], &b[r2.end..]].concat()
        }
        3 => {
            let r = token_at(b, &starts, rng.below(starts.len()));
            [&b[..r.end], b" ", &b[r.clone()], &b[r.end..]].concat()
        }
        4 => {
            let mut v = b.to_vec();
            let i = rng.below(v.len());
            v[i] = (rng.next() & 0xff) as u8;
            v
        }
        _ => {
            let r = token_at(b, &starts, rng.below(starts.len()));
            let other = token_at(b, &starts, rng.below(starts.len()));
            [&b[..r.start], &b[other], &b[r.end..]].concat()
        }
    }
}

fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in ptx_files(&own_corpus_dir()) {
        out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
    }
    if let Some(dir) = shared_corpus_dir() {
        // Small and medium files keep the test fast; every 4th file of the manifest.
        for e in manifest(&dir).iter().step_by(4) {
            let b = std::fs::read(dir.join(&e.file)).unwrap();
            if b.len() < 200_000 {
                out.push((e.file.clone(), b));
            }
        }
    }
    out
}

#[test]
fn mutated_files_give_diagnostics_or_round_trip() {
    let files = sample_files();
    assert!(!files.is_empty());
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut failures = Vec::new();
    let mut runs = 0;
    for (name, bytes) in &files {
        for _ in 0..12 {
            let m = mutate(&mut rng, bytes);
            runs += 1;
            if let Err(e) = check("mutant.ptx", &m) {
                failures.push(format!("{name} mutant: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} mutants fail:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn pathological_inputs() {
    let n = 10_000;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("invalid utf-8", [HEAD.as_bytes(), b".visible .entry k() { \xff\xfe ret; }"].concat()),
        ("invalid utf-8 in a comment", [HEAD.as_bytes(), b"// \xff\xfe\n.visible .entry k() { ret; }"].concat()),
        ("invalid utf-8 in a string", [HEAD.as_bytes(), b".file 1 \"\xff\"\n"].concat()),
        ("nul", [HEAD.as_bytes(), b"\0"].concat()),
        ("invalid utf-8 in a @@DWARF line", b".version 1.4\n.target sm_10\n@@DWARF .byte 0x2b, 0x00\xff\n@@DWARF\n".to_vec()),
        ("empty", Vec::new()),
        ("only whitespace", b"   \n\t  ".to_vec()),
        ("10 MB line", [HEAD.as_bytes(), b".global .u8 x[4] = {", "1,".repeat(5_000_000).as_bytes(), b"1};"].concat()),
        ("10 MB comment line", [HEAD.as_bytes(), b"// ", &vec![b'x'; 10_000_000], b"\n"].concat()),
        ("10 MB identifier", [HEAD.as_bytes(), b".global .u32 ", &vec![b'a'; 10_000_000], b";"].concat()),
        ("deep scopes", format!("{HEAD}.visible .entry k()\n{{\n{}ret;\n{}}}\n", "{\n".repeat(n), "}\n".repeat(n)).into_bytes()),
        ("deep unclosed scopes", format!("{HEAD}.visible .entry k()\n{{\n{}", "{\n".repeat(n)).into_bytes()),
        ("deep parentheses", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; add.u32 %r, %r, {}1{}; }}", "(".repeat(n), ")".repeat(n)).into_bytes()),
        ("deep unary minus", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; add.u32 %r, %r, {}1; }}", "-".repeat(n)).into_bytes()),
        ("deep initializer", format!("{HEAD}.global .u32 x[1] = {}1{};", "{".repeat(n), "}".repeat(n)).into_bytes()),
        ("deep vectors", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; mov.b32 %r, {}%r{}; }}", "{".repeat(n), "}".repeat(n)).into_bytes()),
        ("long binary chain", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; add.u32 %r, %r, 1{}; }}", "+1".repeat(n)).into_bytes()),
        ("many operands", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; mov.b32 %r{}; }}", ", %r".repeat(n)).into_bytes()),
        ("many modifiers", format!("{HEAD}.visible .entry k() {{ .reg .b32 %r; add{}.u32 %r, %r, %r; }}", ".sat".repeat(n)).into_bytes()),
    ];
    // Each case again after 8,000 small items: large enough to be parsed,
    // verified and printed on rayon's threads (their stacks are 2 MiB too).
    let padding: String = (0..8000).map(|k| format!(".global .u32 pad{k};\n")).collect();
    let padded: Vec<(String, Vec<u8>)> = cases
        .iter()
        .filter(|(_, b)| b.starts_with(HEAD.as_bytes()) && b.len() < 1 << 20)
        .map(|(what, b)| (format!("{what} after many items"), [HEAD.as_bytes(), padding.as_bytes(), &b[HEAD.len()..]].concat()))
        .collect();
    assert!(padded.iter().all(|(_, b)| b.len() >= ptx_ir::threads::PARALLEL_MIN_BYTES));
    let cases = cases.into_iter().map(|(w, b)| (w.to_string(), b)).chain(padded);
    for (what, bytes) in cases {
        // A stack overflow would abort the process rather than fail the test, so
        // run each case on a thread with the default test stack (2 MiB).
        let name = format!("{what}.ptx");
        let r = std::thread::Builder::new().stack_size(2 << 20).spawn(move || check(&name, &bytes)).unwrap().join();
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("{what}: {e}"),
            Err(_) => panic!("{what}: the parser panicked"),
        }
    }
}

/// A `@@DWARF` line holds raw text; bytes that are not UTF-8 there are an
/// error at the line, not a silently emptied line.
#[test]
fn non_utf8_dwarf_line_is_an_error() {
    let e = ptx_ir::parse("legacy.ptx", b".version 1.4\n.target sm_10\n@@DWARF .byte 0x2b, 0x00\xff\n").unwrap_err();
    assert_eq!(e.to_string(), "legacy.ptx:3:9: error: found bytes that are not UTF-8, expected the text of the line");
}

/// IR a buggy pass could make, with register and label ids outside the
/// function's tables: the verifier reports each, and the printer writes text
/// that does not parse instead of panicking.
#[test]
fn ids_outside_the_tables_are_reported_not_panics() {
    use ptx_ir::ir::{Item, LabelId, Operand, RegId, Stmt};
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n.entry k()\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, 1;\nbra L;\nL:\nret;\n}\n";
    let mut p = ptx_ir::parse("k.ptx", text.as_bytes()).unwrap();
    let Item::Func(f) = &mut p.module.items[0] else { panic!() };
    let body = f.body.as_mut().unwrap();
    let Stmt::Instr(mov) = &mut body[1] else { panic!() };
    mov.operands[0] = Operand::reg(RegId(40));
    let Stmt::Instr(bra) = &mut body[2] else { panic!() };
    bra.operands[0] = Operand::Label(LabelId(9));
    let errors: Vec<String> = ptx_ir::verify::verify(&p.module, &p.source_map, "k.ptx", text.as_bytes()).iter().map(|d| d.to_string()).collect();
    assert!(errors.iter().any(|e| e.starts_with("k.ptx:7:1: error: in function `k`: register #40 is not in the register table")), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("k.ptx:8:1: error: in function `k`: label #9 is not in the label table")), "{errors:?}");
    let printed = ptx_print::print_module(&p.module);
    assert!(ptx_ir::parse("printed.ptx", printed.as_bytes()).is_err(), "{printed}");
}
