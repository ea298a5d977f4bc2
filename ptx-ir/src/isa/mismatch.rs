//! Why no form of an opcode fits an instruction, said in words: the error
//! of the form matcher, with the opcode and modifiers as written and a hint
//! derived from the tables (the nearest form and what it lacks, or the
//! form's operand shape).

use super::{closest_forms, FormId, Mod, Opcode, OperandKind};
use smallvec::SmallVec;
use std::fmt;

/// No form of `opcode` takes these modifiers and operands.
///
/// `Display` gives the parser's message (`` `mad.s32` fits no form of `mad`:
/// a modifier from {.hi .lo .wide} is missing (nearest form: ...) ``).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormMismatch {
    pub opcode: Opcode,
    /// The modifiers in written order.
    pub mods: SmallVec<[Mod; 8]>,
    pub reason: Mismatch,
}

/// What does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// This modifier (index into the written modifiers) belongs to no form of the opcode.
    UnknownModifier(usize),
    /// Every modifier is known, but no form takes them together.
    NoForm,
    /// The modifiers fit `form`, but it takes `min..=max` operands.
    OperandCount { form: FormId, min: usize, max: usize, found: usize },
    /// Operand `index` must be of `expected` kind under `form`.
    OperandKind { form: FormId, index: usize, expected: OperandKind },
}

/// Nearest forms further than this (extra plus missing modifiers) are not
/// offered as a hint: the list of forms is.
const NEAREST_DISTANCE: usize = 2;
/// Nearest forms named in a hint.
const NEAREST_SHOWN: usize = 2;
/// Forms listed when none is near.
const FORMS_SHOWN: usize = 4;
/// Modifiers listed for a missing slot.
const ALLOWED_SHOWN: usize = 8;

impl FormMismatch {
    /// The instruction head as written: `mad.s32`.
    pub fn head(&self) -> String {
        let mut s = self.opcode.name().to_string();
        for m in &self.mods {
            s.push_str(m.text());
        }
        s
    }

    /// The hint for [`Mismatch::NoForm`]: what the nearest forms lack or
    /// have too much (`mad.s32` lacks one of `.hi .lo` for `mad.mode.type`
    /// and `.wide` for `mad.wide.type`: both are offered), or the opcode's
    /// forms when none is near.
    fn no_form_hint(&self) -> String {
        let nearest = closest_forms(self.opcode, &self.mods);
        let Some(first) = nearest.first().filter(|c| c.extra.len() + c.missing.len() <= NEAREST_DISTANCE) else {
            let all: Vec<String> = self.opcode.forms().map(|f| format!("`{}`", f.syntax())).collect();
            let shown = all.iter().take(FORMS_SHOWN).cloned().collect::<Vec<_>>().join(", ");
            let more = if all.len() > FORMS_SHOWN { format!(" and {} more", all.len() - FORMS_SHOWN) } else { String::new() };
            return format!("; its forms are {shown}{more}");
        };
        // The forms that agree with the first on what does not belong differ
        // only in what is missing: offer every modifier that would complete one.
        let group: Vec<_> = nearest.iter().filter(|c| c.extra == first.extra).collect();
        let mut why = Vec::new();
        for k in &first.extra {
            why.push(format!("`{}` does not belong", self.mods[*k].text()));
        }
        for j in 0..first.missing.len() {
            let mut allowed: Vec<&str> = Vec::new();
            for c in &group {
                for m in c.form.slots()[c.missing[j]].allowed() {
                    if !allowed.contains(&m.text()) {
                        allowed.push(m.text());
                    }
                }
            }
            let shown = if allowed.len() > ALLOWED_SHOWN { format!("{} ...", allowed[..ALLOWED_SHOWN].join(" ")) } else { allowed.join(" ") };
            why.push(format!("a modifier from {{{shown}}} is missing"));
        }
        let forms: Vec<String> = group.iter().take(NEAREST_SHOWN).map(|c| format!("`{}`", c.form.syntax())).collect();
        let label = if group.len() > 1 { "nearest forms" } else { "nearest form" };
        let more = if group.len() > NEAREST_SHOWN { format!(" and {} more", group.len() - NEAREST_SHOWN) } else { String::new() };
        format!(": {} ({label}: {}{more})", why.join(", "), forms.join(", "))
    }
}

impl fmt::Display for FormMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.opcode.name();
        match self.reason {
            Mismatch::UnknownModifier(k) => {
                let m = self.mods.get(k).map_or("?", |m| m.text());
                write!(f, "`{m}` is not a modifier of `{op}`")
            }
            Mismatch::NoForm => write!(f, "`{}` fits no form of `{op}`{}", self.head(), self.no_form_hint()),
            Mismatch::OperandCount { form, min, max, found } => {
                let want = if min == max { format!("{min}") } else { format!("{min} to {max}") };
                write!(f, "`{}` takes {want} operands (`{}`), found {found}", self.head(), form.syntax())
            }
            Mismatch::OperandKind { form, index, expected } => {
                let what = match expected {
                    OperandKind::Address => "an address `[...]`",
                    OperandKind::List => "a parenthesized list `(...)`",
                    OperandKind::Value => "a register, vector or immediate",
                };
                write!(f, "operand {} of `{}` must be {what} (`{}`)", index + 1, self.head(), form.syntax())
            }
        }
    }
}

impl std::error::Error for FormMismatch {}

/// The modifier of `opcode` spelled most like `text` (`.gloabl` gives
/// `.global`), for "did you mean" hints; `None` when nothing is close.
pub fn similar_modifier(opcode: Opcode, text: &str) -> Option<Mod> {
    let mut best: Option<(usize, Mod)> = None;
    for form in opcode.forms() {
        for slot in form.slots() {
            for m in slot.allowed() {
                let d = edit_distance(text, m.text());
                if best.is_none_or(|(b, _)| d < b) {
                    best = Some((d, m));
                }
            }
        }
    }
    // Close enough: at most a third of the word differs (a transposition counts 2).
    best.filter(|(d, m)| *d > 0 && *d * 3 <= m.text().len().max(text.len())).map(|(_, m)| m)
}

/// Levenshtein distance over bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::match_form;

    #[test]
    fn mad_without_mode_names_the_missing_slot() {
        let mods = [Mod::from_text(".s32").unwrap()];
        let e = match_form(Opcode::MAD, &mods, &[]).unwrap_err();
        assert_eq!(e.reason, Mismatch::NoForm);
        let text = e.to_string();
        assert!(text.starts_with("`mad.s32` fits no form of `mad`: a modifier from {"), "{text}");
        for m in [".hi", ".lo", ".wide"] {
            assert!(text.contains(m), "{text}");
        }
        let err: &dyn std::error::Error = &e;
        assert_eq!(err.to_string(), text);
    }

    #[test]
    fn operand_count_and_kind_name_the_form() {
        use crate::isa::ParsedKind;
        let u32 = Mod::from_text(".u32").unwrap();
        let e = match_form(Opcode::MOV, &[u32], &[ParsedKind::Value; 3]).unwrap_err();
        assert_eq!(e.to_string(), "`mov.u32` takes 2 operands (`mov.type d, a`), found 3");
        let e = match_form(Opcode::ADD, &[u32], &[ParsedKind::Value, ParsedKind::Address, ParsedKind::Value]).unwrap_err();
        assert_eq!(e.to_string(), "operand 2 of `add.u32` must be a register, vector or immediate (`add.type d, a, b`)");
    }

    #[test]
    fn misspelled_modifiers_find_their_neighbour() {
        assert_eq!(similar_modifier(Opcode::LD, ".gloabl"), Some(Mod::from_text(".global").unwrap()));
        assert_eq!(similar_modifier(Opcode::ADD, ".u3"), Mod::from_text(".u32"));
        assert_eq!(similar_modifier(Opcode::ADD, ".nothinglikeit"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
