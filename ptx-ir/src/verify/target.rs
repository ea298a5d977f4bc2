//! Targets and versions: which PTX ISA versions and which architectures
//! (`sm_90a`, `compute_80`) exist, the version each architecture needs, the
//! target options, and whether a target meets an instruction's requirement.
//!
//! The reference is what ptxas accepts (12.9 and 13.5, whose newest PTX ISA
//! is 9.5), which is the manual's table (§11.1.2, `.target`) plus the
//! architectures it does not list yet, with one correction: ptxas accepts
//! `sm_70` from PTX ISA 5.1, the manual says 6.0. Every pair was checked by
//! running both ptxas on a module of that `.version` and `.target`.

use crate::ir::{Module, Version};

/// An architecture: its number, the PTX ISA version that introduced it, and
/// those of its arch-specific (`a`) and family (`f`) variants, if it has them.
struct Arch {
    number: u32,
    since: (u32, u32),
    a: Option<(u32, u32)>,
    f: Option<(u32, u32)>,
}

const fn arch(number: u32, since: (u32, u32)) -> Arch {
    Arch { number, since, a: None, f: None }
}

const fn arch_af(number: u32, since: (u32, u32), a: (u32, u32), f: (u32, u32)) -> Arch {
    Arch { number, since, a: Some(a), f: Some(f) }
}

/// Every architecture ptxas knows.
const ARCHS: &[Arch] = &[
    arch(10, (1, 0)),
    arch(11, (1, 0)),
    arch(12, (1, 2)),
    arch(13, (1, 2)),
    arch(20, (2, 0)),
    arch(21, (2, 0)),
    arch(30, (3, 0)),
    arch(32, (4, 0)),
    arch(35, (3, 1)),
    arch(37, (4, 1)),
    arch(50, (4, 0)),
    arch(52, (4, 1)),
    arch(53, (4, 2)),
    arch(60, (5, 0)),
    arch(61, (5, 0)),
    arch(62, (5, 0)),
    arch(70, (5, 1)),
    arch(72, (6, 1)),
    arch(75, (6, 3)),
    arch(80, (7, 0)),
    arch(82, (6, 2)),
    arch(86, (7, 1)),
    arch(87, (7, 4)),
    arch(88, (9, 0)),
    arch(89, (7, 8)),
    Arch { number: 90, since: (7, 8), a: Some((8, 0)), f: None },
    arch_af(100, (8, 6), (8, 6), (8, 8)),
    arch_af(101, (8, 6), (8, 6), (8, 8)),
    arch_af(103, (8, 8), (8, 8), (8, 8)),
    arch_af(107, (9, 4), (9, 4), (9, 4)),
    arch_af(110, (9, 0), (9, 0), (9, 0)),
    arch_af(120, (8, 7), (8, 7), (8, 8)),
    arch_af(121, (8, 8), (8, 8), (8, 8)),
];

/// The PTX ISA versions: each major version with its last minor version
/// (1.0-1.5, 2.0-2.3 ... 9.0-9.5).
const VERSIONS: &[(u32, u32)] = &[(1, 5), (2, 3), (3, 2), (4, 3), (5, 1), (6, 5), (7, 8), (8, 8), (9, 5)];

/// The version ptxas reads from `.version M.N`: it takes `M*10 + N`, so
/// `9.05` is 9.5 and `8.10` is 9.0.
pub fn read_version(v: Version) -> (u32, u32) {
    let n = v.major.saturating_mul(10).saturating_add(v.minor);
    (n / 10, n % 10)
}

/// Is this (read) version one that exists?
pub fn version_exists(v: (u32, u32)) -> bool {
    VERSIONS.iter().any(|&(major, last)| major == v.0 && v.1 <= last)
}

/// The versions that exist, for messages: `1.0-1.5, 2.0-2.3, ...`.
pub fn known_versions() -> String {
    VERSIONS.iter().map(|(m, last)| format!("{m}.0-{m}.{last}")).collect::<Vec<_>>().join(", ")
}

/// The architecture numbers that exist, for messages.
pub fn known_architectures() -> String {
    ARCHS.iter().map(|a| format!("sm_{}", a.number)).collect::<Vec<_>>().join(", ")
}

/// The platform options a `.target` list may hold besides the architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOption {
    TexmodeUnified,
    TexmodeIndependent,
    /// The module carries DWARF debug information (PTX ISA 3.0).
    Debug,
    /// `.f64` instructions run as `.f32` (only below sm_13).
    MapF64ToF32,
}

impl TargetOption {
    pub fn parse(s: &str) -> Option<TargetOption> {
        Some(match s {
            "texmode_unified" => TargetOption::TexmodeUnified,
            "texmode_independent" => TargetOption::TexmodeIndependent,
            "debug" => TargetOption::Debug,
            "map_f64_to_f32" => TargetOption::MapF64ToF32,
            _ => return None,
        })
    }

    /// The PTX ISA version that introduced the option, where ptxas checks it.
    pub fn introduced_in(self) -> Option<(u32, u32)> {
        match self {
            TargetOption::Debug => Some((3, 0)),
            // The manual says texture modes came with 1.5; ptxas accepts them in 1.4 files.
            _ => None,
        }
    }
}

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

    /// The PTX ISA version that introduced this target, or `None` for an
    /// architecture (or a suffix of one) that does not exist.
    pub fn introduced_in(&self) -> Option<(u32, u32)> {
        let arch = ARCHS.iter().find(|a| a.number == self.number)?;
        match self.suffix {
            None => Some(arch.since),
            Some('a') => arch.a,
            Some('f') => arch.f,
            _ => None,
        }
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

    #[test]
    fn architectures_and_versions() {
        let since = |s: &str| Target::parse(s).unwrap().introduced_in();
        assert_eq!(since("sm_70"), Some((5, 1)));
        assert_eq!(since("sm_100f"), Some((8, 8)));
        assert_eq!(since("compute_120a"), Some((8, 7)));
        assert_eq!(since("sm_110f"), Some((9, 0)));
        // No such architecture, or no such variant of it.
        assert_eq!(since("sm_200"), None);
        assert_eq!(since("sm_102"), None);
        assert_eq!(since("sm_80a"), None);
        assert_eq!(since("sm_90f"), None);
        assert!(version_exists((9, 5)) && version_exists((5, 1)) && version_exists((1, 0)));
        assert!(!version_exists((9, 6)) && !version_exists((99, 9)) && !version_exists((2, 4)) && !version_exists((0, 9)));
        // ptxas reads M.N as M*10+N.
        assert_eq!(read_version(Version { major: 8, minor: 10 }), (9, 0));
        assert_eq!(read_version(Version { major: 9, minor: 5 }), (9, 5));
        assert_eq!(read_version(Version { major: 7, minor: 80 }), (15, 0));
    }
}
