//! Test support for the integration suite: corpus discovery, the round-trip
//! check, instruction snippets, and ptxas/nvdisasm access.
pub mod corpus;
pub mod describe;
pub mod differential;
pub mod fuzz_checks;
pub mod gen;
pub mod ptxas;
pub mod roundtrip;
pub mod snippet;
pub mod spec;
