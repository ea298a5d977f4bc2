//! Wrapping a single instruction line in a minimal kernel, with every name
//! it uses declared, so instruction forms can be tested one line at a time.

use ptx_ir::ir::SpecialReg;

/// Builds a module around `line`: each identifier used as an operand is
/// declared as a `.b64` register (parsing does not check operand types).
pub fn kernel_around(line: &str, target: &str, version: &str) -> String {
    // Manual placeholders such as `cache-policy` are not PTX names.
    let body = dash_names_to_underscores(line.trim());
    let guard_end = if body.starts_with('@') { body.find(char::is_whitespace).unwrap_or(body.len()) } else { 0 };
    let guard = &body[..guard_end];
    let rest = body[guard_end..].trim_start();
    // The opcode and modifiers end at the first character that cannot be part of them.
    let op_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':'))).unwrap_or(rest.len());
    let operands = &rest[op_end..];
    let mut regs: Vec<String> = Vec::new();
    let mut arrays: Vec<String> = Vec::new();
    for text in [guard.trim_start_matches('@').trim_start_matches('!'), operands] {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let starts = c.is_ascii_alphabetic() || c == b'_' || c == b'%' || c == b'$';
            let prev_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.' || bytes[i - 1] == b'_' || bytes[i - 1] == b'$');
            if starts && prev_ok {
                let s = i;
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$') {
                    i += 1;
                }
                let name = &text[s..i];
                let numeric_literal = name.len() > 1 && (name.starts_with("0x") || name.starts_with("0f") || name.starts_with("0d"));
                if name == "_" || numeric_literal || SpecialReg::from_name(name).is_some() || name == "WARP_SZ" {
                    continue;
                }
                let list = if bytes.get(i) == Some(&b'[') { &mut arrays } else { &mut regs };
                if !list.iter().any(|n| n == name) {
                    list.push(name.to_string());
                }
            } else {
                i += 1;
            }
        }
    }
    let globals: String = arrays.iter().map(|n| format!(".global .b32 {n}[16];\n")).collect();
    let decls: String = regs.iter().map(|n| format!("\t.reg .b64 {n};\n")).collect();
    format!(".version {version}\n.target {target}\n.address_size 64\n{globals}.visible .entry snippet()\n{{\n{decls}\t{body}\n\tret;\n}}\n")
}

fn dash_names_to_underscores(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (k, c) in s.char_indices() {
        let dash_in_word = c == '-' && k > 0 && b[k - 1].is_ascii_alphabetic() && b.get(k + 1).is_some_and(|n| n.is_ascii_alphabetic());
        out.push(if dash_in_word { '_' } else { c });
    }
    out
}
