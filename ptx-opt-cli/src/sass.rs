//! Assembling PTX with ptxas and counting the SASS, as `tools/sass-report`
//! counts it: the file's `.target` architecture (before sm_75: sm_75, the
//! oldest nvdisasm 13 reads and the 16-byte encoding counted here),
//! `-O3` except for `debug` targets (ptxas refuses it for them),
//! relocatable (`-c`) when ptxas asks for it (calls to `.extern`
//! functions, features it takes only with `--compile-only`), the newer ptxas when the first refuses the `.version`. A
//! function's instructions are the 16-byte words of its `.text.NAME`
//! section without the padding (NOPs after the final branch-to-self, and
//! that branch); its registers come from `ptxas -v`.

use crate::ptx_tools::Assemblers;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The oldest architecture assembled; older targets are assembled for it.
pub const SASS_ARCH_MIN: u32 = 75;

/// How a module is assembled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// `-arch=`.
    pub arch: String,
    /// The module's target was older than [`SASS_ARCH_MIN`].
    pub promoted: bool,
    /// `-O3` (not for `debug` targets).
    pub o3: bool,
}

impl Setup {
    /// From a module's `.target` list (`sm_80`, `debug`, ...).
    pub fn for_target(target: &[ptx_ir::ir::Name]) -> Setup {
        let arch = target.iter().find(|t| t.starts_with("sm_")).map_or("sm_52".to_string(), |t| t.to_string());
        let number: u32 = arch[3..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap_or(0);
        let promoted = number < SASS_ARCH_MIN;
        let arch = if promoted { format!("sm_{SASS_ARCH_MIN}") } else { arch };
        Setup { arch, promoted, o3: !target.iter().any(|t| &**t == "debug") }
    }

    /// `-arch=sm_80 -O3`, as shown to people.
    pub fn flags(&self) -> String {
        format!("-arch={}{}", self.arch, if self.o3 { " -O3" } else { "" })
    }
}

/// One function's SASS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionSass {
    pub instructions: usize,
    /// `None` when `ptxas -v` gave no line for it.
    pub registers: Option<u32>,
}

/// Runs ptxas on `ptx` (written to `dir/NAME.ptx`): the functions' SASS,
/// or ptxas's messages.
pub fn assemble(tools: &Assemblers, setup: &Setup, ptx: &str, dir: &Path, name: &str) -> Result<BTreeMap<String, FunctionSass>, String> {
    let source = dir.join(format!("{name}.ptx"));
    let cubin = dir.join(format!("{name}.cubin"));
    std::fs::write(&source, ptx).map_err(|e| format!("cannot write `{}`: {e}", source.display()))?;
    let mut log = String::new();
    for binary in std::iter::once(&tools.ptxas).chain(tools.ptxas13.as_ref()) {
        for relocatable in [false, true] {
            let mut cmd = Command::new(binary);
            cmd.arg(format!("-arch={}", setup.arch));
            if setup.o3 {
                cmd.arg("-O3");
            }
            cmd.arg("-v");
            if relocatable {
                cmd.arg("-c");
            }
            let out = cmd.arg("-o").arg(&cubin).arg(&source).output().map_err(|e| format!("cannot run `{}`: {e}", binary.display()))?;
            log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            if out.status.success() {
                let elf = std::fs::read(&cubin).map_err(|e| format!("cannot read `{}`: {e}", cubin.display()))?;
                let regs = registers(&log);
                return Ok(text_sections(&elf).into_iter().map(|(f, bytes)| {
                    let registers = regs.get(&f).copied();
                    (f, FunctionSass { instructions: instruction_count(bytes), registers })
                }).collect());
            }
            if !wants_relocatable(&log) {
                break;
            }
        }
        let version_trouble = ["Unsupported .version", "not a valid", "requires PTX ISA", "is not defined for option"];
        if !version_trouble.iter().any(|m| log.contains(m)) {
            break;
        }
    }
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("error") || l.contains("fatal")).take(8).collect();
    Err(if errors.is_empty() { log.trim().to_string() } else { errors.join("\n") })
}

/// Does ptxas's log ask for relocatable code (`-c`): calls to `.extern`
/// functions, or features it takes only with `--compile-only`?
fn wants_relocatable(log: &str) -> bool {
    let lower = log.to_lowercase();
    ["unresolved extern", "undefined reference", "--compile-only"].iter().any(|m| lower.contains(m))
}

/// `{function: registers}` from `ptxas -v`.
pub fn registers(log: &str) -> BTreeMap<String, u32> {
    let mut regs = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        let quoted = line.find("Compiling entry function '").map(|k| k + "Compiling entry function '".len()).or_else(|| line.find("Compiling function '").map(|k| k + "Compiling function '".len()));
        if let Some(start) = quoted {
            current = line[start..].split('\'').next().map(str::to_string);
            continue;
        }
        if let Some(k) = line.find("Function properties for ") {
            current = line[k + "Function properties for ".len()..].split_whitespace().next().map(str::to_string);
            continue;
        }
        if let (Some(k), Some(f)) = (line.find("Used "), &current) {
            if let Some(n) = leading_register_count(&line[k + 5..]) {
                regs.insert(f.clone(), n);
            }
        }
    }
    regs
}

/// `12 registers, ...` → 12.
fn leading_register_count(text: &str) -> Option<u32> {
    let (n, rest) = text.split_once(' ')?;
    rest.starts_with("registers").then(|| n.parse().ok()).flatten()
}

/// The `.text.NAME` sections of an ELF64 little-endian cubin (empty when
/// it is not one, or is cut short).
pub fn text_sections(elf: &[u8]) -> Vec<(String, &[u8])> {
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |o: usize| elf.get(o..o + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()) as usize);
    let u64_at = |o: usize| elf.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize);
    let sections = || -> Option<Vec<(String, &[u8])>> {
        if elf.get(..5)? != b"\x7fELF\x02" {
            return None;
        }
        let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28)?, u16_at(0x3A)?, u16_at(0x3C)?, u16_at(0x3E)?);
        let header = |k: usize| -> Option<(usize, usize, usize)> {
            let at = shoff.checked_add(k.checked_mul(shentsize)?)?;
            Some((u32_at(at)?, u64_at(at + 24)?, u64_at(at + 32)?))
        };
        let names_at = header(shstrndx)?.1;
        let mut out = Vec::new();
        for k in 0..shnum {
            let (name_off, offset, size) = header(k)?;
            let start = names_at.checked_add(name_off)?;
            let len = elf.get(start..)?.iter().position(|b| *b == 0)?;
            let name = String::from_utf8_lossy(&elf[start..start + len]);
            if let Some(f) = name.strip_prefix(".text.") {
                out.push((f.to_string(), elf.get(offset..offset.checked_add(size)?)?));
            }
        }
        Some(out)
    };
    sections().unwrap_or_default()
}

/// 16-byte instructions without the trailing NOPs and the final
/// unguarded branch (to itself) that pad a function.
pub fn instruction_count(text: &[u8]) -> usize {
    let mut words: Vec<u64> = text.chunks_exact(16).map(|c| u64::from_le_bytes(c[..8].try_into().unwrap_or_default())).collect();
    while words.last().is_some_and(|w| w & 0xFFF == 0x918) {
        words.pop();
    }
    if words.last().is_some_and(|w| w & 0xFFF == 0x947 && (w >> 12) & 0xF == 7) {
        words.pop();
    }
    words.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_before_sm_75_and_debug_targets() {
        let t = |s: &[&str]| Setup::for_target(&s.iter().map(|x| ptx_ir::ir::Name::from(*x)).collect::<Vec<_>>());
        assert_eq!(t(&["sm_80"]), Setup { arch: "sm_80".into(), promoted: false, o3: true });
        assert_eq!(t(&["sm_52"]), Setup { arch: "sm_75".into(), promoted: true, o3: true });
        assert_eq!(t(&["sm_90a", "debug"]), Setup { arch: "sm_90a".into(), promoted: false, o3: false });
        assert_eq!(t(&[]).arch, "sm_75");
    }

    #[test]
    fn relocatable_when_ptxas_asks() {
        assert!(wants_relocatable("ptxas error   : Feature 'unified Functions' requires command line option '--compile-only'."));
        assert!(wants_relocatable("ptxas fatal   : Unresolved extern function 'f'"));
        assert!(!wants_relocatable("ptxas error   : Arguments mismatch for instruction 'mov'"));
    }

    #[test]
    fn registers_per_function_from_the_verbose_log() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_80'\nptxas info    : Function properties for k\n    0 bytes stack frame\nptxas info    : Used 10 registers, 368 bytes cmem[0]\nptxas info    : Function properties for f\nptxas info    : Used 4 registers\n";
        let r = registers(log);
        assert_eq!((r.get("k"), r.get("f")), (Some(&10), Some(&4)));
    }

    #[test]
    fn padding_is_not_counted_and_bad_elf_is_empty() {
        let word = |lo: u64| {
            let mut w = lo.to_le_bytes().to_vec();
            w.extend([0u8; 8]);
            w
        };
        let text: Vec<u8> = [word(0x7a01), word(0x7947), word(0x918), word(0x918)].concat();
        assert_eq!(instruction_count(&text), 1);
        assert!(text_sections(b"\x7fELF\x02garbage").is_empty());
        assert!(text_sections(b"").is_empty());
    }
}
