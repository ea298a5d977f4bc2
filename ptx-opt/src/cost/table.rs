//! The text format of the SASS cost table (`sass_costs.tsv`): parsing it and
//! writing it. The generator (`cargo run -p ptx-tests --bin sass-costs`)
//! writes through [`Table::to_tsv`]; the cost model reads through
//! [`Table::parse`], so the two can never disagree on the format.
//!
//! ```text
//! # comment lines
//! head	sm_52	sm_70	sm_75	sm_80	sm_90	sm_100
//! div.u32	24	22	22/mul	22/mul	22/mul	22/mul
//! add.rn.bf16	-	-	-	2/alu	1/alu	1/alu
//! ```
//!
//! One line per instruction head, one column per target family (ascending
//! arch numbers). A cell is the number of SASS instructions the head costs,
//! then `/` and its [`LatencyClass`] where the SASS could be disassembled,
//! or `-` where ptxas rejects the instruction for that family.

use std::fmt::Write as _;

/// The slowest execution resource an instruction's SASS uses, from cheap to
/// expensive. Decided from the SASS opcodes the instruction adds to its
/// micro-kernel (see the table's README for the rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LatencyClass {
    /// No SASS at all (a move ptxas renames away, a no-op conversion).
    Free,
    /// Integer and single-precision ALU/FMA-pipe instructions (`IADD3`,
    /// `LOP3`, `SHF`, `PRMT`, `ISETP`, `SEL`, `FADD`, `FFMA`, `HADD2` ...).
    Alu,
    /// Integer multiplies (`IMAD`, `IMAD.WIDE`, `IMAD.HI`, `IMUL`, `IDP`),
    /// but not `IMAD.MOV`/`IMAD.SHL`/`IMAD.IADD`/`IMAD.X`, which ptxas uses as
    /// moves, shifts and additions.
    Mul,
    /// The conversion unit: `I2F`, `F2I`, `F2F`, `I2I`, `FRND`.
    Conv,
    /// The special-function unit: `MUFU` (reciprocal, square root, sine,
    /// exponent ...).
    Mufu,
    /// Double-precision arithmetic: `DADD`, `DMUL`, `DFMA`, `DSETP`, `DMNMX`.
    F64,
    /// A call to a subroutine ptxas adds (integer division, IEEE division and
    /// square root slow paths); the cell counts the subroutine's body too.
    Call,
}

impl LatencyClass {
    pub const ALL: [LatencyClass; 7] = [
        LatencyClass::Free,
        LatencyClass::Alu,
        LatencyClass::Mul,
        LatencyClass::Conv,
        LatencyClass::Mufu,
        LatencyClass::F64,
        LatencyClass::Call,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LatencyClass::Free => "free",
            LatencyClass::Alu => "alu",
            LatencyClass::Mul => "mul",
            LatencyClass::Conv => "conv",
            LatencyClass::Mufu => "mufu",
            LatencyClass::F64 => "f64",
            LatencyClass::Call => "call",
        }
    }

    pub fn from_name(s: &str) -> Option<LatencyClass> {
        LatencyClass::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// One measurement: an instruction head at one target family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// SASS instructions the head adds to a kernel (static count, called
    /// subroutines included).
    pub sass: u32,
    /// `None` where the SASS could not be disassembled (before sm_75).
    pub class: Option<LatencyClass>,
}

/// One line: a head and its cells, one per family (`None`: ptxas rejects it there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub head: String,
    pub cells: Vec<Option<Cell>>,
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Target families (`sm_52`, ...), ascending.
    pub families: Vec<String>,
    /// Rows sorted by head, heads unique.
    pub rows: Vec<Row>,
}

/// The arch number of a family or target name: `sm_86` -> 86, `sm_90a` -> 90, `compute_80` -> 80.
pub fn arch_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("sm_").or_else(|| name.strip_prefix("compute_"))?;
    let n: String = digits.chars().take_while(|c| c.is_ascii_digit()).collect();
    n.parse().ok()
}

impl Table {
    /// Parses the table; errors name the line (`line 12: ...`).
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut families: Option<Vec<String>> = None;
        let mut rows: Vec<Row> = Vec::new();
        for (k, line) in text.lines().enumerate() {
            let at = |m: String| format!("line {}: {m}", k + 1);
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let Some(fams) = &families else {
                if fields.first() != Some(&"head") || fields.len() < 2 {
                    return Err(at(format!("expected the column header `head<TAB>sm_NN...`, found `{line}`")));
                }
                let fams: Vec<String> = fields[1..].iter().map(|s| s.to_string()).collect();
                let numbers: Vec<Option<u32>> = fams.iter().map(|f| arch_number(f)).collect();
                if numbers.iter().any(Option::is_none) || numbers.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(at(format!("target families must be `sm_NN` in ascending order, found {fams:?}")));
                }
                families = Some(fams);
                continue;
            };
            if fields.len() != fams.len() + 1 {
                return Err(at(format!("expected {} fields, found {}", fams.len() + 1, fields.len())));
            }
            let head = fields[0];
            if head.is_empty() || head.contains(char::is_whitespace) {
                return Err(at(format!("bad instruction head `{head}`")));
            }
            if let Some(prev) = rows.last() {
                if prev.head.as_str() >= head {
                    return Err(at(format!("heads must be sorted and unique: `{head}` after `{}`", prev.head)));
                }
            }
            let cells = parse_cells(&fields[1..]).map_err(at)?;
            rows.push(Row { head: head.to_string(), cells });
        }
        let families = families.ok_or("no column header `head<TAB>sm_NN...`")?;
        Ok(Table { families, rows })
    }

    /// The table as text: `comments` (each line prefixed with `# `), the
    /// column header, then the rows (sorted by head).
    pub fn to_tsv(&self, comments: &[String]) -> String {
        let mut out = String::new();
        for c in comments {
            let _ = writeln!(out, "# {c}");
        }
        out.push_str("head");
        for f in &self.families {
            let _ = write!(out, "\t{f}");
        }
        out.push('\n');
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        rows.sort_by(|a, b| a.head.cmp(&b.head));
        for r in rows {
            out.push_str(&r.head);
            for c in &r.cells {
                out.push('\t');
                match c {
                    None => out.push('-'),
                    Some(Cell { sass, class: None }) => {
                        let _ = write!(out, "{sass}");
                    }
                    Some(Cell { sass, class: Some(cl) }) => {
                        let _ = write!(out, "{sass}/{}", cl.name());
                    }
                }
            }
            out.push('\n');
        }
        out
    }

    /// The column of a family, by name.
    pub fn family_index(&self, family: &str) -> Option<usize> {
        self.families.iter().position(|f| f == family)
    }

    /// The row of a head.
    pub fn row(&self, head: &str) -> Option<&Row> {
        self.rows.binary_search_by(|r| r.head.as_str().cmp(head)).ok().map(|k| &self.rows[k])
    }
}

/// The cells of one row (the fields after the head).
pub fn parse_cells(fields: &[&str]) -> Result<Vec<Option<Cell>>, String> {
    fields.iter().map(|f| parse_cell(f)).collect()
}

fn parse_cell(f: &str) -> Result<Option<Cell>, String> {
    if f == "-" {
        return Ok(None);
    }
    let (n, class) = match f.split_once('/') {
        Some((n, c)) => (n, Some(LatencyClass::from_name(c).ok_or_else(|| format!("unknown latency class `{c}`"))?)),
        None => (f, None),
    };
    let sass = n.parse::<u32>().map_err(|_| format!("bad cell `{f}`: expected N, N/class or -"))?;
    Ok(Some(Cell { sass, class }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "# a comment\nhead\tsm_52\tsm_80\nabs.s32\t2\t1/alu\ndiv.u64\t-\t70/call\n";

    #[test]
    fn round_trip() {
        let t = Table::parse(SMALL).unwrap();
        assert_eq!(t.families, ["sm_52", "sm_80"]);
        assert_eq!(t.rows[0].cells, [Some(Cell { sass: 2, class: None }), Some(Cell { sass: 1, class: Some(LatencyClass::Alu) })]);
        assert_eq!(t.rows[1].cells[0], None);
        assert_eq!(t.row("div.u64").unwrap().cells[1], Some(Cell { sass: 70, class: Some(LatencyClass::Call) }));
        assert_eq!(t.row("div.u32"), None);
        assert_eq!(t.to_tsv(&["a comment".into()]), SMALL);
    }

    #[test]
    fn errors_name_the_line() {
        let e = Table::parse("head\tsm_80\nadd.s32\t1/slow\n").unwrap_err();
        assert_eq!(e, "line 2: unknown latency class `slow`");
        let e = Table::parse("head\tsm_80\tsm_52\n").unwrap_err();
        assert!(e.starts_with("line 1: target families must be"), "{e}");
        let e = Table::parse("head\tsm_80\nb.s32\t1\na.s32\t1\n").unwrap_err();
        assert!(e.starts_with("line 3: heads must be sorted"), "{e}");
        let e = Table::parse("head\tsm_80\nadd.s32\t1\t2\n").unwrap_err();
        assert_eq!(e, "line 2: expected 2 fields, found 3");
        let e = Table::parse("head\tsm_80\nadd.s32\tx\n").unwrap_err();
        assert!(e.contains("bad cell `x`"), "{e}");
        assert!(Table::parse("# only comments\n").is_err());
    }

    #[test]
    fn arch_numbers() {
        assert_eq!(arch_number("sm_86"), Some(86));
        assert_eq!(arch_number("sm_90a"), Some(90));
        assert_eq!(arch_number("sm_100f"), Some(100));
        assert_eq!(arch_number("compute_80"), Some(80));
        assert_eq!(arch_number("texmode_unified"), None);
        assert_eq!(arch_number("sm_"), None);
    }
}
