//! `tools/results` turns sass-report JSON into the README's results table
//! and an SVG chart: checked on a small report written here.

use ptx_tests::corpus::repo_root;
use std::process::Command;

const REPORT: &str = r#"{
  "kernels": [
    {"file": "a.ptx", "kernel": "k1", "producer": "llvm", "sass_before": 100, "sass_after": 50, "weighted_before": 100, "weighted_after": 50, "registers_before": 10, "registers_after": 8, "sass_ratio": 0.5},
    {"file": "a.ptx", "kernel": "k2", "producer": "llvm", "sass_before": 40, "sass_after": 44, "weighted_before": 40, "weighted_after": 44, "registers_before": 10, "registers_after": 12, "sass_ratio": 1.1},
    {"file": "b.ptx", "kernel": "k3", "producer": "nvvm", "sass_before": 10, "sass_after": 10, "weighted_before": 10, "weighted_after": 10, "registers_before": 4, "registers_after": 4, "sass_ratio": 1.0}
  ],
  "producers": {
    "llvm": {"files": 1, "kernels": 2, "sass_before": 140, "sass_after": 94, "weighted_before": 140, "weighted_after": 94, "geomean_sass_ratio": 0.742, "optimizer_s": 0.1, "ptxas_o3_s": 2.0},
    "nvvm": {"files": 1, "kernels": 1, "sass_before": 10, "sass_after": 10, "weighted_before": 10, "weighted_after": 10, "geomean_sass_ratio": 1.0, "optimizer_s": 0.05, "ptxas_o3_s": 1.0}
  },
  "summary": {"files": 2, "files_compared": 2, "kernels": 3, "geomean_sass_ratio": 0.819, "sass_before": 150, "sass_after": 104,
              "weighted_before": 150, "weighted_after": 104, "worse_sass": 1, "worse_registers": 1, "better_sass": 1,
              "optimizer_s": 0.15, "ptxas_o3_s": 3.0, "failures": []}
}"#;

#[test]
fn results_rewrites_the_readme_section_and_the_chart() {
    let dir = std::env::temp_dir().join(format!("ptx-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("O2.json");
    let readme = dir.join("README.md");
    let svg = dir.join("results.svg");
    std::fs::write(&json, REPORT).unwrap();
    std::fs::write(&readme, "# x\n\n<!-- results:begin -->\nold\n<!-- results:end -->\n\nafter\n").unwrap();
    let out = Command::new("python3").arg(repo_root().join("tools/results")).arg(&json).arg("--readme").arg(&readme).arg("--svg").arg(&svg).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&readme).unwrap();
    assert!(!text.contains("old"), "{text}");
    assert!(text.contains("| llvm | 1 | 2 | 140 | 94 | 0.742 | 1 | 1 / 1 | 5.0 % |"), "{text}");
    assert!(text.contains("| **all** | 2 | 3 | 150 | 104 | 0.819 | 1 | 1 / 1 | 5.0 % |"), "{text}");
    assert!(text.ends_with("<!-- results:end -->\n\nafter\n"), "{text}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("llvm -O2: 140 -> 94"), "{chart}");
    // A README without the markers is refused, and left as it was.
    std::fs::write(&readme, "no section\n").unwrap();
    let out = Command::new("python3").arg(repo_root().join("tools/results")).arg(&json).arg("--readme").arg(&readme).arg("--svg").arg(&svg).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "no section\n");
    let _ = std::fs::remove_dir_all(&dir);
}
