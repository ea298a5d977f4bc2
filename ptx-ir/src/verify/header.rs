//! The module header and `.target` directives: the `.version` exists, every
//! `.target` name is an architecture or option ptxas knows, every
//! architecture exists in the module's version, the options fit the target,
//! and `.address_size` exists in the version. Errors sit on the offending
//! token (the facts are in `target.rs`).

use super::target::{self, Target, TargetOption};
use super::Verifier;
use crate::ir::{Name, Version};
use crate::parse::HeaderSpans;
use crate::source::Span;

impl Verifier<'_> {
    /// `.version`, the first `.target` list and `.address_size`.
    pub(super) fn header(&mut self, written: Version, targets: &[Name], spans: &HeaderSpans) {
        let read = self.ctx.version;
        // ptxas: "Unsupported .version 99.9; current version is '9.5'".
        if !target::version_exists(read) {
            self.error(spans.version, format!("unknown PTX ISA version {}.{} (the versions are {})", written.major, written.minor, target::known_versions()));
            return;
        }
        if written.minor >= 10 {
            self.warning(spans.version, format!("`.version {}.{}` is read as {}.{} (the version number is major*10 + minor)", written.major, written.minor, read.0, read.1));
        }
        // ptxas: "Target architecture not defined at start of file".
        if let Some(first) = targets.first() {
            if Target::parse(first).is_none() && TargetOption::parse(first).is_some() {
                let at = spans.target_names.first().copied().unwrap_or(spans.target);
                self.error(at, format!("the `.target` list starts with the option `{first}`; its first name must be an architecture (sm_NN)"));
            }
        }
        self.target_list(targets, &spans.target_names, spans.target);
        // ptxas: "Feature '.address_size directive' requires PTX ISA .version 2.3 or later".
        if let Some(at) = spans.address_size {
            if read < (2, 3) {
                self.error(at, format!("`.address_size` requires PTX ISA version 2.3 or later, but the module is .version {}.{}", read.0, read.1));
            }
        }
    }

    /// The names of one `.target` directive; `directive` stands in for a
    /// name without a span.
    pub(super) fn target_list(&mut self, names: &[Name], spans: &[Span], directive: Span) {
        let version = self.ctx.version;
        let arch = names.iter().find_map(|n| Target::parse(n));
        let mut texmode: Option<&str> = None;
        for (k, name) in names.iter().enumerate() {
            let at = spans.get(k).copied().unwrap_or(directive);
            if let Some(option) = TargetOption::parse(name) {
                if let Some(need) = option.introduced_in().filter(|need| version < *need) {
                    self.error(at, format!("the target option `{name}` requires PTX ISA version {}.{} or later, but the module is .version {}.{}", need.0, need.1, version.0, version.1));
                }
                // ptxas: "Directive map_f64_to_f32 is not supported with SM 1.3 or higher".
                if option == TargetOption::MapF64ToF32 && arch.as_ref().is_some_and(|t| t.number >= 13) {
                    self.error(at, format!("`map_f64_to_f32` is only for targets below sm_13 (the module targets {})", arch.as_ref().unwrap().name));
                }
                // ptxas: "Conflicting .target option 'texmode_independent'".
                if matches!(option, TargetOption::TexmodeUnified | TargetOption::TexmodeIndependent) {
                    match texmode {
                        Some(other) if other != &**name => self.error(at, format!("the target option `{name}` conflicts with `{other}`")),
                        _ => texmode = Some(name),
                    }
                }
                continue;
            }
            // ptxas: "Unsupported .target 'sm_200'".
            let Some(t) = Target::parse(name).filter(|t| t.number >= 10) else {
                self.error(at, format!("unknown target `{name}` (expected sm_NN, sm_NNa, sm_NNf, compute_NN, texmode_unified, texmode_independent, debug or map_f64_to_f32)"));
                continue;
            };
            let Some(need) = t.introduced_in() else {
                let base = Target::parse(&format!("sm_{}", t.number)).and_then(|b| b.introduced_in());
                let why = match (base, t.suffix) {
                    (Some(_), Some(s)) => format!("sm_{} has no `{s}` variant", t.number),
                    _ => format!("no such architecture; the architectures are {}", target::known_architectures()),
                };
                self.error(at, format!("unknown target `{name}`: {why}"));
                continue;
            };
            // ptxas: "PTX .version 7.5 does not support .target sm_90".
            if version < need {
                self.error(at, format!(".target {} requires PTX ISA version {}.{} or later, but the module is .version {}.{}", t.name, need.0, need.1, version.0, version.1));
            }
        }
    }
}
