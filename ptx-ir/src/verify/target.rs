//! Targets (`sm_90a`, `compute_80`): their number and suffix, when each was
//! introduced, and whether one meets an instruction's requirement.

use crate::ir::Module;

/// The module's architecture target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// As written, with `compute_` read as `sm_` (`sm_90a`).
    pub name: String,
    pub number: u32,
    /// `a` (arch-specific), `f` (family) or nothing.
    pub suffix: Option<char>,
}

impl Target {
    /// The first architecture of the module's first `.target` line.
    pub fn of_module(m: &Module) -> Option<Target> {
        m.target.iter().find_map(|t| Target::parse(t))
    }

    pub fn parse(s: &str) -> Option<Target> {
        let rest = s.strip_prefix("sm_").or_else(|| s.strip_prefix("compute_"))?;
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let number = digits.parse().ok()?;
        let suffix = match &rest[digits.len()..] {
            "" => None,
            "a" => Some('a'),
            "f" => Some('f'),
            _ => return None,
        };
        Some(Target { name: format!("sm_{rest}"), number, suffix })
    }

    /// The PTX ISA version that introduced this target (manual §11.1.2), if known.
    pub fn introduced_in(&self) -> Option<(u32, u32)> {
        let base = match self.number {
            10 | 11 => (1, 0),
            12 | 13 => (1, 2),
            20 => (2, 0),
            30 => (3, 0),
            35 => (3, 1),
            32 | 50 => (4, 0),
            37 | 52 => (4, 1),
            53 => (4, 2),
            60..=62 => (5, 0),
            70 => (6, 0),
            72 => (6, 1),
            75 => (6, 3),
            80 => (7, 0),
            86 => (7, 1),
            87 => (7, 4),
            89 | 90 => (7, 8),
            100 | 101 => (8, 6),
            120 => (8, 7),
            _ => return None,
        };
        Some(match self.suffix {
            Some('a') if self.number == 90 => (8, 0),
            // Family targets arrived with PTX ISA 8.8.
            Some('f') => (8, 8),
            _ => base,
        })
    }

    /// Does this target meet a requirement: `sm_NN` or newer, or one of the
    /// listed arch-specific targets (an `a` target also has its `f` family's
    /// features)? No requirement is always met.
    pub fn satisfies(&self, min_sm: Option<u32>, exact: &[&str]) -> bool {
        if min_sm.is_none() && exact.is_empty() {
            return true;
        }
        if min_sm.is_some_and(|m| self.number >= m) {
            return true;
        }
        exact.iter().any(|e| {
            *e == self.name || (self.suffix == Some('a') && e.strip_suffix('f').is_some_and(|b| self.name.strip_suffix('a') == Some(b)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("sm_90a").unwrap();
        assert_eq!((t.number, t.suffix), (90, Some('a')));
        assert!(t.satisfies(Some(80), &[]));
        assert!(t.satisfies(None, &["sm_90a"]));
        assert!(!Target::parse("sm_90").unwrap().satisfies(None, &["sm_90a"]));
        assert!(Target::parse("sm_100a").unwrap().satisfies(None, &["sm_100f"]));
        assert_eq!(Target::parse("compute_80").unwrap().name, "sm_80");
        assert_eq!(Target::parse("sm_90a").unwrap().introduced_in(), Some((8, 0)));
        assert!(Target::parse("texmode_unified").is_none());
    }
}
