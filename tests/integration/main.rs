//! Workspace integration tests, one binary.

mod contract;
