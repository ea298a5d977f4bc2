//! Test support for the integration suite: corpus discovery, the round-trip
//! check, instruction snippets, ptxas/nvdisasm access, and the measurements
//! behind the SASS cost table.
pub mod corpus;
pub mod corpus_tensor_maps;
pub mod corpus_textures;
pub mod describe;
pub mod differential;
pub mod fuzz_checks;
pub mod gen;
pub mod ptxas;
pub mod roundtrip;
pub mod sass_costs;
pub mod sass_raw;
pub mod snippet;
pub mod spec;
