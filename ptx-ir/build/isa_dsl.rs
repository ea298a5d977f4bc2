//! Compiler for the instruction tables in `ptx-ir/isa/*.ptxisa`.
//!
//! The tables are the manual's syntax blocks, copied close to verbatim, with a
//! header line per opcode and a few effect lines (see `isa/README.md`). This
//! module parses them into [`Table`], checks them, and is used by `build.rs`
//! to emit the static Rust tables in `OUT_DIR/isa_tables.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

#[path = "../src/isa/vocab.rs"]
#[allow(dead_code)]
mod vocab;
use vocab::{classify, ModKind, SlotRole};

#[derive(Debug, Clone)]
pub struct Slot {
    pub optional: bool,
    pub allowed: Vec<String>,
    pub role: SlotRole,
    /// The set the slot came from (`.type`), if any.
    pub set: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// A register, immediate, vector, symbol, label, `p|q` pair ...
    Value,
    /// `[ ... ]`.
    Address,
    /// `( ... )`: call return and argument lists.
    List,
}

#[derive(Debug, Clone)]
pub struct OperandSpec {
    pub names: Vec<String>,
    pub kind: OpKind,
    pub optional: bool,
}

#[derive(Debug, Clone)]
pub struct Form {
    pub opcode: String,
    pub slots: Vec<Slot>,
    pub operands: Vec<OperandSpec>,
    pub syntax: String,
    pub block: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Effects {
    pub out: BTreeSet<String>,
    pub inout: BTreeSet<String>,
    pub load: BTreeSet<String>,
    pub store: BTreeSet<String>,
    pub atomic: BTreeSet<String>,
    pub prefetch: BTreeSet<String>,
    pub flags: BTreeSet<String>,
    /// `since` lines: PTX version, targets, and the modifiers that make them apply.
    pub requires: Vec<Requirement>,
    /// `types` lines: operand name -> type expression.
    pub types: Vec<(String, String)>,
}

/// `since X.Y [sm_NN | sm_90a|sm_100a ...] [if .mod ...]`.
#[derive(Debug, Clone, Default)]
pub struct Requirement {
    pub ptx: Option<(u32, u32)>,
    /// Oldest `sm_` number (onion-layer targets).
    pub min_sm: Option<u32>,
    /// Arch-specific targets (`sm_90a`); any of them will do.
    pub exact: Vec<String>,
    /// Applies only when one of these modifiers is written.
    pub when: Vec<String>,
}

pub const FLAGS: &[&str] = &[
    "sync", "side_effect", "branch", "call", "ret", "exit", "carry_in", "carry_out", "carry_out_cc", "async", "volatile",
    "approx", "warp", "fence",
];

#[derive(Debug, Default)]
pub struct Table {
    pub opcodes: Vec<String>,
    pub forms: Vec<Form>,
    pub effects: Vec<Effects>, // per block
    /// Blocks that define forms of each opcode (an opcode may span families).
    pub blocks_of_opcode: BTreeMap<String, Vec<usize>>,
}

#[derive(Debug)]
pub struct DslError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

impl std::fmt::Display for DslError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.msg)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Dot(String),
    Punct(char),
}

fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'%';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'.' || (c == b':' && b.get(i + 1) == Some(&b':')) {
            let s = i;
            i += if c == b'.' { 1 } else { 2 };
            while i < b.len() && (word(b[i]) || (b[i] == b':' && b.get(i + 1) == Some(&b':'))) {
                i += if b[i] == b':' { 2 } else { 1 };
            }
            out.push(Tok::Dot(text[s..i].to_string()));
        } else if word(c) {
            let s = i;
            while i < b.len() && (word(b[i]) || (b[i] == b'-' && b.get(i + 1).is_some_and(|&n| n.is_ascii_alphabetic()))) {
                i += 1;
            }
            out.push(Tok::Word(text[s..i].to_string()));
        } else {
            out.push(Tok::Punct(c as char));
            i += 1;
        }
    }
    out
}

struct Block {
    names: Vec<String>,
    placeholder: Option<String>,
    line: usize,
    effects: Effects,
    /// (line, text) of forms and set definitions, in order.
    stmts: Vec<(usize, String)>,
}

/// Parses one table file.
pub fn parse_file(file: &str, text: &str, table: &mut Table) -> Result<(), DslError> {
    let err = |line: usize, msg: String| DslError { file: file.to_string(), line, msg };
    let mut blocks: Vec<Block> = Vec::new();
    let mut pending = String::new();
    let mut pending_line = 0;
    for (no, raw) in text.lines().enumerate() {
        let line_no = no + 1;
        let mut line = raw;
        if let Some(p) = line.find('#') {
            line = &line[..p];
        }
        if let Some(p) = line.find("//") {
            line = &line[..p];
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if pending.is_empty() {
            let mut words = trimmed.split_whitespace();
            let first = words.next().unwrap();
            match first {
                "instr" => {
                    let mut names = Vec::new();
                    let mut placeholder = None;
                    let rest: Vec<&str> = words.collect();
                    let mut k = 0;
                    while k < rest.len() {
                        if rest[k] == "as" {
                            placeholder = rest.get(k + 1).map(|s| s.to_string());
                            k += 2;
                            continue;
                        }
                        names.push(rest[k].to_string());
                        k += 1;
                    }
                    if names.is_empty() {
                        return Err(err(line_no, "`instr` needs an opcode name".into()));
                    }
                    blocks.push(Block { names, placeholder, line: line_no, effects: Effects::default(), stmts: Vec::new() });
                    continue;
                }
                "types" => {
                    let Some(b) = blocks.last_mut() else { return Err(err(line_no, "`types` before any `instr`".into())) };
                    for a in words {
                        let (n, t) = a.split_once('=').ok_or_else(|| err(line_no, format!("`types` takes NAME=TYPE pairs, found `{a}`")))?;
                        b.effects.types.push((n.to_string(), t.to_string()));
                    }
                    continue;
                }
                "out" | "inout" | "load" | "store" | "atomic" | "prefetch" | "flags" | "since" => {
                    let Some(b) = blocks.last_mut() else { return Err(err(line_no, "effect line before any `instr`".into())) };
                    let args: Vec<String> = words.map(|s| s.to_string()).collect();
                    let set = match first {
                        "out" => &mut b.effects.out,
                        "inout" => &mut b.effects.inout,
                        "load" => &mut b.effects.load,
                        "store" => &mut b.effects.store,
                        "atomic" => &mut b.effects.atomic,
                        "prefetch" => &mut b.effects.prefetch,
                        "flags" => {
                            for a in &args {
                                if !FLAGS.contains(&a.as_str()) {
                                    return Err(err(line_no, format!("unknown flag `{a}`; known: {FLAGS:?}")));
                                }
                            }
                            &mut b.effects.flags
                        }
                        "since" => {
                            let r = parse_requirement(&args).map_err(|m| err(line_no, m))?;
                            b.effects.requires.push(r);
                            continue;
                        }
                        _ => unreachable!(),
                    };
                    for a in args {
                        if a != "-" {
                            set.insert(a);
                        }
                    }
                    continue;
                }
                _ => {}
            }
            pending_line = line_no;
        }
        if blocks.is_empty() {
            return Err(err(line_no, "syntax text before any `instr` line".into()));
        }
        pending.push_str(trimmed);
        pending.push(' ');
        // A statement ends with ';' or, for set definitions, with the closing brace.
        let t = pending.trim_end();
        let is_set = t.starts_with('.') && (t.contains('=') || t.contains(':') && !t.contains("::") || t.contains(": {") || t.contains(":{"));
        let complete = t.ends_with(';') || (is_set && t.ends_with('}') && balanced(t));
        if complete {
            blocks.last_mut().unwrap().stmts.push((pending_line, std::mem::take(&mut pending)));
        }
    }
    if !pending.trim().is_empty() {
        return Err(err(pending_line, format!("unterminated statement `{}` (missing `;`?)", pending.trim())));
    }
    for b in blocks {
        compile_block(file, b, table)?;
    }
    Ok(())
}

fn parse_requirement(args: &[String]) -> Result<Requirement, String> {
    let mut r = Requirement::default();
    let mut k = 0;
    while k < args.len() {
        let a = &args[k];
        k += 1;
        if a == "if" {
            r.when = args[k..].to_vec();
            if r.when.is_empty() || r.when.iter().any(|w| !w.starts_with('.')) {
                return Err("`since ... if` takes modifiers (`.bf16 ...`)".into());
            }
            break;
        }
        if a.starts_with("sm_") {
            for t in a.split('|') {
                let num: String = t[3..].chars().take_while(|c| c.is_ascii_digit()).collect();
                let suffix = &t[3 + num.len()..];
                let n: u32 = num.parse().map_err(|_| format!("bad target `{t}`"))?;
                match suffix {
                    "" => r.min_sm = Some(n),
                    "a" | "f" => r.exact.push(t.to_string()),
                    _ => return Err(format!("bad target `{t}`")),
                }
            }
        } else {
            let (ma, mi) = a.split_once('.').ok_or_else(|| format!("bad version `{a}`"))?;
            r.ptx = Some((ma.parse().map_err(|_| format!("bad version `{a}`"))?, mi.parse().map_err(|_| format!("bad version `{a}`"))?));
        }
    }
    Ok(r)
}

fn balanced(t: &str) -> bool {
    let mut d = 0i32;
    for c in t.chars() {
        match c {
            '{' => d += 1,
            '}' => d -= 1,
            _ => {}
        }
    }
    d == 0
}

fn is_set_def(toks: &[Tok]) -> bool {
    // `.name = ...`, `.name: {...}`, `name = {...}` (opcode sets, ignored)
    matches!((toks.first(), toks.get(1)), (Some(Tok::Dot(_)), Some(Tok::Punct('=' | ':'))) | (Some(Tok::Word(_)), Some(Tok::Punct('='))))
}

/// Expands set items: `.param{::entry, ::func}` -> `.param`, `.param::entry`, `.param::func`.
fn set_items(toks: &[Tok]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Dot(d) => {
                let base = d.clone();
                if toks.get(i + 1) == Some(&Tok::Punct('{')) && matches!(toks.get(i + 2), Some(Tok::Dot(s)) if s.starts_with("::")) {
                    out.push(base.clone());
                    i += 2;
                    while i < toks.len() && toks[i] != Tok::Punct('}') {
                        if let Tok::Dot(s) = &toks[i] {
                            out.push(format!("{base}{s}"));
                        }
                        i += 1;
                    }
                } else {
                    out.push(base);
                }
            }
            Tok::Punct(',') => {}
            Tok::Word(w) => return Err(format!("set item `{w}` does not start with a dot")),
            Tok::Punct(c) => return Err(format!("unexpected `{c}` in a set")),
        }
        i += 1;
    }
    Ok(out)
}

fn compile_block(file: &str, b: Block, table: &mut Table) -> Result<(), DslError> {
    let err = |line: usize, msg: String| DslError { file: file.to_string(), line, msg };
    let block_idx = table.effects.len();
    for n in &b.names {
        let blocks = table.blocks_of_opcode.entry(n.clone()).or_default();
        if blocks.is_empty() {
            table.opcodes.push(n.clone());
        }
        blocks.push(block_idx);
    }
    // Group statements: forms followed by the set definitions they use.
    let mut all_sets: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut groups: Vec<(Vec<(usize, Vec<Tok>)>, BTreeMap<String, Vec<String>>)> = Vec::new();
    let mut in_sets = true;
    for (line, text) in &b.stmts {
        let toks = tokenize(text.trim().trim_end_matches(';'));
        if is_set_def(&toks) {
            let mut names = Vec::new();
            let mut i = 0;
            while i + 1 < toks.len() && matches!(toks[i + 1], Tok::Punct('=' | ':')) {
                match &toks[i] {
                    Tok::Dot(d) => names.push(d.clone()),
                    Tok::Word(_) => names.push(String::new()),
                    _ => {}
                }
                i += 2;
            }
            if toks.get(i) != Some(&Tok::Punct('{')) || toks.last() != Some(&Tok::Punct('}')) {
                return Err(err(*line, format!("a set is written `.name = {{ .a, .b }};`: `{}`", text.trim())));
            }
            let items = set_items(&toks[i + 1..toks.len() - 1]).map_err(|m| err(*line, m))?;
            if groups.is_empty() {
                groups.push((Vec::new(), BTreeMap::new()));
            }
            for n in names.into_iter().filter(|n| !n.is_empty()) {
                groups.last_mut().unwrap().1.insert(n.clone(), items.clone());
                all_sets.insert(n, items.clone());
            }
            in_sets = true;
        } else {
            if in_sets {
                groups.push((Vec::new(), BTreeMap::new()));
                in_sets = false;
            }
            groups.last_mut().unwrap().0.push((*line, toks));
        }
    }
    let mut n_forms = 0;
    for (forms, sets) in &groups {
        for (line, toks) in forms {
            for opcode in &b.names {
                let f = compile_form(opcode, b.placeholder.as_deref(), toks, sets, &all_sets).map_err(|m| err(*line, m))?;
                table.forms.push(Form { block: block_idx, ..f });
                n_forms += 1;
            }
        }
    }
    if n_forms == 0 {
        return Err(err(b.line, format!("`{}` has no syntax forms", b.names.join(" "))));
    }
    // Every effect name must name an operand of some form.
    let names: BTreeSet<String> = table.forms[table.forms.len() - n_forms..]
        .iter()
        .flat_map(|f| f.operands.iter().flat_map(|o| o.names.iter().cloned()))
        .collect();
    for set in [&b.effects.out, &b.effects.inout, &b.effects.load, &b.effects.store, &b.effects.atomic, &b.effects.prefetch] {
        for n in set {
            if !names.contains(n) {
                return Err(err(b.line, format!("effect names operand `{n}`, which no form of `{}` has (operands: {names:?})", b.names[0])));
            }
        }
    }
    for (n, _) in &b.effects.types {
        if !names.contains(n) {
            return Err(err(b.line, format!("`types` names operand `{n}`, which no form of `{}` has (operands: {names:?})", b.names[0])));
        }
    }
    let block_forms = &table.forms[table.forms.len() - n_forms..];
    for r in &b.effects.requires {
        for w in &r.when {
            if !block_forms.iter().any(|f| f.slots.iter().any(|s| s.allowed.contains(w))) {
                return Err(err(b.line, format!("`since ... if {w}`: no form of `{}` takes `{w}`", b.names[0])));
            }
        }
    }
    for f in block_forms {
        for (n, t) in &b.effects.types {
            if f.operands.iter().any(|o| o.names.contains(n)) {
                resolve_type(f, t).map_err(|m| err(b.line, format!("`types {n}={t}` in form `{}`: {m}", f.syntax)))?;
            }
        }
    }
    table.effects.push(b.effects);
    Ok(())
}

fn slot_role(set: Option<&str>, allowed: &[String]) -> SlotRole {
    if let Some(s) = set {
        let l = s.to_ascii_lowercase();
        if l == ".cmpop" || l == ".cmp" || l == ".cmp_op" {
            return SlotRole::Cmp;
        }
        if l == ".boolop" || l == ".bop" || l == ".bool_op" {
            return SlotRole::Bool;
        }
    }
    let kinds: Vec<ModKind> = allowed.iter().map(|a| classify(a)).collect();
    if kinds.iter().all(|k| matches!(k, ModKind::Type(_))) {
        SlotRole::Type
    } else if kinds.iter().all(|k| matches!(k, ModKind::Rounding(_))) {
        SlotRole::Rounding
    } else if kinds.iter().all(|k| matches!(k, ModKind::Space(_))) {
        SlotRole::Space
    } else if kinds.iter().all(|k| matches!(k, ModKind::Vector(_))) {
        SlotRole::Vector
    } else {
        SlotRole::Other
    }
}

fn compile_form(
    opcode: &str,
    placeholder: Option<&str>,
    toks: &[Tok],
    sets: &BTreeMap<String, Vec<String>>,
    all_sets: &BTreeMap<String, Vec<String>>,
) -> Result<Form, String> {
    // Head: the opcode (or placeholder) as a word followed by dot-words.
    let syntax = render(toks);
    let head = match toks.first() {
        Some(Tok::Word(w)) => w.clone(),
        _ => return Err(format!("a form starts with its opcode: `{syntax}`")),
    };
    let mut i = 1;
    let want: Vec<&str> = opcode.split('.').collect();
    // The opcode may be dotted (`cp.async.bulk`): consume its parts.
    let head_ok = if Some(head.as_str()) == placeholder {
        true
    } else {
        let mut parts = 1;
        if head != want[0] {
            return Err(format!("form `{syntax}` does not start with `{opcode}`"));
        }
        while parts < want.len() {
            match toks.get(i) {
                Some(Tok::Dot(d)) if d[1..] == *want[parts] => {
                    i += 1;
                    parts += 1;
                }
                _ => return Err(format!("form `{syntax}` does not start with `{opcode}`")),
            }
        }
        true
    };
    debug_assert!(head_ok);
    let lookup = |name: &str| -> Option<Vec<String>> { sets.get(name).or_else(|| all_sets.get(name)).cloned() };
    let mut slots = Vec::new();
    // Modifiers.
    loop {
        match toks.get(i) {
            Some(Tok::Dot(d)) => {
                i += 1;
                let mut alts = lookup(d).map(|v| (v, Some(d.clone()))).unwrap_or_else(|| (vec![d.clone()], None));
                // `.shared{::cta}` inside a form.
                if toks.get(i) == Some(&Tok::Punct('{')) && matches!(toks.get(i + 1), Some(Tok::Dot(s)) if s.starts_with("::")) {
                    i += 1;
                    while let Some(Tok::Dot(s)) = toks.get(i) {
                        alts.0.push(format!("{d}{s}"));
                        i += 1;
                        if toks.get(i) == Some(&Tok::Punct(',')) {
                            i += 1;
                        }
                    }
                    if toks.get(i) != Some(&Tok::Punct('}')) {
                        return Err(format!("unclosed `{{::...}}` in `{syntax}`"));
                    }
                    i += 1;
                }
                let role = slot_role(alts.1.as_deref(), &alts.0);
                slots.push(Slot { optional: false, allowed: alts.0, role, set: alts.1 });
            }
            Some(Tok::Punct('{')) if matches!(toks.get(i + 1), Some(Tok::Dot(_))) => {
                i += 1;
                let mut group: Vec<Vec<String>> = Vec::new();
                let mut group_sets = Vec::new();
                loop {
                    match toks.get(i) {
                        Some(Tok::Dot(d)) => {
                            if d.starts_with("::") {
                                // `{.shared{::cta}}` style continuation
                                let last = group.last_mut().ok_or_else(|| format!("stray `{d}` in `{syntax}`"))?;
                                let base = last[0].clone();
                                last.push(format!("{base}{d}"));
                            } else if let Some(v) = lookup(d) {
                                group.push(v);
                                group_sets.push(Some(d.clone()));
                            } else {
                                group.push(vec![d.clone()]);
                                group_sets.push(None);
                            }
                            i += 1;
                        }
                        Some(Tok::Punct(',')) | Some(Tok::Punct('|')) => {
                            // `{.a, .b}`: alternatives of one optional slot.
                            i += 1;
                            if let Some(Tok::Dot(d)) = toks.get(i) {
                                let extra = lookup(d).unwrap_or_else(|| vec![d.clone()]);
                                group.last_mut().ok_or_else(|| format!("bad alternatives in `{syntax}`"))?.extend(extra);
                                i += 1;
                            }
                        }
                        Some(Tok::Punct('{')) => {
                            // nested `{::cta}` after a dot inside an optional group
                            i += 1;
                            while let Some(Tok::Dot(s)) = toks.get(i) {
                                let last = group.last_mut().ok_or_else(|| format!("bad nesting in `{syntax}`"))?;
                                let base = last[0].clone();
                                last.push(format!("{base}{s}"));
                                i += 1;
                                if toks.get(i) == Some(&Tok::Punct(',')) {
                                    i += 1;
                                }
                            }
                            if toks.get(i) != Some(&Tok::Punct('}')) {
                                return Err(format!("unclosed nested braces in `{syntax}`"));
                            }
                            i += 1;
                        }
                        Some(Tok::Punct('}')) => {
                            i += 1;
                            break;
                        }
                        other => return Err(format!("unexpected {other:?} in optional modifiers of `{syntax}`")),
                    }
                }
                for (allowed, set) in group.into_iter().zip(group_sets) {
                    let role = slot_role(set.as_deref(), &allowed);
                    slots.push(Slot { optional: true, allowed, role, set });
                }
            }
            _ => break,
        }
    }
    // Operands.
    let mut operands = Vec::new();
    let rest = &toks[i..];
    let mut j = 0;
    let mut optional = false;
    while j < rest.len() {
        match &rest[j] {
            Tok::Punct(',') => {
                j += 1;
                continue;
            }
            Tok::Punct('{') if rest.get(j + 1) == Some(&Tok::Punct(',')) => {
                // `{, x}`: an optional trailing operand.
                optional = true;
                j += 2;
                let end = matching(rest, j - 2).ok_or_else(|| format!("unclosed `{{, ...}}` in `{syntax}`"))?;
                let inner = &rest[j..end];
                for part in split_commas(inner) {
                    operands.push(OperandSpec { optional: true, ..operand_spec(part, &syntax)? });
                }
                j = end + 1;
                continue;
            }
            _ => {}
        }
        let start = j;
        // An operand runs to the next top-level comma or an optional `{,` group.
        let mut depth = 0i32;
        while j < rest.len() {
            match &rest[j] {
                Tok::Punct('[' | '(') => depth += 1,
                Tok::Punct(']' | ')') => depth -= 1,
                Tok::Punct('{') if depth == 0 && rest.get(j + 1) == Some(&Tok::Punct(',')) => break,
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                Tok::Punct(',') if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let spec = operand_spec(&rest[start..j], &syntax)?;
        if optional && !spec.optional {
            return Err(format!("a required operand after an optional one in `{syntax}`"));
        }
        operands.push(spec);
    }
    let _ = optional;
    Ok(Form { opcode: opcode.to_string(), slots, operands, syntax, block: 0 })
}

fn matching(t: &[Tok], open: usize) -> Option<usize> {
    let mut d = 0;
    for (k, x) in t.iter().enumerate().skip(open) {
        match x {
            Tok::Punct('{' | '[' | '(') => d += 1,
            Tok::Punct('}' | ']' | ')') => {
                d -= 1;
                if d == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_commas(t: &[Tok]) -> Vec<&[Tok]> {
    let mut out = Vec::new();
    let mut d = 0;
    let mut s = 0;
    for (k, x) in t.iter().enumerate() {
        match x {
            Tok::Punct('{' | '[' | '(') => d += 1,
            Tok::Punct('}' | ']' | ')') => d -= 1,
            Tok::Punct(',') if d == 0 => {
                if k > s {
                    out.push(&t[s..k]);
                }
                s = k + 1;
            }
            _ => {}
        }
    }
    if t.len() > s {
        out.push(&t[s..]);
    }
    out
}

fn operand_spec(t: &[Tok], syntax: &str) -> Result<OperandSpec, String> {
    if t.is_empty() {
        return Err(format!("empty operand in `{syntax}`"));
    }
    let names: Vec<String> = t
        .iter()
        .filter_map(|x| match x {
            Tok::Word(w) => Some(w.clone()),
            _ => None,
        })
        .collect();
    if names.is_empty() {
        return Err(format!("operand without a name in `{syntax}`"));
    }
    let kind = match &t[0] {
        Tok::Punct('[') => OpKind::Address,
        Tok::Punct('(') => OpKind::List,
        _ => OpKind::Value,
    };
    Ok(OperandSpec { names, kind, optional: false })
}

fn render(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (k, t) in toks.iter().enumerate() {
        match t {
            Tok::Word(w) => {
                if k > 0 && matches!(toks[k - 1], Tok::Word(_) | Tok::Dot(_) | Tok::Punct(',')) {
                    s.push(' ');
                }
                s.push_str(w)
            }
            Tok::Dot(d) => s.push_str(d),
            Tok::Punct(c) => {
                if *c == '[' && k > 0 && matches!(toks[k - 1], Tok::Punct(',')) {
                    s.push(' ');
                }
                s.push(*c)
            }
        }
    }
    s
}

/// Rust identifier for a modifier or opcode text: `.L1::evict_last` -> `L1_EVICT_LAST`.
pub fn const_name(text: &str) -> String {
    // Tokens that differ from another only by case get an explicit name.
    match text {
        ".NaN" => return "NAN_PROPAGATE".to_string(),
        _ => {}
    }
    let mut s = String::new();
    for c in text.trim_start_matches('.').chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_uppercase());
        } else if !s.ends_with('_') {
            s.push('_');
        }
    }
    let s = s.trim_end_matches('_').to_string();
    if s.is_empty() || s.as_bytes()[0].is_ascii_digit() {
        format!("_{s}")
    } else {
        s
    }
}

fn role_name(r: SlotRole) -> &'static str {
    match r {
        SlotRole::Type => "Type",
        SlotRole::Rounding => "Rounding",
        SlotRole::Cmp => "Cmp",
        SlotRole::Bool => "Bool",
        SlotRole::Space => "Space",
        SlotRole::Vector => "Vector",
        SlotRole::Other => "Other",
    }
}

/// How an operand's expected type is found, as emitted Rust.
fn resolve_type(f: &Form, t: &str) -> Result<String, String> {
    if t == "any" {
        return Ok("OperandType::Any".into());
    }
    if t == "addr" {
        return Ok("OperandType::Address".into());
    }
    if t == "label" {
        return Ok("OperandType::Label".into());
    }
    let (base, wide, half) = match (t.strip_suffix("*2"), t.strip_suffix("/2")) {
        (Some(b), _) => (b, true, false),
        (_, Some(b)) => (b, false, true),
        _ => (t, false, false),
    };
    if !base.starts_with('.') {
        return Err(format!("a type is `.set`, `.u32`, `.set*2`, `.set/2`, `addr` or `any`, found `{t}`"));
    }
    // A set of the form, or else the form's only type slot (`add{.sat}.s32`
    // has no `.type` set, but its one type is what `.type` means there).
    let slot = f.slots.iter().position(|s| s.set.as_deref() == Some(base)).or_else(|| {
        let types: Vec<usize> = f.slots.iter().enumerate().filter(|(_, s)| s.role == SlotRole::Type).map(|(k, _)| k).collect();
        (base.ends_with("type") && types.len() == 1).then(|| types[0])
    });
    let kind = if wide { "Wide" } else if half { "Half" } else { "Slot" };
    if let Some(k) = slot {
        return Ok(format!("OperandType::{kind}({k})"));
    }
    match vocab::ScalarType::from_text(base) {
        Some(ty) if !wide && !half => Ok(format!("OperandType::Fixed(ScalarType::{ty:?})")),
        _ => Err(format!("`{base}` is neither a slot of the form nor a type")),
    }
}

fn requirement_expr(r: &Requirement, mod_index: &BTreeMap<&str, usize>) -> String {
    let ptx = r.ptx.map(|(a, b)| format!("Some(({a}, {b}))")).unwrap_or("None".into());
    let min_sm = r.min_sm.map(|s| format!("Some({s})")).unwrap_or("None".into());
    let exact = r.exact.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>().join(", ");
    let when = r.when.iter().map(|w| mod_index[w.as_str()].to_string()).collect::<Vec<_>>().join(", ");
    format!("Requirement {{ ptx: {ptx}, min_sm: {min_sm}, exact: &[{exact}], when: &[{when}] }}")
}

fn flags_expr(flags: &BTreeSet<String>) -> String {
    let flags: Vec<String> = flags.iter().map(|f| format!("Flags::{}", const_name(f))).collect();
    if flags.is_empty() {
        "Flags::NONE".to_string()
    } else {
        let mut s = flags[0].clone();
        for f in &flags[1..] {
            s = format!("{s}.union({f})");
        }
        s
    }
}

/// Emits the Rust source of the static tables.
pub fn emit(table: &Table) -> Result<String, String> {
    // Modifier vocabulary: every token of every slot, plus the closed vocabulary.
    let mut mods: BTreeSet<String> = BTreeSet::new();
    for f in &table.forms {
        for s in &f.slots {
            mods.extend(s.allowed.iter().cloned());
        }
    }
    for t in vocab::ScalarType::ALL {
        mods.insert(t.text().to_string());
    }
    for r in vocab::Rounding::ALL {
        mods.insert(r.text().to_string());
    }
    for c in vocab::CmpOp::ALL {
        mods.insert(c.text().to_string());
    }
    for s in vocab::StateSpace::ALL {
        mods.insert(s.text().to_string());
    }
    for b in [".and", ".or", ".xor", ".v2", ".v4", ".v8"] {
        mods.insert(b.to_string());
    }
    let mods: Vec<String> = mods.into_iter().collect();
    let mod_index: BTreeMap<&str, usize> = mods.iter().enumerate().map(|(k, m)| (m.as_str(), k + 1)).collect();
    let mut names = BTreeMap::new();
    for m in &mods {
        let n = const_name(m);
        if let Some(prev) = names.insert(n.clone(), m.clone()) {
            return Err(format!("modifiers `{prev}` and `{m}` map to the same constant name `{n}`"));
        }
    }
    let mut o = String::new();
    writeln!(o, "// @generated by ptx-ir/build.rs from ptx-ir/isa/*.ptxisa. Do not edit.").unwrap();
    writeln!(o, "/// Text of every modifier; index 0 is the empty slot.").unwrap();
    writeln!(o, "pub(crate) static MOD_TEXT: [&str; {}] = [\"\", {}];", mods.len() + 1, mods.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", ")).unwrap();
    writeln!(o, "#[allow(missing_docs)]\nimpl Mod {{").unwrap();
    for (k, m) in mods.iter().enumerate() {
        writeln!(o, "    pub const {}: Mod = Mod({});", const_name(m), k + 1).unwrap();
    }
    writeln!(o, "}}").unwrap();
    // Opcodes in table order.
    let mut opcode_forms: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, f) in table.forms.iter().enumerate() {
        opcode_forms.entry(f.opcode.as_str()).or_default().push(k);
    }
    let mut opnames = BTreeMap::new();
    writeln!(o, "#[allow(missing_docs)]\nimpl Opcode {{").unwrap();
    for (k, op) in table.opcodes.iter().enumerate() {
        let n = const_name(op);
        if let Some(prev) = opnames.insert(n.clone(), op.clone()) {
            return Err(format!("opcodes `{prev}` and `{op}` map to the same constant name `{n}`"));
        }
        writeln!(o, "    pub const {n}: Opcode = Opcode({k});").unwrap();
    }
    writeln!(o, "}}").unwrap();
    // Forms must be contiguous per opcode: reorder by opcode index.
    let mut order: Vec<usize> = Vec::new();
    let mut ranges = Vec::new();
    for op in &table.opcodes {
        let start = order.len();
        order.extend(opcode_forms.get(op.as_str()).cloned().unwrap_or_default());
        ranges.push((start, order.len()));
    }
    writeln!(o, "pub(crate) static OPCODES: [OpcodeData; {}] = [", table.opcodes.len()).unwrap();
    for (k, op) in table.opcodes.iter().enumerate() {
        let blocks = &table.blocks_of_opcode[op];
        let mut flags = BTreeSet::new();
        for &b in blocks {
            flags.extend(table.effects[b].flags.iter().cloned());
        }
        writeln!(o, "    OpcodeData {{ name: {op:?}, forms: {}..{}, flags: {} }},", ranges[k].0, ranges[k].1, flags_expr(&flags)).unwrap();
    }
    writeln!(o, "];").unwrap();
    writeln!(o, "pub(crate) static FORMS: [FormData; {}] = [", order.len()).unwrap();
    for &fk in &order {
        let f = &table.forms[fk];
        let e = &table.effects[f.block];
        let opk = table.opcodes.iter().position(|x| *x == f.opcode).unwrap();
        let mut slots = String::new();
        for s in &f.slots {
            let mut idx: Vec<usize> = s.allowed.iter().map(|a| mod_index[a.as_str()]).collect();
            idx.sort();
            idx.dedup();
            write!(
                slots,
                "SlotData {{ optional: {}, role: SlotRole::{}, allowed: &[{}] }}, ",
                s.optional,
                role_name(s.role),
                idx.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
            )
            .unwrap();
        }
        let mut ops = String::new();
        let mut accesses_memory = false;
        for spec in &f.operands {
            let has = |set: &BTreeSet<String>| spec.names.iter().any(|n| set.contains(n));
            let write = has(&e.out) || has(&e.inout);
            let read = !has(&e.out) || has(&e.inout);
            let mem = if has(&e.atomic) {
                "Some(MemAccess::Atomic)"
            } else if has(&e.store) {
                "Some(MemAccess::Store)"
            } else if has(&e.load) {
                "Some(MemAccess::Load)"
            } else if has(&e.prefetch) {
                "Some(MemAccess::Prefetch)"
            } else {
                "None"
            };
            accesses_memory |= mem != "None";
            let kind = match spec.kind {
                OpKind::Value => "OperandKind::Value",
                OpKind::Address => "OperandKind::Address",
                OpKind::List => "OperandKind::List",
            };
            let ty = match e.types.iter().find(|(n, _)| spec.names.contains(n)) {
                Some((_, t)) => resolve_type(f, t)?,
                None => "OperandType::Any".to_string(),
            };
            write!(
                ops,
                "OperandData {{ name: {:?}, kind: {kind}, optional: {}, read: {read}, write: {write}, mem: {mem}, ty: {ty} }}, ",
                spec.names.join("|"),
                spec.optional
            )
            .unwrap();
        }
        let reqs: Vec<String> = e.requires.iter().map(|r| requirement_expr(r, &mod_index)).collect();
        writeln!(
            o,
            "    FormData {{ opcode: Opcode({opk}), syntax: {:?}, flags: {}, slots: &[{slots}], operands: &[{ops}], accesses_memory: {accesses_memory}, requires: &[{}] }},",
            f.syntax,
            flags_expr(&e.flags),
            reqs.join(", ")
        )
        .unwrap();
    }
    writeln!(o, "];").unwrap();
    Ok(o)
}
