//! Editing a function body in place: removing the statements a pass marked.

use ptx_ir::ir::Stmt;

/// Removes every statement `k` with `marked[k]`; says whether any went.
pub fn remove_marked(body: &mut Vec<Stmt>, marked: &[bool]) -> bool {
    if !marked.contains(&true) {
        return false;
    }
    let mut k = 0;
    body.retain(|_| {
        k += 1;
        !marked[k - 1]
    });
    true
}
